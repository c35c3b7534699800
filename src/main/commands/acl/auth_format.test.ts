import { describe, expect, test } from "bun:test";
import { GoError } from "../../../lib/index.ts";
import { authMethodOut, authMethodStubOut, decodeAuthMethod, decodeBindingRule, formatAuthMethod, formatAuthMethodList, formatBindingRuleList } from "./auth_format.ts";
import { unmarshalMap } from "./auth_method_common.ts";
import { jsonOut, marshalIndent } from "./format.ts";

describe("Go's json.MarshalIndent for the acl commands' output", () => {
  const cases: [string, unknown, number, string][] = [
    ["struct fields in order, undefined ones left out", { B: 1, A: "x", C: undefined }, 2, '{\n  "B": 1,\n  "A": "x"\n}'],
    ["a Go map: keys sorted as strings, nested too", new Map<string, unknown>([["b", 1], ["10", new Map([["z", 1], ["a", 2]])], ["2", null]]), 2, '{\n  "10": {\n    "a": 2,\n    "z": 1\n  },\n  "2": null,\n  "b": 1\n}'],
    ["HTML-safe strings", { k: "<a&b>\u2028" }, 4, '{\n    "k": "\\u003ca\\u0026b\\u003e\\u2028"\n}'],
    ["empty containers and exact big integers", { a: [], o: {}, n: 18446744073709551615n, z: null }, 4, '{\n    "a": [],\n    "o": {},\n    "n": 18446744073709551615,\n    "z": null\n}'],
    ["nested arrays", [[1, { a: true }]], 2, '[\n  [\n    1,\n    {\n      "a": true\n    }\n  ]\n]'],
  ];
  for (const [name, value, space, want] of cases) test(name, () => expect(marshalIndent(value, space)).toBe(want));
  test("jsonOut is JSON.stringify's layout for plain data, plus the newline", () => {
    const v = { ID: "x", Policies: [{ ID: "1", Name: "n" }], Local: false, Empty: [] };
    expect(jsonOut(v)).toBe(`${JSON.stringify(v, null, 4)}\n`);
  });
});

describe("-config as json.Unmarshal into map[string]interface{} reads it", () => {
  test("an object, or null", () => {
    expect(unmarshalMap(' {"a": {"b": [1, "x"]}}\n')).toEqual({ a: { b: [1, "x"] } });
    expect(unmarshalMap("null")).toBeNull();
  });
  const errors: [string, string][] = [
    ["", "unexpected end of JSON input"],
    ["  \n", "unexpected end of JSON input"],
    ['{"a": [1', "unexpected end of JSON input"],
    ["{a}", "invalid character 'a' looking for beginning of object key string"],
    ['{"a":1}}', "invalid character '}' after top-level value"],
    ['{"s":"}"} \'', "invalid character '\\'' after top-level value"],
    ["[1]", "json: cannot unmarshal array into Go value of type map[string]interface {}"],
    ['"x"', "json: cannot unmarshal string into Go value of type map[string]interface {}"],
    ["1", "json: cannot unmarshal number into Go value of type map[string]interface {}"],
    ["true", "json: cannot unmarshal bool into Go value of type map[string]interface {}"],
  ];
  for (const [text, message] of errors) test(`${JSON.stringify(text)}: ${message}`, () => expect(() => unmarshalMap(text)).toThrow(new GoError(message)));
});

describe("auth methods and binding rules as the 1.8 api package decodes and prints them", () => {
  const served = { Name: "m", Type: "jwt", DisplayName: "", Description: "", MaxTokenTTL: "90m", TokenLocality: "", Config: null, CreateIndex: 3, ModifyIndex: 4, Extra: 1 };
  test("MaxTokenTTL as Go's Duration String, first in the JSON; unknown and empty omitempty fields dropped", () => {
    const m = decodeAuthMethod(served);
    expect(m.MaxTokenTTL).toBe("1h30m0s");
    expect(jsonOut(authMethodOut(m))).toBe('{\n    "MaxTokenTTL": "1h30m0s",\n    "Name": "m",\n    "Type": "jwt",\n    "Config": null,\n    "CreateIndex": 3,\n    "ModifyIndex": 4\n}\n');
    expect(authMethodStubOut(served)).toEqual({ Name: "m", Type: "jwt", CreateIndex: 3, ModifyIndex: 4 });
    expect(decodeAuthMethod({ ...served, MaxTokenTTL: "0s" }).MaxTokenTTL).toBe("");
  });
  test("pretty: no Config prints null; empty lists print nothing; a list ends with the UI's newline", () => {
    expect(formatAuthMethod(decodeAuthMethod({ ...served, MaxTokenTTL: "" }), false)).toBe("Name:          m\nType:          jwt\nDescription:   \nConfig:\nnull\n");
    expect(formatAuthMethodList([], true)).toBe("");
    expect(formatBindingRuleList([], false)).toBe("");
    expect(formatBindingRuleList([decodeBindingRule({ ID: "r1", AuthMethod: "m", BindType: "service", BindName: "s" })], false))
      .toBe("r1:\n   AuthMethod:   m\n   Description:  \n   BindType:     service\n   BindName:     s\n   Selector:     \n\n");
  });
});
