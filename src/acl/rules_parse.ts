/**
 * Parses ACL rules text (HCL v1 or its JSON form) into ParsedRules, as Consul 1.8's
 * `acl.NewPolicyFromSource` does (`acl/policy.go` parseCurrent / parseLegacy), and validates every level.
 *
 * Where Consul is looser we are strict, so that a mistyped policy is refused rather than silently granting
 * nothing: Consul's `hcl.Decode` ignores unknown resources and attributes, we reject them. Names are matched
 * case-insensitively as hcl v1 does (`ast.ObjectList.Filter` uses strings.EqualFold), so `Service "web" {
 * Policy = "read" }` is accepted like Consul accepts it.
 */
import { HclError, parseHcl, quote } from "./hcl.ts";
import type { HclItem, HclObject, HclValue, Pos } from "./hcl.ts";
import { emptyRules, SCALAR_RESOURCES, SEGMENT_RESOURCES, strongerLevel } from "./rules.ts";
import type { AccessLevel, ParsedRules, ScalarResource, SegmentResource, SegmentRule } from "./rules.ts";

/** `current` for policies; `legacy` for the rules of tokens made by `/v1/acl/create` (SyntaxLegacy). */
export type RulesSyntax = "current" | "legacy";

/**
 * The only error parseRules throws. Messages follow Consul: `Failed to parse ACL rules: At L:C: <what>` for
 * syntax and structure, `Invalid <resource> policy: ...` for a bad level. `pos` is where the problem is.
 */
export class RulesError extends Error {
  constructor(message: string, readonly pos?: Pos) {
    super(message);
    this.name = "RulesError";
  }
}

/**
 * Parses and validates `text`. Empty text (or only comments) gives emptyRules(). Several rules for the same
 * segment (same resource, same exact/prefix kind) merge with strongerLevel, `policy` and `intentions`
 * separately; so do repeated scalars. In `legacy` syntax every segment rule is a prefix rule and the
 * `_prefix` resources and `acl` do not exist. An empty scalar (`operator = ""`) or empty `intentions` means
 * "not set", as in Consul; an empty or missing `policy` is invalid (isPolicyValid("") is false).
 * Returns ParsedRules or throws RulesError, for any input.
 */
export function parseRules(text: string, syntax: RulesSyntax = "current"): ParsedRules {
  let entries: Entry[];
  try {
    entries = collect(parseHcl(text), syntax);
  } catch (e) {
    if (e instanceof HclError) throw new RulesError(`Failed to parse ACL rules: ${e.message}`, e.pos);
    throw e;
  }
  return validateAndMerge(entries);
}

type Resource =
  | { readonly kind: "scalar"; readonly name: ScalarResource }
  | { readonly kind: "segment"; readonly written: string; readonly resource: SegmentResource; readonly prefix: boolean };

interface Level {
  readonly value: string;
  readonly pos: Pos;
}

/** One rule or scalar as written, levels not yet checked. */
type Entry =
  | { readonly kind: "scalar"; readonly name: ScalarResource; readonly level: Level }
  | {
    readonly kind: "segment";
    readonly res: Extract<Resource, { kind: "segment" }>;
    readonly segment: string;
    readonly pos: Pos;
    readonly policies: Level[];
    readonly intentions: Level[];
  };

function lookupResource(name: string, syntax: RulesSyntax): Resource | undefined {
  const lower = name.toLowerCase();
  const scalar = SCALAR_RESOURCES.find((r) => r === lower);
  if (scalar !== undefined) return syntax === "legacy" && scalar === "acl" ? undefined : { kind: "scalar", name: scalar };
  const exact = SEGMENT_RESOURCES.find((r) => r === lower);
  if (exact !== undefined) return { kind: "segment", written: exact, resource: exact, prefix: syntax === "legacy" };
  const prefixed = SEGMENT_RESOURCES.find((r) => `${r}_prefix` === lower);
  if (prefixed !== undefined && syntax === "current") return { kind: "segment", written: lower, resource: prefixed, prefix: true };
  return undefined;
}

/** Walks the tree: resources, their rules and attributes, in source order. Throws HclError on bad structure. */
function collect(file: HclObject, syntax: RulesSyntax): Entry[] {
  const entries: Entry[] = [];
  for (const item of file.items) {
    const key = item.keys[0]!;
    const res = lookupResource(key.name, syntax);
    if (res === undefined) throw new HclError(key.pos, `unknown ACL resource ${quote(key.name)}`);
    if (res.kind === "scalar") {
      const value = item.value;
      if (item.keys.length > 1 || value.kind !== "string") {
        throw new HclError(item.keys[1]?.pos ?? value.pos, `the value of ${res.name} must be a string`);
      }
      entries.push({ kind: "scalar", name: res.name, level: { value: value.value, pos: value.pos } });
    } else {
      collectSegmentRules(item, res, entries);
    }
  }
  return entries;
}

/**
 * `key "a" { ... }` (keys: key, a), or `key = { "a" = { ... } }` / `key { "a" { ... } }` (one key, an object
 * of labelled bodies), or the HCL-JSON list of such objects `"key": [{"a": {...}}, {"b": {...}}]`.
 */
