/** IntentionMatch and Intention.Check as tables over one set of intentions. */
import { describe, expect, test } from "bun:test";
import {
  checkIntention,
  IntentionError,
  matchIntentions,
  parseIntentionMatchEntry,
  prepareIntentionCreate,
  type Intention,
  type IntentionMatchType,
} from "./index.ts";

/** "src => dst action" -> a stored intention whose ID is that text. */
function ixn(spec: string): Intention {
  const [src, , dst, action] = spec.split(" ") as [string, string, string, string];
  const [SourceNS, SourceName] = src.split("/");
  const [DestinationNS, DestinationName] = dst.split("/");
  return prepareIntentionCreate({ SourceNS, SourceName, DestinationNS, DestinationName, Action: action }, spec, { nowMs: 0 });
}

const ALL = [
  "*/* => */* deny",
  "default/* => */* allow",
  "default/web => */* allow",
  "*/* => default/* deny",
  "default/* => default/* allow",
  "default/web => default/* deny",
  "*/* => default/db allow",
  "default/* => default/db deny",
  "default/web => default/db allow",
  "default/api => default/db deny",
  "default/web => default/cache allow",
  "other/web => other/db allow",
].map(ixn);

describe("matchIntentions", () => {
  const MATCH: readonly (readonly [IntentionMatchType, string, readonly string[]])[] = [
    ["destination", "default/db", [
      "default/api => default/db deny",
      "default/web => default/db allow",
      "default/* => default/db deny",
      "*/* => default/db allow",
      "default/web => default/* deny",
      "default/* => default/* allow",
      "*/* => default/* deny",
      "default/web => */* allow",
      "default/* => */* allow",
      "*/* => */* deny",
    ]],
    ["destination", "default/*", [
      "default/web => default/* deny",
      "default/* => default/* allow",
      "*/* => default/* deny",
      "default/web => */* allow",
      "default/* => */* allow",
      "*/* => */* deny",
    ]],
    ["destination", "*/*", ["default/web => */* allow", "default/* => */* allow", "*/* => */* deny"]],
    ["destination", "*/db", ["default/web => */* allow", "default/* => */* allow", "*/* => */* deny"]],
    ["destination", "other/db", ["other/web => other/db allow", "default/web => */* allow", "default/* => */* allow", "*/* => */* deny"]],
    ["destination", "nowhere/x", ["default/web => */* allow", "default/* => */* allow", "*/* => */* deny"]],
    ["source", "default/web", [
      "default/web => default/cache allow",
      "default/web => default/db allow",
      "default/* => default/db deny",
      "*/* => default/db allow",
      "default/web => default/* deny",
      "default/* => default/* allow",
      "*/* => default/* deny",
      "default/web => */* allow",
      "default/* => */* allow",
      "*/* => */* deny",
    ]],
    ["source", "default/*", [
      "default/* => default/db deny",
      "*/* => default/db allow",
      "default/* => default/* allow",
      "*/* => default/* deny",
      "default/* => */* allow",
      "*/* => */* deny",
    ]],
    ["source", "other/web", ["other/web => other/db allow", "*/* => default/db allow", "*/* => default/* deny", "*/* => */* deny"]],
  ];

  test.each(MATCH)("by %s %s", (type, entry, want) => {
    const [ns, name] = entry.split("/") as [string, string];
    expect(matchIntentions(ALL, { type, entries: [{ namespace: ns, name }] })[0]!.map((x) => x.ID)).toEqual([...want]);
  });

  test("answers one list per entry, in the entries' order, empty when nothing matches", () => {
    const only = [ixn("default/web => default/db allow")];
    const out = matchIntentions(only, { type: "destination", entries: [{ namespace: "default", name: "cache" }, { namespace: "default", name: "db" }] });
    expect(out.map((l) => l.map((x) => x.ID))).toEqual([[], ["default/web => default/db allow"]]);
    expect(matchIntentions(only, { type: "source", entries: [] })).toEqual([]);
  });

  test("is case-insensitive, like Consul's lowercase memdb indexes", () => {
    const out = matchIntentions(ALL, { type: "destination", entries: [{ namespace: "DEFAULT", name: "DB" }] });
    expect(out[0]![0]!.ID).toBe("default/api => default/db deny");
    expect(out[0]).toHaveLength(10);
  });
});

describe("checkIntention", () => {
  const CHECK: readonly (readonly [string, readonly Intention[], string, string, boolean, boolean])[] = [
    // [case, intentions, source, destination, defaultAllow, Allowed]
    ["no intentions: default allow", [], "default/web", "default/db", true, true],
    ["no intentions: default deny", [], "default/web", "default/db", false, false],
    ["exact allow beats wildcard deny", ALL, "default/web", "default/db", false, true],
    ["exact deny", ALL, "default/api", "default/db", true, false],
    ["source wildcard deny (8) beats */* allow (7)", ALL, "default/other", "default/db", true, false],
    ["*/* => exact allow (7) beats default/* => default/* (5)", ALL, "other/x", "default/db", false, true],
    ["destination wildcard band", ALL, "default/web", "default/cache", false, true],
    ["destination wildcard deny (6) beats everything below", ALL, "default/web", "default/queue", true, false],
    ["default/* => default/* allow (5)", ALL, "default/api", "default/queue", false, true],
    ["*/* => default/* deny (4) for another namespace's source", ALL, "other/web", "default/queue", true, false],
    ["full wildcard band: source exact allow (3)", ALL, "default/web", "other/x", false, true],
    ["full wildcard deny (1) when nothing else matches", ALL, "other/x", "other/y", true, false],
    ["exact pair in another namespace", ALL, "other/web", "other/db", false, true],
    ["only wildcards, no match at all -> default", [ixn("default/web => default/db deny")], "default/api", "default/db", true, true],
    ["allow at high, deny at low precedence", [ixn("default/web => default/db allow"), ixn("*/* => */* deny")], "default/web", "default/db", false, true],
    ["deny at high, allow at low precedence", [ixn("default/web => default/db deny"), ixn("*/* => */* allow")], "default/web", "default/db", true, false],
    ["source compared case-sensitively (Consul's Authorize)", [ixn("default/web => default/db deny")], "default/WEB", "default/db", true, true],
    ["destination compared case-insensitively (memdb)", [ixn("default/web => default/db deny")], "default/web", "default/DB", true, false],
  ];

  test.each(CHECK)("%s", (_, intentions, src, dst, defaultAllow, want) => {
    const [sns, sname] = src.split("/") as [string, string];
    const [dns, dname] = dst.split("/") as [string, string];
    const req = { source: { namespace: sns, name: sname }, destination: { namespace: dns, name: dname } };
    expect(checkIntention(intentions, req, defaultAllow)).toEqual({ Allowed: want });
  });

  test("a source type other than consul is refused", () => {
    const req = { source: { namespace: "default", name: "web" }, destination: { namespace: "default", name: "db" }, sourceType: "external" };
    expect(() => checkIntention([], req, true)).toThrow(new IntentionError("invalid", 'unsupported SourceType: "external"'));
  });
});

describe("parseIntentionMatchEntry", () => {
  test.each([
    ["web", "default", "web"],
    ["ns/web", "ns", "web"],
    ["*", "default", "*"],
    ["*/*", "*", "*"],
    ["/web", "", "web"],
    ["", "default", ""],
  ])("%j -> %s/%s", (input, namespace, name) => {
    expect(parseIntentionMatchEntry(input)).toEqual({ namespace, name });
  });

  test("more than one slash is refused", () => {
    expect(() => parseIntentionMatchEntry("a/b/c")).toThrow("input can contain at most one '/'");
  });
});
