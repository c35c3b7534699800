/**
 * Compile-time rejections other than syntax: unknown selectors (go-bexpr's exact wording, which Consul returns
 * in its HTTP 400), operators a field does not support, values that do not coerce, and bad regexes.
 */
import { describe, expect, test } from "bun:test";
import {
  compileFilter,
  HEALTH_CHECK_SCHEMA,
  list,
  map,
  NODE_SCHEMA,
  struct,
  type Schema,
} from "./index.ts";
import { errorOf } from "./fixtures.test.ts";

const REJECTED: readonly (readonly [string, string])[] = [
  // selectors: exact, case-sensitive field names; hidden fields are not selectable
  ["Service.Foo == 1", 'Selector "Service.Foo" is not valid'],
  ["Service.foo == 1", 'Selector "Service.foo" is not valid'],
  ["service.Service == web", 'Selector "service" is not valid'],
  ["Service.Foo.Bar == 1", 'Selector "Service.Foo" is not valid'],
  ["Service.Tags.foo == x", 'Selector "Service.Tags.foo" is not valid'],
  ["Service.Port.Foo == 1", 'Selector "Service.Port.Foo" is not valid'],
  ["Checks.Definition.HTTP == x", 'Selector "Checks.Definition" is not valid'],
  ["Node.CreateIndex == 1", 'Selector "Node.CreateIndex" is not valid'],
  ["Service.Proxy.Config.foo == x", 'Selector "Service.Proxy.Config" is not valid'],
  ["constructor == x", 'Selector "constructor" is not valid'],
  ['Service["__proto__"] == x', 'Selector "Service.__proto__" is not valid'],
  ["x in Service.Nope", 'Selector "Service.Nope" is not valid'],
  // operators the selected type does not support (go-bexpr's operator names)
  ["Service.Tags == primary", 'Invalid match operator "Equal" for selector "Service.Tags"'],
  ["Service.Port contains 1", 'Invalid match operator "In" for selector "Service.Port"'],
  ["Service.Port not contains 1", 'Invalid match operator "Not In" for selector "Service.Port"'],
  ["Service.Weights == 1", 'Invalid match operator "Equal" for selector "Service.Weights"'],
  ["Service is empty", 'Invalid match operator "Is Empty" for selector "Service"'],
  ["Checks == x", 'Invalid match operator "Equal" for selector "Checks"'],
  ["x in Checks", 'Invalid match operator "In" for selector "Checks"'],
  ["Service.Port is empty", 'Invalid match operator "Is Empty" for selector "Service.Port"'],
  ["Service.EnableTagOverride is not empty", 'Invalid match operator "Is Not Empty" for selector "Service.EnableTagOverride"'],
  ["Service.Tags matches x", 'Invalid match operator "Matches" for selector "Service.Tags"'],
  ["Service.Meta not matches x", 'Invalid match operator "Not Matches" for selector "Service.Meta"'],
  ["Service.Port matches 80", 'Invalid match operator "Matches" for selector "Service.Port"'],
  // values coerced to the field's type (Go's strconv rules and messages)
  ['Service.Port == "abc"', 'Failed to coerce value "abc" for selector "Service.Port": strconv.ParseInt: parsing "abc": invalid syntax'],
  ["Service.Port == 1.5", 'Failed to coerce value "1.5" for selector "Service.Port": strconv.ParseInt: parsing "1.5": invalid syntax'],
  ['Service.Port == ""', 'Failed to coerce value "" for selector "Service.Port": strconv.ParseInt: parsing "": invalid syntax'],
  ['Service.Port == "9223372036854775808"', 'strconv.ParseInt: parsing "9223372036854775808": value out of range'],
  ["Service.EnableTagOverride == yes", 'Failed to coerce value "yes" for selector "Service.EnableTagOverride": strconv.ParseBool: parsing "yes": invalid syntax'],
  ["Service.Proxy.Upstreams.LocalBindPort != x", 'Failed to coerce value "x" for selector "Service.Proxy.Upstreams.LocalBindPort"'],
  // regular expressions compiled once, with Go's syntax and messages
  ['Service.Service matches "("', 'Failed to compile regular expression "(": error parsing regexp: missing closing ): `(`'],
  ['Service.Service matches "(?=x)"', "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"],
  ['Service.Service not matches "a**"', "error parsing regexp: invalid nested repetition operator: `**`"],
  ["Node.Meta.x matches `\\1`", "error parsing regexp: invalid escape sequence: `\\1`"],
  ["Checks.Output matches `[z-a]`", "error parsing regexp: invalid character class range: `z-a`"],
];

describe("validation errors", () => {
  for (const [expr, message] of REJECTED) {
    test(JSON.stringify(expr), () => {
      const err = errorOf(expr);
      expect(err.message).toContain(message);
      expect(err.position).toBeUndefined();
    });
  }

  test("the first invalid match, left to right, is reported", () => {
    expect(errorOf("Service.Port == 1 and Service.A == 1 or Service.B == 1").message).toBe('Selector "Service.A" is not valid');
  });

  test("schemas are per type: a HealthCheck has no Service, a Node has Meta", () => {
    expect(errorOf("Service.ID == x", HEALTH_CHECK_SCHEMA).message).toBe('Selector "Service" is not valid');
    expect(compileFilter('Status == critical and ServiceName != ""', HEALTH_CHECK_SCHEMA).matches({ Status: "critical", ServiceName: "web" })).toBe(true);
    expect(compileFilter("Meta.os == linux", NODE_SCHEMA).matches({ Meta: { os: "linux" } })).toBe(true);
  });
});

describe("caller-defined schemas", () => {
  const schema: Schema = {
    Name: "string",
    Ratio: "number",
    Counts: list("int"),
    Matrix: list(list(struct({ V: "string" }))),
    Labels: map(map("string")),
  };

  test("float fields coerce with ParseFloat", () => {
    const f = compileFilter("Ratio == 0.5 or Ratio == \"1e3\" or Ratio == `-Inf`", schema);
    expect([0.5, 1000, -Infinity, 2].map((Ratio) => f.matches({ Ratio }))).toEqual([true, true, true, false]);
    expect(errorOf("Ratio == abc", schema).message).toContain("strconv.ParseFloat");
  });

  test("membership in a list of ints coerces the value to int", () => {
    const f = compileFilter('3 in Counts and "0x4" in Counts', schema);
    expect(f.matches({ Counts: [1, 3, 4] })).toBe(true);
    expect(f.matches({ Counts: [3] })).toBe(false);
    expect(errorOf("x in Counts", schema).message).toContain('Failed to coerce value "x" for selector "Counts"');
  });

  test("nested lists fan out at every level, nested maps take a key per level", () => {
    expect(compileFilter("Matrix.V == b", schema).matches({ Matrix: [[{ V: "a" }], [{ V: "c" }, { V: "b" }]] })).toBe(true);
    expect(compileFilter("Matrix is empty", schema).matches({ Matrix: [] })).toBe(true);
    const labels = { Labels: { team: { name: "core" } } };
    expect(compileFilter("Labels.team.name == core", schema).matches(labels)).toBe(true);
    expect(compileFilter('name in Labels.team and "team" in Labels', schema).matches(labels)).toBe(true);
    expect(compileFilter("Labels.other.name != core", schema).matches(labels)).toBe(true);
  });
});
