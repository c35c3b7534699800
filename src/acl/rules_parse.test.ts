import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { emptyRules } from "./rules.ts";
import type { ParsedRules } from "./rules.ts";
import { parseRules, RulesError } from "./rules_parse.ts";
import type { RulesSyntax } from "./rules_parse.ts";

/** ParsedRules as a plain object, keeping only resources that have rules. */
function plain(r: ParsedRules): unknown {
  const segments: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(r.segments)) {
    const entry: Record<string, unknown> = {};
    if (s.exact.size > 0) entry.exact = Object.fromEntries(s.exact);
    if (s.prefix.size > 0) entry.prefix = Object.fromEntries(s.prefix);
    if (Object.keys(entry).length > 0) segments[name] = entry;
  }
  return { scalars: r.scalars, segments };
}

function errorOf(text: string, syntax: RulesSyntax = "current"): RulesError {
  try {
    parseRules(text, syntax);
  } catch (e) {
    if (e instanceof RulesError) return e;
    throw e;
  }
  throw new Error(`parsed without error: ${text}`);
}

const EXAMPLE = {
  scalars: { operator: "read" },
  segments: { key: { prefix: { "app/": { policy: "write" } } }, service: { exact: { web: { policy: "write", intentions: "read" } } } },
};

describe("parseRules, current syntax", () => {
  test("empty text, whitespace and comments give empty rules", () => {
    for (const text of ["", " \n", "# nothing\n/* at */ // all"]) expect(parseRules(text)).toEqual(emptyRules());
  });

  test("blocks, scalars and intentions, in HCL and in JSON", () => {
    const hcl = `key_prefix "app/" { policy = "write" }\nservice "web" { policy = "write" intentions = "read" }\noperator = "read"`;
    const json = `{"key_prefix":{"app/":{"policy":"write"}},"service":{"web":{"policy":"write","intentions":"read"}},"operator":"read"}`;
    expect(plain(parseRules(hcl))).toEqual(EXAMPLE);
    expect(plain(parseRules(json))).toEqual(EXAMPLE);
  });

  test("the equivalent object forms: key = { ... }, key { ... }, and HCL-JSON lists of objects", () => {
    const expected = { scalars: {}, segments: { key: { exact: { a: { policy: "read" }, b: { policy: "write" } } } } };
    expect(plain(parseRules(`key = { "a" = { policy = "read" }, b = { policy = "write" } }`))).toEqual(expected);
    expect(plain(parseRules(`key { "a" { policy = "read" } "b" { policy = "write" } }`))).toEqual(expected);
    expect(plain(parseRules(`{"key":[{"a":{"policy":"read"}},{"b":{"policy":"write"}}]}`))).toEqual(expected);
    expect(plain(parseRules(`key "a" { policy = "read" }\nkey b { policy = "write" }`))).toEqual(expected);
  });

  test("separators inside a rule: whitespace, newlines and commas", () => {
    const expected = { scalars: {}, segments: { service: { exact: { web: { policy: "write", intentions: "read" } } } } };
    for (const body of [`policy = "write" intentions = "read"`, `\n policy = "write"\n intentions = "read"\n`, `policy = "write", intentions = "read",`]) {
      expect(plain(parseRules(`service "web" {${body}}`))).toEqual(expected);
    }
  });

  test("every resource, exact and prefix, and every scalar", () => {
    const resources = ["agent", "event", "key", "node", "query", "service", "session"];
    const text = resources.map((r) => `${r} "x" { policy = "read" }\n${r}_prefix "" { policy = "deny" }`).join("\n") +
      `\nacl = "write"\nkeyring = "read"\noperator = "deny"`;
    const rules = parseRules(text);
    expect(rules.scalars).toEqual({ acl: "write", keyring: "read", operator: "deny" });
    for (const r of resources) {
      expect(plain(parseRules(`${r} "x" { policy = "read" }`))).toEqual({ scalars: {}, segments: { [r]: { exact: { x: { policy: "read" } } } } });
      const s = rules.segments[r as keyof ParsedRules["segments"]];
      expect(Object.fromEntries(s.exact)).toEqual({ x: { policy: "read" } });
      expect(Object.fromEntries(s.prefix)).toEqual({ "": { policy: "deny" } });
    }
  });

  test("list is a level only for key and key_prefix", () => {
    expect(plain(parseRules(`key "a" { policy = "list" }\nkey_prefix "b" { policy = "list" }`))).toEqual({
      scalars: {},
      segments: { key: { exact: { a: { policy: "list" } }, prefix: { b: { policy: "list" } } } },
    });
    expect(errorOf(`node "a" { policy = "list" }`).message).toBe(`Invalid node policy: segment "a", policy "list"`);
    expect(errorOf(`operator = "list"`).message).toBe(`Invalid operator policy: "list"`);
    expect(errorOf(`service "a" { policy = "read" intentions = "list" }`).message).toBe(
      `Invalid service intentions policy: segment "a", intentions "list"`,
    );
  });

  test("names match case-insensitively, as hcl v1's Filter does; levels do not", () => {
    expect(plain(parseRules(`Service "web" { Policy = "write" INTENTIONS = "read" }\nKey_Prefix "app/" { policy = "write" }\nOPERATOR = "read"`)))
      .toEqual(EXAMPLE);
    expect(errorOf(`key "a" { policy = "Read" }`).message).toBe(`Invalid key policy: segment "a", policy "Read"`);
  });

  test("an empty scalar or empty intentions means unset, as in Consul", () => {
    expect(parseRules(`operator = ""\nacl = ""`).scalars).toEqual({});
    expect(plain(parseRules(`service "a" { policy = "read" intentions = "" }`))).toEqual({ scalars: {}, segments: { service: { exact: { a: { policy: "read" } } } } });
  });
});

