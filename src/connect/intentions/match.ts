/**
 * Matching and checking, as Consul 1.8 does them: agent/consul/state/intention.go IntentionMatch (with
 * intentionMatchGetParams) and agent/consul/intention_endpoint.go Check, plus the agent's
 * parseIntentionMatchEntry for the ?name= / ?source= / ?destination= query parameters.
 */
import { IntentionError } from "./errors.ts";
import { compareIntentions } from "./precedence.ts";
import {
  INTENTION_DEFAULT_NAMESPACE,
  INTENTION_WILDCARD,
  type Intention,
  type IntentionMatchEntry,
  type IntentionMatchQuery,
  type IntentionMatchType,
} from "./types.ts";

/**
 * The (namespace, name) pairs Consul looks up for one entry (intentionMatchGetParams): always "*"/"*";
 * then ns/"*" unless the namespace is "*"; then ns/name unless the name is "*" too. So an exact entry
 * finds exact, name-wildcard and full-wildcard intentions; a wildcard entry finds only wildcard ones.
 */
function lookupPairs(entry: IntentionMatchEntry): [string, string][] {
  const out: [string, string][] = [[INTENTION_WILDCARD, INTENTION_WILDCARD]];
  if (entry.namespace === INTENTION_WILDCARD) return out;
  out.push([entry.namespace, INTENTION_WILDCARD]);
  if (entry.name === INTENTION_WILDCARD) return out;
  out.push([entry.namespace, entry.name]);
  return out;
}

function side(ixn: Intention, type: IntentionMatchType): [string, string] {
  return type === "source" ? [ixn.SourceNS, ixn.SourceName] : [ixn.DestinationNS, ixn.DestinationName];
}

/**
 * For each entry, in the entries' order, the intentions whose `type` side matches it, highest precedence
 * first (IntentionPrecedenceSorter; ties by the source/destination 4-tuple). Comparison is
 * case-insensitive because Consul's memdb indexes are `Lowercase: true`: an entry "Web" finds an
 * intention for "web". An entry with no match yields an empty list (Consul 1.8 serializes it as null).
 */
export function matchIntentions(intentions: readonly Intention[], query: IntentionMatchQuery): Intention[][] {
  return query.entries.map((entry) => {
    const pairs = lookupPairs(entry).map(([ns, n]) => `${ns.toLowerCase()}\u0000${n.toLowerCase()}`);
    const found = intentions.filter((ixn) => {
      const [ns, n] = side(ixn, query.type);
      return pairs.includes(`${ns.toLowerCase()}\u0000${n.toLowerCase()}`);
    });
    return found.sort(compareIntentions);
  });
}

/**
 * Whether a client service matches an intention's source (connect.SpiffeIDService.Authorize): each of
 * SourceNS / SourceName is "*" or equal to the client's value, compared case-SENSITIVELY (unlike the
 * case-insensitive destination lookup above; Consul has the same asymmetry).
 */
export function sourceMatches(ixn: Intention, source: IntentionMatchEntry): boolean {
  if (ixn.SourceNS !== INTENTION_WILDCARD && ixn.SourceNS !== source.namespace) return false;
  return ixn.SourceName === INTENTION_WILDCARD || ixn.SourceName === source.name;
}

/**
 * The intention that decides a source -> destination connection: the first, in precedence order, of
 * the intentions matching the destination whose source matches too; undefined when none does.
 */
export function decidingIntention(intentions: readonly Intention[], source: IntentionMatchEntry, destination: IntentionMatchEntry): Intention | undefined {
  const [candidates] = matchIntentions(intentions, { type: "destination", entries: [destination] });
  return candidates!.find((ixn) => sourceMatches(ixn, source));
}

export interface IntentionCheckRequest {
  readonly source: IntentionMatchEntry;
  readonly destination: IntentionMatchEntry;
  /** Defaults to "consul"; any other value fails as Consul's `unsupported SourceType: "x"`. */
  readonly sourceType?: string;
}

/**
 * GET /v1/connect/intentions/check (Intention.Check): {Allowed} from the deciding intention's Action, or
 * `defaultAllow` when none matches. Consul's default is the anonymous token's intention default: true with
 * ACLs disabled, else the ACL default policy (acl_default_policy allow/deny). Only one intention can
 * decide at a given precedence (the 4-tuple is unique), so deny beats allow only by precedence.
 */
export function checkIntention(intentions: readonly Intention[], req: IntentionCheckRequest, defaultAllow: boolean): { Allowed: boolean } {
  const sourceType = req.sourceType ?? "consul";
  if (sourceType !== "consul") throw new IntentionError("invalid", `unsupported SourceType: ${JSON.stringify(sourceType)}`);
  const ixn = decidingIntention(intentions, req.source, req.destination);
  return { Allowed: ixn === undefined ? defaultAllow : ixn.Action === "allow" };
}

/**
 * Parses a ?name= (and ?source= / ?destination=) value the way the agent's parseIntentionMatchEntry does:
 * "name" -> default/name; "ns/name" -> ns/name; more than one "/" fails with "input can contain at most
 * one '/'" (the HTTP layer wraps it: `name "a/b/c" is invalid: ...`). No other validation: "" is a name.
 */
export function parseIntentionMatchEntry(input: string): IntentionMatchEntry {
  const idx = input.indexOf("/");
  if (idx === -1) return { namespace: INTENTION_DEFAULT_NAMESPACE, name: input };
  const name = input.slice(idx + 1);
  if (name.includes("/")) throw new IntentionError("bad-request", "input can contain at most one '/'");
  return { namespace: input.slice(0, idx), name };
}