function collectSegmentRules(item: HclItem, res: Extract<Resource, { kind: "segment" }>, out: Entry[]): void {
  const label = item.keys[1];
  if (label !== undefined) {
    const extra = item.keys[2];
    if (extra !== undefined) throw new HclError(extra.pos, needsName(res.written));
    out.push(ruleBody(res, label.name, label.pos, item.value));
    return;
  }
  const groups = item.value.kind === "list" ? item.value.elements : [item.value];
  for (const group of groups) {
    if (group.kind !== "object") throw new HclError(group.pos, needsName(res.written));
    for (const inner of group.items) {
      const name = inner.keys[0]!;
      const extra = inner.keys[1];
      if (extra !== undefined) throw new HclError(extra.pos, needsName(res.written));
      if (inner.value.kind !== "object" && !name.quoted && isAttribute(name.name, res)) {
        throw new HclError(name.pos, needsName(res.written));
      }
      out.push(ruleBody(res, name.name, name.pos, inner.value));
    }
  }
}

/** The body of one rule: `{ policy = "..." [intentions = "..."] }`. */
function ruleBody(res: Extract<Resource, { kind: "segment" }>, segment: string, pos: Pos, body: HclValue): Entry {
  const what = `${res.written} rule ${quote(segment)}`;
  if (body.kind !== "object") {
    throw new HclError(body.pos, `the ${what} must be a block, like ${res.written} ${quote(segment)} { policy = "read" }`);
  }
  const policies: Level[] = [];
  const intentions: Level[] = [];
  for (const attr of body.items) {
    const key = attr.keys[0]!;
    const name = key.name.toLowerCase();
    if (!isAttribute(name, res)) throw new HclError(key.pos, `unknown attribute ${quote(key.name)} in ${what}`);
    const value = attr.value;
    if (attr.keys.length > 1 || value.kind !== "string") {
      throw new HclError(attr.keys[1]?.pos ?? value.pos, `the value of ${name} in ${what} must be a string`);
    }
    (name === "policy" ? policies : intentions).push({ value: value.value, pos: value.pos });
  }
  return { kind: "segment", res, segment, pos, policies, intentions };
}

function isAttribute(name: string, res: Extract<Resource, { kind: "segment" }>): boolean {
  const lower = name.toLowerCase();
  return lower === "policy" || (lower === "intentions" && res.resource === "service");
}

function needsName(written: string): string {
  const article = /^[aeiou]/.test(written) ? "an" : "a";
  const example = written.startsWith("key") ? "a/b" : "name";
  return `${article} ${written} rule needs one quoted name, like ${written} "${example}" { policy = "read" }`;
}

/** Checks every level (Consul's `Invalid ... policy` errors) and merges the entries into ParsedRules. */
function validateAndMerge(entries: readonly Entry[]): ParsedRules {
  const rules = emptyRules();
  const scalars = rules.scalars as Partial<Record<ScalarResource, AccessLevel>>;
  for (const e of entries) {
    if (e.kind === "scalar") {
      if (e.level.value === "") continue;
      const level = toLevel(e.level.value, false);
      if (level === undefined) throw new RulesError(`Invalid ${e.name} policy: ${quote(e.level.value)}`, e.level.pos);
      scalars[e.name] = strongerLevel(scalars[e.name], level);
      continue;
    }
    const where = `segment ${quote(e.segment)}`;
    const fail = (l: Level | undefined, attr: "policy" | "intentions") => {
      const kind = attr === "policy" ? "" : " intentions";
      return new RulesError(`Invalid ${e.res.written}${kind} policy: ${where}, ${attr} ${quote(l?.value ?? "")}`, l?.pos ?? e.pos);
    };
    if (e.policies.length === 0) throw fail(undefined, "policy");
    let policy: AccessLevel | undefined;
    for (const l of e.policies) {
      const level = toLevel(l.value, e.res.resource === "key");
      if (level === undefined) throw fail(l, "policy");
      policy = strongerLevel(policy, level);
    }
    let intentions: AccessLevel | undefined;
    for (const l of e.intentions) {
      if (l.value === "") continue;
      const level = toLevel(l.value, false);
      if (level === undefined) throw fail(l, "intentions");
      intentions = strongerLevel(intentions, level);
    }
    const seg = rules.segments[e.res.resource];
    const map = (e.res.prefix ? seg.prefix : seg.exact) as Map<string, SegmentRule>;
    const prev = map.get(e.segment);
    const merged = strongerLevel(prev?.policy, policy)!;
    const mergedIntentions = strongerLevel(prev?.intentions, intentions);
    map.set(e.segment, mergedIntentions === undefined ? { policy: merged } : { policy: merged, intentions: mergedIntentions });
  }
  return rules;
}

/** A valid level, or undefined: read, write and deny everywhere, list only where `allowList` (key rules). */
function toLevel(value: string, allowList: boolean): AccessLevel | undefined {
  if (value === "read" || value === "write" || value === "deny") return value;
  if (value === "list" && allowList) return value;
  return undefined;
}