describe("merging rules in one text", () => {
  test("the same segment merges deny > write > list > read, policy and intentions separately", () => {
    const text = `key "a" { policy = "read" }\nkey "a" { policy = "list" }\nkey "a" { policy = "write" }\nkey "b" { policy = "deny" }\nkey "b" { policy = "write" }
service "s" { policy = "deny" intentions = "read" }\nservice "s" { policy = "read" intentions = "write" }\nservice "t" { policy = "read" }\nservice "t" { policy = "read" intentions = "deny" }`;
    expect(plain(parseRules(text))).toEqual({
      scalars: {},
      segments: {
        key: { exact: { a: { policy: "write" }, b: { policy: "deny" } } },
        service: { exact: { s: { policy: "deny", intentions: "write" }, t: { policy: "read", intentions: "deny" } } },
      },
    });
  });

  test("exact and prefix rules of one segment stay apart; repeated scalars and attributes merge", () => {
    expect(plain(parseRules(`key "a" { policy = "read" }\nkey_prefix "a" { policy = "deny" }\noperator = "write"\noperator = "read"\nnode "n" { policy = "write" policy = "read" }`)))
      .toEqual({
        scalars: { operator: "write" },
        segments: { key: { exact: { a: { policy: "read" } }, prefix: { a: { policy: "deny" } } }, node: { exact: { n: { policy: "write" } } } },
      });
  });
});

describe("legacy syntax", () => {
  test("every segment rule is a prefix rule", () => {
    const rules = parseRules(`service "foo-" { policy = "write" intentions = "read" }\nkey "" { policy = "list" }\noperator = "read"\nkeyring = "write"`, "legacy");
    expect(plain(rules)).toEqual({
      scalars: { operator: "read", keyring: "write" },
      segments: { service: { prefix: { "foo-": { policy: "write", intentions: "read" } } }, key: { prefix: { "": { policy: "list" } } } },
    });
  });

  test("_prefix resources and acl do not exist; levels are checked under the written name", () => {
    expect(errorOf(`service_prefix "a" { policy = "read" }`, "legacy").message).toBe(`Failed to parse ACL rules: At 1:1: unknown ACL resource "service_prefix"`);
    expect(errorOf(`acl = "read"`, "legacy").message).toBe(`Failed to parse ACL rules: At 1:1: unknown ACL resource "acl"`);
    expect(errorOf(`service "a" { policy = "bar" }`, "legacy").message).toBe(`Invalid service policy: segment "a", policy "bar"`);
  });
});

