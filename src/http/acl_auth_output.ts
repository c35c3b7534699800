/**
 * Auth methods and binding rules in Consul 1.8's JSON (agent/structs/acl.go ACLAuthMethod,
 * ACLAuthMethodListStub, ACLBindingRule field order). DisplayName, MaxTokenTTL (a Go duration string,
 * as ACLAuthMethod.MarshalJSON writes it) and TokenLocality are omitempty; Config is null when the
 * method has none. List stubs are the method without Config.
 */
import type { AclAuthMethod, AclBindingRule } from "../model/index.ts";

export function authMethodJson(m: AclAuthMethod): Record<string, unknown> {
  return {
    Name: m.Name,
    Type: m.Type,
    ...(m.DisplayName ? { DisplayName: m.DisplayName } : {}),
    Description: m.Description,
    ...(m.MaxTokenTTL ? { MaxTokenTTL: m.MaxTokenTTL } : {}),
    ...(m.TokenLocality ? { TokenLocality: m.TokenLocality } : {}),
    Config: m.Config ?? null,
    CreateIndex: m.CreateIndex,
    ModifyIndex: m.ModifyIndex,
  };
}

export function authMethodStubJson(m: AclAuthMethod): Record<string, unknown> {
  const { Config: _c, ...rest } = authMethodJson(m);
  return rest;
}

export function bindingRuleJson(r: AclBindingRule): Record<string, unknown> {
  return {
    ID: r.ID, Description: r.Description, AuthMethod: r.AuthMethod, Selector: r.Selector, BindType: r.BindType, BindName: r.BindName,
    CreateIndex: r.CreateIndex, ModifyIndex: r.ModifyIndex,
  };
}
