/**
 * ACL auth methods and binding rules over HTTP (Consul 1.8 agent/acl_endpoint.go ACLAuthMethod* and
 * ACLBindingRule*): create, read, update, delete, list. Reads need acl:read, writes acl:write (checked
 * by the servers, src/acl). A missing method or rule reads as 404 with an empty body; deleting a
 * missing one answers true. Deleting a method deletes its binding rules and the tokens it made (the
 * state store does it in the same command). Writes go through src/acl's builders (requests_auth.ts);
 * their refusals are 400 with Consul's text, and bad input writes nothing. Login and logout are in
 * acl_login.ts and mounted from here. With ACLs off the /v1/acl/* guard of acl.ts answers 401.
 */
import type { Context, Hono } from "hono";
import { buildAuthMethodWrite, buildBindingRuleWrite, type AuthMethodInput, type BindingRuleInput } from "../acl/index.ts";
import { compileFilter, list, struct as bexprStruct, type Schema } from "../connect/index.ts";
import { map, parseGoDuration, struct, type GoType, type JsonValue } from "../lib/index.ts";
import type { AclAuthMethod } from "../model/index.ts";
import { builderRefusal, decodeAclBody, readOnce, writeAcl } from "./acl.ts";
import { authMethodJson, authMethodStubJson, bindingRuleJson } from "./acl_auth_output.ts";
import { mountAclLogin } from "./acl_login.ts";
import type { HttpApiDeps } from "./deps.ts";
import { messageOf, serveRead } from "./read_route.ts";
import { query } from "./request.ts";
import { jsonResponse, textError } from "./respond.ts";

/** time.Duration, or a Go duration string (ACLAuthMethod.UnmarshalJSON); nanoseconds. */
const DURATION: GoType = { custom: { goName: "time.Duration", decode: (v: JsonValue) => (typeof v === "string" ? parseGoDuration(v) : typeof v === "number" ? Math.trunc(v) : undefined) } };
/** The raft indexes a client may send back with an object it read; ignored. */
const RAFT_INDEX = { CreateIndex: "uint64", ModifyIndex: "uint64" } as const;
const AUTH_METHOD_BODY = struct("structs.ACLAuthMethod", {
  Name: "string", Type: "string", DisplayName: "string", Description: "string", MaxTokenTTL: DURATION, TokenLocality: "string", Config: map("any"), ...RAFT_INDEX,
}).struct;
const BINDING_RULE_BODY = struct("structs.ACLBindingRule", {
  ID: "string", Description: "string", AuthMethod: "string", Selector: "string", BindType: "string", BindName: "string", ...RAFT_INDEX,
}).struct;

type AuthMethodBody = Omit<AuthMethodInput, "MaxTokenTTLNs"> & { MaxTokenTTL?: number };

/**
 * The selectable fields of a method's verified identity (Consul's blank identity SelectableFields):
 * kubernetes' `serviceaccount.{namespace,name,uid}`; for jwt, `value.<x>` for each ClaimMappings
 * target and `list.<x>` for each ListClaimMappings target.
 */
export function selectorSchema(method: Pick<AclAuthMethod, "Type" | "Config">): Schema {
  if (method.Type === "kubernetes") return { serviceaccount: bexprStruct({ namespace: "string", name: "string", uid: "string" }) };
  const targets = (k: string) => Object.values((method.Config?.[k] ?? {}) as Record<string, unknown>).filter((v): v is string => typeof v === "string");
  return {
    value: bexprStruct(Object.fromEntries(targets("ClaimMappings").map((t) => [t, "string" as const]))),
    list: bexprStruct(Object.fromEntries(targets("ListClaimMappings").map((t) => [t, list("string")]))),
  };
}

/** The selector's compile error against the method's fields, or undefined when it compiles. */
function checkSelector(method: AclAuthMethod, selector: string): string | undefined {
  try {
    compileFilter(selector, selectorSchema(method));
    return undefined;
  } catch (err) {
    return messageOf(err);
  }
}

/** Every auth method, through the write context (a read that needs acl:write); consistent after a write. */
async function methodsForWrite(c: Context, deps: HttpApiDeps, consistent: boolean): Promise<readonly AclAuthMethod[] | Response> {
  const ctx = await readOnce(c, deps, { type: "acl-write-context", ids: [] }, consistent);
  return ctx instanceof Response ? ctx : ctx.authMethods;
}

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Create (no `urlName`) or update an auth method. */
async function writeAuthMethod(c: Context, deps: HttpApiDeps, urlName: string | undefined): Promise<Response> {
  const body = await decodeAclBody<AuthMethodBody>(c, "AuthMethod", AUTH_METHOD_BODY);
  if (body instanceof Response) return body;
  if (urlName !== undefined && body.Name && body.Name !== urlName) return textError(c, 400, "AuthMethod Name in URL and payload do not match");
  const { MaxTokenTTL, ...rest } = body;
  const input: AuthMethodInput = { ...rest, ...(urlName !== undefined && !body.Name ? { Name: urlName } : {}), ...(MaxTokenTTL ? { MaxTokenTTLNs: MaxTokenTTL } : {}) };
  const methods = await methodsForWrite(c, deps, false);
  if (methods instanceof Response) return methods;
  let method;
  try {
    method = buildAuthMethodWrite(input, {
      existing: methods.find((m) => sameName(m.Name, input.Name ?? "")), inPrimaryDatacenter: deps.agent.datacenter === deps.agent.primaryDatacenter,
    });
  } catch (err) {
    return builderRefusal(c, err);
  }
  const refused = await writeAcl(c, deps, { type: "acl-auth-method", op: "set", method });
  if (refused) return refused;
  const after = await methodsForWrite(c, deps, true);
  if (after instanceof Response) return after;
  const stored = after.find((m) => sameName(m.Name, method.Name));
  return stored ? jsonResponse(c, authMethodJson(stored)) : textError(c, 500, "the auth method was not stored");
}

