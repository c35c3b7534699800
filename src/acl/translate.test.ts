import { describe, expect, test } from "bun:test";
import { TranslateError, translateLegacyRules } from "./translate.ts";

describe("translateLegacyRules (Consul 1.8 acl.TranslateLegacyRules with hcl v1's printer)", () => {
  const cases: [string, string, string][] = [
    ["empty text", "", ""],
    ["only a comment", "# nothing\n", "# nothing\n"],
    ["each legacy rule becomes a prefix rule, printed with two-space indent, blank line between blocks",
      `agent "foo" {\n\tpolicy = "read"\n}\nagent "bar" {\n\tpolicy = "write"\n}\n`,
      `agent_prefix "foo" {\n  policy = "read"\n}\n\nagent_prefix "bar" {\n  policy = "write"\n}`],
    ["one-line blocks are expanded; keyring and operator keep their names",
      `key "" { policy = "read" }\nkey "foo/" { policy = "write" }\nkeyring = "read"\noperator = "write"\n`,
      `key_prefix "" {\n  policy = "read"\n}\n\nkey_prefix "foo/" {\n  policy = "write"\n}\n\nkeyring = "read"\n\noperator = "write"`],
    ["every renamed resource; a quoted label that happens to be a resource name stays",
      `service "key" { policy = "read" }\nevent "" { policy = "read" }\nquery "q" { policy = "write" }\nsession "" { policy = "write" }\nnode "" { policy = "read" }`,
      `service_prefix "key" {\n  policy = "read"\n}\n\nevent_prefix "" {\n  policy = "read"\n}\n\nquery_prefix "q" {\n  policy = "write"\n}\n\nsession_prefix "" {\n  policy = "write"\n}\n\nnode_prefix "" {\n  policy = "read"\n}`],
    ["adjacent attributes align their '=', comments stay where they were",
      `# the web tier\nservice "web" {\n  policy = "write" # may register\n  intentions = "read"\n}\n`,
      `# the web tier\nservice_prefix "web" {\n  policy     = "write" # may register\n  intentions = "read"\n}`],
    ["not validated: unknown names pass through; nested unquoted keys are renamed too",
      `foo = "bar"\nkey = { "a/" = { policy = "read" } }`,
      `foo = "bar"\n\nkey_prefix = {\n  "a/" = {\n    policy = "read"\n  }\n}`],
    ["the JSON form: hcl v1 flattens it; its keys are quoted, so nothing is renamed",
      `{"key": {"foo/": {"policy": "write"}}, "operator": "read"}`,
      `"key" "foo/" {\n  "policy" = "write"\n}\n\n"operator" = "read"`],
    ["CRLF line ends", `key "a" {\r\n  policy = "read"\r\n}\r\n`, `key_prefix "a" {\n  policy = "read"\n}`],
  ];
  for (const [name, input, want] of cases) test(name, () => expect(translateLegacyRules(input)).toBe(want));

  test("text that is not HCL is a TranslateError with the position", () => {
    for (const [input, message] of [
      [`key "x" {`, `Failed to parse rules: At 1:10: expected "}" to close "{" at 1:9, found end of input`],
      [`key "x" = { policy = "read" }`, `Failed to parse rules: At 1:9: expected "{" after "x"`],
      [`{"key": }`, "Failed to parse rules: At 1:9: expected a value, found \"}\""],
    ] as const) {
      let err: unknown;
      try {
        translateLegacyRules(input);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TranslateError);
      expect((err as Error).message).toBe(message);
    }
  });
});
