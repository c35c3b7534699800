/**
 * From a token to its authorizer (Consul 1.8 `agent/consul/acl.go`): the token's policies, its roles'
 * policies, and the policies synthesized from every service and node identity (the token's and its
 * roles'), de-duplicated and filtered by each policy's `Datacenters`, merged into one set of rules; then
 * the chain: those rules, then `default_policy`. Policies are parsed once per ID and ModifyIndex.
 *
 * A legacy token (one with a legacy `Type`) also holds its embedded policy (ACLToken.EmbeddedPolicy):
 * "management" the global-management rules (its Rules ignored), "client" its Rules in the legacy
 * syntax (no Rules: a policy granting nothing).
 */
import { GLOBAL_MANAGEMENT_RULES, type AclPolicy, type AclRole, type AclTokenRecord } from "../model/index.ts";
import { chainAuthorizers, policyAuthorizer, staticAuthorizer, type Authorizer } from "./authorizer.ts";
import { nodeIdentityRules, serviceIdentityRules } from "./builtin.ts";
import { mergeRules } from "./merge.ts";
import type { ParsedRules } from "./rules.ts";
import { parseRules } from "./rules_parse.ts";

/** Where a resolver finds the objects a token links to (the state store, or a cache of the primary's). */
export interface AclObjects {
  policy(id: string): AclPolicy | undefined;
  role(id: string): AclRole | undefined;
}

/** Parsed policies by ID, re-parsed when the policy's ModifyIndex changes; at most `capacity` kept (oldest dropped). */
export class ParsedPolicyCache {
  private readonly entries = new Map<string, { readonly modifyIndex: number; readonly rules: ParsedRules }>();
  private readonly legacyEntries = new Map<string, ParsedRules>();
  private management: ParsedRules | undefined;

  constructor(private readonly capacity = 512) {}

  get(policy: AclPolicy): ParsedRules {
    const hit = this.entries.get(policy.ID);
    if (hit && hit.modifyIndex === policy.ModifyIndex) return hit.rules;
    // A stored policy was validated when written, so it parses; should it not, it grants nothing.
    let rules: ParsedRules;
    try {
      rules = parseRules(policy.Rules);
    } catch {
      rules = parseRules("");
    }
    this.entries.delete(policy.ID);
    this.entries.set(policy.ID, { modifyIndex: policy.ModifyIndex, rules });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return rules;
  }

  /** The global-management rules, parsed once. */
  legacyManagement(): ParsedRules {
    return (this.management ??= parseRules(GLOBAL_MANAGEMENT_RULES));
  }

  /** Legacy rules text parsed in the legacy syntax, by text; unreadable rules (validated when written) grant nothing. */
  legacy(text: string): ParsedRules {
    const hit = this.legacyEntries.get(text);
    if (hit) return hit;
    let rules: ParsedRules;
    try {
      rules = parseRules(text, "legacy");
    } catch {
      rules = parseRules("");
    }
    this.legacyEntries.set(text, rules);
    if (this.legacyEntries.size > this.capacity) this.legacyEntries.delete(this.legacyEntries.keys().next().value!);
    return rules;
  }
}

/** The embedded policy of a legacy token (ACLToken.EmbeddedPolicy), or undefined for a token of the current API. */
export function embeddedRules(token: AclTokenRecord, cache: ParsedPolicyCache): ParsedRules | undefined {
  if (token.Type === "management") return cache.legacyManagement();
  if (token.Rules || token.Type === "client") return cache.legacy(token.Rules ?? "");
  return undefined;
}

/** The rules a token holds in `datacenter` (one entry per policy or identity; merge them with mergeRules). */
export function tokenRules(token: AclTokenRecord, objects: AclObjects, datacenter: string, cache: ParsedPolicyCache): ParsedRules[] {
  const roles = (token.Roles ?? []).map((l) => objects.role(l.ID)).filter((r): r is AclRole => r !== undefined);
  const policyIds = new Set<string>();
  for (const l of token.Policies ?? []) policyIds.add(l.ID);
  for (const r of roles) for (const l of r.Policies ?? []) policyIds.add(l.ID);
  const out: ParsedRules[] = [];
  for (const id of policyIds) {
    const p = objects.policy(id);
    if (!p) continue; // a link to a deleted policy grants nothing
    if (p.Datacenters && p.Datacenters.length > 0 && !p.Datacenters.includes(datacenter)) continue;
    out.push(cache.get(p));
  }
  const services = new Set<string>();
  const nodes = new Set<string>();
  for (const holder of [token, ...roles]) {
    for (const s of holder.ServiceIdentities ?? []) {
      if (s.Datacenters && s.Datacenters.length > 0 && !s.Datacenters.includes(datacenter)) continue;
      services.add(s.ServiceName);
    }
    for (const n of holder.NodeIdentities ?? []) if (n.Datacenter === datacenter) nodes.add(n.NodeName);
  }
  for (const s of services) out.push(serviceIdentityRules(s));
  for (const n of nodes) out.push(nodeIdentityRules(n));
  const embedded = embeddedRules(token, cache);
  if (embedded) out.push(embedded);
  return out;
}

/** The authorizer of `token`: its merged rules, then `default_policy` ("allow": all but the ACL API and snapshots). */
export function tokenAuthorizer(
  token: AclTokenRecord, objects: AclObjects, o: { readonly datacenter: string; readonly defaultPolicy: "allow" | "deny"; readonly cache: ParsedPolicyCache },
): Authorizer {
  const rules = tokenRules(token, objects, o.datacenter, o.cache);
  const chain = rules.length > 0 ? [policyAuthorizer(mergeRules(rules))] : [];
  return chainAuthorizers([...chain, staticAuthorizer(o.defaultPolicy)]);
}
