/**
 * ACL rules as Consul 1.8's `acl.Policy` holds them once parsed (`acl/policy.go`): three single-valued
 * resources (`acl`, `keyring`, `operator`) and seven resources keyed by a name segment, each with exact
 * rules (`key "a/b"`) and prefix rules (`key_prefix "a/"`). Parsing (HCL or JSON text) is in
 * rules_parse.ts; matching and merging are in authorizer.ts and merge.ts.
 */

/** What a rule grants. `list` exists only for `key` and `key_prefix`. */
export type AccessLevel = "read" | "list" | "write" | "deny";

/** Resources keyed by a segment: a node name, a service name, a KV path... (`session` is keyed by node). */
export type SegmentResource = "agent" | "event" | "key" | "node" | "query" | "service" | "session";

/** Resources with one value: `acl = "read"`. */
export type ScalarResource = "acl" | "keyring" | "operator";

export const SEGMENT_RESOURCES: readonly SegmentResource[] = ["agent", "event", "key", "node", "query", "service", "session"];
export const SCALAR_RESOURCES: readonly ScalarResource[] = ["acl", "keyring", "operator"];

/** One rule for one segment. `intentions` is set only on service rules that name it. */
export interface SegmentRule {
  readonly policy: AccessLevel;
  readonly intentions?: AccessLevel;
}

/** Rules of one segment resource: exact segments and prefixes, each at most once (later merges win by precedence). */
export interface SegmentRules {
  readonly exact: ReadonlyMap<string, SegmentRule>;
  readonly prefix: ReadonlyMap<string, SegmentRule>;
}

/** A parsed policy: what `service "web" { policy = "write" }` and friends say, validated. */
export interface ParsedRules {
  readonly scalars: Readonly<Partial<Record<ScalarResource, AccessLevel>>>;
  readonly segments: Readonly<Record<SegmentResource, SegmentRules>>;
}

/** Rules with nothing in them. */
export function emptyRules(): ParsedRules {
  const segments = {} as Record<SegmentResource, SegmentRules>;
  for (const r of SEGMENT_RESOURCES) segments[r] = { exact: new Map(), prefix: new Map() };
  return { scalars: {}, segments };
}

/**
 * The order in which two levels win when several policies (or several rules of one policy) name the same
 * segment (`acl/policy_merger.go takesPrecedenceOver`): deny > write > list > read.
 */
export function strongerLevel(a: AccessLevel | undefined, b: AccessLevel | undefined): AccessLevel | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return LEVEL_RANK[a] >= LEVEL_RANK[b] ? a : b;
}

const LEVEL_RANK: Readonly<Record<AccessLevel, number>> = { read: 1, list: 2, write: 3, deny: 4 };

/** The intention level a service rule gives: its own `intentions`, else read for read/write and deny otherwise (policy.go). */
export function intentionLevel(rule: SegmentRule): AccessLevel {
  if (rule.intentions !== undefined) return rule.intentions;
  return rule.policy === "read" || rule.policy === "write" ? "read" : "deny";
}