describe("errors", () => {
  test.each([
    [`operator`, `Failed to parse ACL rules: At 1:9: expected "=" or "{" after "operator"`],
    [`key "a" { policy = "read }`, `Failed to parse ACL rules: At 1:20: unterminated string`],
    [`foo = "read"`, `Failed to parse ACL rules: At 1:1: unknown ACL resource "foo"`],
    [`key "a" { polcy = "read" }`, `Failed to parse ACL rules: At 1:11: unknown attribute "polcy" in key rule "a"`],
    [`key_prefix "a" { intentions = "read" }`, `Failed to parse ACL rules: At 1:18: unknown attribute "intentions" in key_prefix rule "a"`],
    [`key = "read"`, `Failed to parse ACL rules: At 1:7: a key rule needs one quoted name, like key "a/b" { policy = "read" }`],
    [`key { policy = "read" }`, `Failed to parse ACL rules: At 1:7: a key rule needs one quoted name, like key "a/b" { policy = "read" }`],
    [`key "a" "b" { policy = "read" }`, `Failed to parse ACL rules: At 1:9: a key rule needs one quoted name, like key "a/b" { policy = "read" }`],
    [`agent { "a" "b" { } }`, `Failed to parse ACL rules: At 1:13: an agent rule needs one quoted name, like agent "name" { policy = "read" }`],
    [`node = ["n"]`, `Failed to parse ACL rules: At 1:9: a node rule needs one quoted name, like node "name" { policy = "read" }`],
    [`key { "a" = "read" }`, `Failed to parse ACL rules: At 1:13: the key rule "a" must be a block, like key "a" { policy = "read" }`],
    [`operator = true`, `Failed to parse ACL rules: At 1:12: the value of operator must be a string`],
    [`operator = 1`, `Failed to parse ACL rules: At 1:12: the value of operator must be a string`],
    [`operator { }`, `Failed to parse ACL rules: At 1:10: the value of operator must be a string`],
    [`operator "x" { }`, `Failed to parse ACL rules: At 1:10: the value of operator must be a string`],
    [`key "a" { policy = ["read"] }`, `Failed to parse ACL rules: At 1:20: the value of policy in key rule "a" must be a string`],
    [`key "a" { policy = "bar" }`, `Invalid key policy: segment "a", policy "bar"`],
    [`key_prefix "app/" { policy = "bar" }`, `Invalid key_prefix policy: segment "app/", policy "bar"`],
    [`service "web" { policy = "read" intentions = "bar" }`, `Invalid service intentions policy: segment "web", intentions "bar"`],
    [`service_prefix "" { policy = "read" intentions = "bar" }`, `Invalid service_prefix intentions policy: segment "", intentions "bar"`],
    [`operator = "bar"`, `Invalid operator policy: "bar"`],
    [`acl = "list"`, `Invalid acl policy: "list"`],
    [`key "a" { }`, `Invalid key policy: segment "a", policy ""`],
    [`key "a" { policy = "" }`, `Invalid key policy: segment "a", policy ""`],
    [`service "web" { intentions = "read" }`, `Invalid service policy: segment "web", policy ""`],
    [`{"service":{"web":{"policy":1}}}`, `Failed to parse ACL rules: At 1:29: the value of policy in service rule "web" must be a string`],
  ])("%j", (text, message) => {
    expect(errorOf(text).message).toBe(message);
  });

  test("positions on later lines and after comments", () => {
    expect(errorOf(`# a comment\nkey "a" { policy = "read" }\n  /* x\n */ bogus = "x"`).message).toBe(
      `Failed to parse ACL rules: At 4:5: unknown ACL resource "bogus"`,
    );
    const e = errorOf(`operator = "read"\n\nkey "a" {\n  // why\n  policy = "write"\n  polcy = "read"\n}`);
    expect(e.message).toBe(`Failed to parse ACL rules: At 6:3: unknown attribute "polcy" in key rule "a"`);
    expect(e.pos).toEqual({ line: 6, column: 3 });
    expect(errorOf(`key "a" {\n  policy = "bar"\n}`).pos).toEqual({ line: 2, column: 12 });
  });

  test("JSON errors carry line:column", () => {
    expect(errorOf(`{\n  "key": {\n    "a": {"policy": "read"},\n  }\n}`).message).toBe(
      `Failed to parse ACL rules: At 4:3: expected a quoted member name, found "}"`,
    );
    expect(errorOf(`{\n  "operator": "read",\n  "nope": {}\n}`).message).toBe(`Failed to parse ACL rules: At 3:3: unknown ACL resource "nope"`);
  });

  test("deep nesting is a RulesError", () => {
    expect(errorOf(`key ${"{ a ".repeat(1000)}`).message).toBe(`Failed to parse ACL rules: At 1:${5 + 4 * 32}: nesting deeper than 32 levels`);
  });
});

