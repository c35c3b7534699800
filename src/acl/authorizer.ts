/**
 * Authorizers (Consul 1.8 `acl/authorizer.go`, `acl/policy_authorizer.go`, `acl/static_authorizer.go`,
 * `acl/chained_authorizer.go`): a decision for a resource, an access and (for keyed resources) a
 * segment. A policy authorizer answers from its rules and says "default" where no rule applies; a
 * chain asks its authorizers in order and takes the first decision that is not "default", and denies
 * when all defer. The static authorizers end chains: allow-all (everything but the ACL API and
 * snapshots), deny-all, manage-all.
 *
 * Matching (`getPolicy`): an exact rule for the whole segment wins; otherwise the longest prefix rule
 * (`""` matches everything); otherwise "default". Levels (`enforce`): write grants read, list and write;
 * list grants read and list; read grants read; deny denies. A rule that does not grant the access
 * denies: it does not defer to the next authorizer.
 */
import { intentionLevel, SCALAR_RESOURCES, type AccessLevel, type ParsedRules, type ScalarResource, type SegmentResource, type SegmentRule } from "./rules.ts";

export type Decision = "allow" | "deny" | "default";

/** What can be asked: the rules' resources, plus `intention` (derived from service rules). */
export type AclResource = ScalarResource | SegmentResource | "intention";

/** The access asked for; `list` is meaningful for `key` only. */
export type AclAccess = "read" | "list" | "write";

export interface Authorizer {
  /** The decision for `access` to `resource` (at `segment`, for keyed resources; ignored for scalars). */
  check(resource: AclResource, access: AclAccess, segment?: string): Decision;
  /**
   * Write to every key under `prefix` (a recursive KV delete): allowed when the longest prefix rule
   * covering `prefix` grants write and no rule under `prefix` grants less; denied when either fails;
   * "default" when no prefix rule covers it and none under it denies.
   */
  keyWritePrefix(prefix: string): Decision;
  /** Whether intentions allow by default when none matches (`default_policy`); policies defer. */
  intentionDefaultAllow(): Decision;
  /** `GET`/`PUT /v1/snapshot`: `acl = "write"`. */
  snapshot(): Decision;
}

/** `enforce`: what a rule at `level` decides for `access` (no rule: "default"). */
export function enforce(level: AccessLevel | undefined, access: AclAccess): Decision {
  switch (level) {
    case undefined:
      return "default";
    case "write":
      return "allow";
    case "list":
      return access === "write" ? "deny" : "allow";
    case "read":
      return access === "read" ? "allow" : "deny";
    case "deny":
      return "deny";
  }
}

/** One resource's rules, ready for lookups: exact by segment, prefixes longest first. */
interface RuleIndex {
  readonly exact: ReadonlyMap<string, AccessLevel>;
  readonly prefixes: readonly (readonly [string, AccessLevel])[];
}

function index(exact: Iterable<[string, AccessLevel]>, prefix: Iterable<[string, AccessLevel]>): RuleIndex {
  return { exact: new Map(exact), prefixes: [...prefix].sort((a, b) => b[0].length - a[0].length) };
}

function lookup(idx: RuleIndex, segment: string): AccessLevel | undefined {
  const exact = idx.exact.get(segment);
  if (exact !== undefined) return exact;
  for (const [p, level] of idx.prefixes) if (segment.startsWith(p)) return level;
  return undefined;
}

const mapValues = (m: ReadonlyMap<string, SegmentRule>, f: (r: SegmentRule) => AccessLevel): [string, AccessLevel][] =>
  [...m].map(([k, r]) => [k, f(r)]);

/** An authorizer over one (merged) set of rules. */
export function policyAuthorizer(rules: ParsedRules): Authorizer {
  const segments = new Map<AclResource, RuleIndex>();
  for (const [resource, r] of Object.entries(rules.segments) as [SegmentResource, ParsedRules["segments"][SegmentResource]][]) {
    segments.set(resource, index(mapValues(r.exact, (x) => x.policy), mapValues(r.prefix, (x) => x.policy)));
  }
  const svc = rules.segments.service;
  segments.set("intention", index(mapValues(svc.exact, intentionLevel), mapValues(svc.prefix, intentionLevel)));
  const keys = rules.segments.key;
  return {
    check(resource, access, segment = "") {
      if ((SCALAR_RESOURCES as readonly string[]).includes(resource)) return enforce(rules.scalars[resource as ScalarResource], access);
      return enforce(lookup(segments.get(resource)!, segment), access);
    },
    keyWritePrefix(prefix) {
      // The longest prefix rule covering `prefix` (exact rules do not cover a prefix).
      let covering: Decision = "default";
      let longest = -1;
      for (const [p, r] of keys.prefix) {
        if (prefix.startsWith(p) && p.length > longest) {
          longest = p.length;
          covering = r.policy === "write" ? "allow" : "deny";
        }
      }
      if (covering === "deny") return "deny";
      for (const m of [keys.prefix, keys.exact]) {
        for (const [p, r] of m) if (p.startsWith(prefix) && r.policy !== "write") return "deny";
      }
      return covering;
    },
    intentionDefaultAllow: () => "default",
    snapshot: () => enforce(rules.scalars.acl, "write"),
  };
}

/** The authorizers that end a chain: Consul's AllowAll (not the ACL API, not snapshots), DenyAll, ManageAll. */
export function staticAuthorizer(kind: "allow" | "deny" | "manage"): Authorizer {
  const all: Decision = kind === "deny" ? "deny" : "allow";
  const manage: Decision = kind === "manage" ? "allow" : "deny";
  return {
    check: (resource) => (resource === "acl" ? manage : all),
    keyWritePrefix: () => all,
    intentionDefaultAllow: () => all,
    snapshot: () => manage,
  };
}

/** Asks `chain` in order; the first decision that is not "default" wins; all deferring denies. */
export function chainAuthorizers(chain: readonly Authorizer[]): Authorizer {
  const first = (ask: (a: Authorizer) => Decision): Decision => {
    for (const a of chain) {
      const d = ask(a);
      if (d !== "default") return d;
    }
    return "deny";
  };
  return {
    check: (resource, access, segment) => first((a) => a.check(resource, access, segment)),
    keyWritePrefix: (prefix) => first((a) => a.keyWritePrefix(prefix)),
    intentionDefaultAllow: () => first((a) => a.intentionDefaultAllow()),
    snapshot: () => first((a) => a.snapshot()),
  };
}