/** Create (no `urlId`) or update a binding rule. */
async function writeBindingRule(c: Context, deps: HttpApiDeps, urlId: string): Promise<Response> {
  const body = await decodeAclBody<BindingRuleInput>(c, "BindingRule", BINDING_RULE_BODY);
  if (body instanceof Response) return body;
  if (body.ID && body.ID !== urlId) return textError(c, 400, "BindingRule ID in URL and payload do not match");
  const input: BindingRuleInput = { ...body, ID: urlId };
  const methods = await methodsForWrite(c, deps, false);
  if (methods instanceof Response) return methods;
  const existing = urlId ? await readOnce(c, deps, { type: "binding-rule-get", id: urlId }) : null;
  if (existing instanceof Response) return existing;
  if (!deps.newId) return textError(c, 500, "this agent cannot generate IDs");
  let rule;
  try {
    rule = buildBindingRuleWrite(input, {
      existing: existing ?? undefined,
      authMethod: (n) => methods.find((m) => sameName(m.Name, n)),
      // Fresh IDs are random UUIDs (uuidFrom(rng)); a collision with a stored rule is not expected.
      ruleExists: () => false,
      newUuid: deps.newId,
      checkSelector,
    });
  } catch (err) {
    return builderRefusal(c, err);
  }
  const refused = await writeAcl(c, deps, { type: "acl-binding-rule", op: "set", rule });
  if (refused) return refused;
  const stored = await readOnce(c, deps, { type: "binding-rule-get", id: rule.ID }, true);
  if (stored instanceof Response) return stored;
  return stored ? jsonResponse(c, bindingRuleJson(stored)) : textError(c, 500, "the binding rule was not stored");
}

export function mountAclAuthMethods(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/acl/auth-method", (c) => writeAuthMethod(c, deps, undefined));
  app.get("/v1/acl/auth-methods", (c) => serveRead(c, deps, () => ({ type: "auth-method-list" }), (v) => jsonResponse(c, v.map(authMethodStubJson))));
  // ACLAuthMethodCRUD: an empty name is refused before any RPC (PUT to it is a create).
  app.on(["GET", "DELETE"], "/v1/acl/auth-method/", (c) => textError(c, 400, "Missing auth method name"));
  app.put("/v1/acl/auth-method/", (c) => writeAuthMethod(c, deps, undefined));
  app.get("/v1/acl/auth-method/:name", (c) =>
    serveRead(c, deps, () => ({ type: "auth-method-get", name: c.req.param("name") }), (m) => (m ? jsonResponse(c, authMethodJson(m)) : c.body(null, 404))));
  app.put("/v1/acl/auth-method/:name", (c) => writeAuthMethod(c, deps, c.req.param("name")));
  app.delete("/v1/acl/auth-method/:name", async (c) => (await writeAcl(c, deps, { type: "acl-auth-method", op: "delete", name: c.req.param("name") })) ?? jsonResponse(c, true));

  app.put("/v1/acl/binding-rule", (c) => writeBindingRule(c, deps, ""));
  app.get("/v1/acl/binding-rules", (c) =>
    serveRead(c, deps, () => ({ type: "binding-rule-list", ...(query(c, "authmethod") ? { authMethod: query(c, "authmethod") } : {}) }), (v) => jsonResponse(c, v.map(bindingRuleJson))));
  app.on(["GET", "DELETE"], "/v1/acl/binding-rule/", (c) => textError(c, 400, "Missing binding rule ID"));
  app.put("/v1/acl/binding-rule/", (c) => writeBindingRule(c, deps, ""));
  app.get("/v1/acl/binding-rule/:id", (c) =>
    serveRead(c, deps, () => ({ type: "binding-rule-get", id: c.req.param("id") }), (r) => (r ? jsonResponse(c, bindingRuleJson(r)) : c.body(null, 404))));
  app.put("/v1/acl/binding-rule/:id", (c) => writeBindingRule(c, deps, c.req.param("id")));
  app.delete("/v1/acl/binding-rule/:id", async (c) => (await writeAcl(c, deps, { type: "acl-binding-rule", op: "delete", id: c.req.param("id") })) ?? jsonResponse(c, true));

  mountAclLogin(app, deps);
}