const CORPUS = [
  `key_prefix "app/" { policy = "write" }\nservice "web" { policy = "write" intentions = "read" }\noperator = "read"`,
  `{"key_prefix":{"app/":{"policy":"write"}},"service":{"web":{"policy":"write","intentions":"read"}},"operator":"read"}`,
  `{"key":[{"a":{"policy":"read"}},{"b":{"policy":"list"}}],"acl":"write"}`,
  `# c\nkey = { "a" = { policy = "read" } }\n/* d */ node { "n" { policy = "deny" }, m { policy = "write" } }\nkeyring = "deny"`,
  `agent_prefix "" { policy = "read" } session "s" { policy = "write" }, event_prefix "ev" { policy = "deny" }\nquery "q\\u00e9\\n" { policy = "read" }`,
];
const ALPHABET = ` \n\t{}[]"=,:#/*\\-_.0129aeklpqrsuxyz\u00e9\u{1F600}\0<`;

/** One random edit of `text`: insert, delete, replace, truncate, or duplicate a slice. */
function mutate(text: string, rng: ReturnType<typeof seededRng>): string {
  const at = rng.int(text.length + 1);
  const ch = () => [...ALPHABET][rng.int([...ALPHABET].length)]!;
  switch (rng.int(5)) {
    case 0:
      return text.slice(0, at) + ch() + text.slice(at);
    case 1:
      return text.slice(0, at) + text.slice(at + 1 + rng.int(4));
    case 2:
      return text.slice(0, at) + ch() + text.slice(at + 1);
    case 3:
      return text.slice(0, at);
    default:
      return text.slice(0, at) + text.slice(rng.int(text.length + 1)).slice(0, 20) + text.slice(at);
  }
}

describe("fuzz", () => {
  test("every mutated rules text parses or throws RulesError, never anything else", () => {
    const seed = 0x5eed_ac1;
    const rng = seededRng(seed);
    let parsed = 0;
    let rejected = 0;
    for (let n = 0; n < 3000; n++) {
      let text = CORPUS[rng.int(CORPUS.length)]!;
      for (let k = 1 + rng.int(4); k > 0; k--) text = mutate(text, rng);
      const syntax: RulesSyntax = rng.int(4) === 0 ? "legacy" : "current";
      try {
        parseRules(text, syntax);
        parsed++;
      } catch (e) {
        if (!(e instanceof RulesError)) {
          throw new Error(`seed ${seed}, input ${n} (${syntax}) ${JSON.stringify(text)} threw ${String(e)}`);
        }
        rejected++;
      }
    }
    // Both outcomes must occur, or the mutations are not exercising the parser.
    expect(parsed).toBeGreaterThan(50);
    expect(rejected).toBeGreaterThan(100);
  });
});
