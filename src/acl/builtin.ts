/**
 * Consul 1.8's built-in ACL objects and the policies it synthesizes (`agent/structs/acl.go`,
 * `agent/structs/acl_oss.go`): the global-management policy, the anonymous token, the reserved ID
 * prefix and root names, and the rules of service and node identities.
 */
import { emptyRules, type ParsedRules, type SegmentResource, type SegmentRule } from "./rules.ts";

export {
  ANONYMOUS_TOKEN_ACCESSOR_ID, ANONYMOUS_TOKEN_DESCRIPTION, ANONYMOUS_TOKEN_SECRET, GLOBAL_MANAGEMENT_POLICY_DESCRIPTION, GLOBAL_MANAGEMENT_POLICY_ID,
  GLOBAL_MANAGEMENT_POLICY_NAME, GLOBAL_MANAGEMENT_RULES,
} from "../model/index.ts";

/** IDs starting with this are Consul's own; user-supplied Accessor or Secret IDs with it are refused. */
export const RESERVED_ID_PREFIX = "00000000-0000-0000-0000-0000000000";

/** Names that are never tokens: resolving one is `Cannot resolve root ACL` (500). */
export const ROOT_TOKEN_NAMES: ReadonlySet<string> = new Set(["allow", "deny", "manage"]);

function withRules(entries: readonly [SegmentResource, "exact" | "prefix", string, SegmentRule][]): ParsedRules {
  const rules = emptyRules();
  for (const [resource, kind, segment, rule] of entries) (rules.segments[resource][kind] as Map<string, SegmentRule>).set(segment, rule);
  return rules;
}

/**
 * A service identity's synthesized policy: write on the service and its sidecar proxy, read on every
 * service and node (to discover upstreams).
 */
export function serviceIdentityRules(service: string): ParsedRules {
  return withRules([
    ["service", "exact", service, { policy: "write" }],
    ["service", "exact", `${service}-sidecar-proxy`, { policy: "write" }],
    ["service", "prefix", "", { policy: "read" }],
    ["node", "prefix", "", { policy: "read" }],
  ]);
}

/** A node identity's synthesized policy (1.8.1): write on the node, read on every service. */
export function nodeIdentityRules(node: string): ParsedRules {
  return withRules([
    ["node", "exact", node, { policy: "write" }],
    ["service", "prefix", "", { policy: "read" }],
  ]);
}

/**
 * The fixed policy of `tokens.agent_master`, used on this agent only (agent/acl.go): write on this
 * agent, read on every node, on top of deny-all.
 */
export function agentMasterRules(node: string): ParsedRules {
  return withRules([
    ["agent", "exact", node, { policy: "write" }],
    ["node", "prefix", "", { policy: "read" }],
  ]);
}
