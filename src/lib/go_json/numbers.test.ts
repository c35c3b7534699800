import { describe, expect, test } from "bun:test";
import { parseGoJson } from "./parse.ts";
import { JsonReader } from "./reader.ts";
import { decodeGoSlice, decodeGoStruct, map, slice, struct } from "./schema.ts";
import { goIntOf, goUint64Of } from "./value.ts";

const S = struct("api.Thing", { Port: "int", Flags: "uint64", Ratio: "float64", Ports: slice("int"), ByName: map("uint64") });
const decode = (body: string) => decodeGoStruct<Record<string, unknown>>(parseGoJson(body), S.struct);
const msg = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("did not throw");
};

describe("integers as strconv reads them", () => {
  test("goIntOf: integer literals within int64 and within what a JS number holds exactly", () => {
    expect(goIntOf("0")).toBe(0);
    expect(goIntOf("-42")).toBe(-42);
    expect(goIntOf("9007199254740991")).toBe(9007199254740991);
    for (const bad of ["1.0", "1e3", "1E3", "-", "01", "9223372036854775808", "9007199254740992", "-9007199254740992", "+1", ""]) {
      expect(goIntOf(bad)).toBeUndefined();
    }
  });

  test("goUint64Of: exact over the whole uint64 range, refusing signs, fractions, exponents and overflow", () => {
    expect(goUint64Of("0")).toBe(0);
    expect(goUint64Of("9007199254740991")).toBe(9007199254740991);
    expect(goUint64Of("9007199254740993")).toBe(9007199254740993n);
    expect(goUint64Of("18446744073709551615")).toBe(18446744073709551615n);
    for (const bad of ["18446744073709551616", "-0", "-1", "1.5", "1e3", "0x10", " 1", ""]) expect(goUint64Of(bad)).toBeUndefined();
  });

  test("struct fields: fractions, exponents and out-of-range numbers fail with Go's text, naming the literal", () => {
    expect(decode(`{"Port": 8080, "Flags": 18446744073709551615, "Ratio": 1e3}`)).toEqual({ Port: 8080, Flags: 18446744073709551615n, Ratio: 1000 });
    expect(msg(() => decode(`{"Port": 1e3}`))).toBe("json: cannot unmarshal number 1e3 into Go struct field Thing.Port of type int");
    expect(msg(() => decode(`{"Port": 80.0}`))).toBe("json: cannot unmarshal number 80.0 into Go struct field Thing.Port of type int");
    expect(msg(() => decode(`{"Port": 9223372036854775808}`))).toBe("json: cannot unmarshal number 9223372036854775808 into Go struct field Thing.Port of type int");
    expect(msg(() => decode(`{"Flags": -1}`))).toBe("json: cannot unmarshal number -1 into Go struct field Thing.Flags of type uint64");
    expect(msg(() => decode(`{"Flags": 18446744073709551616}`))).toBe("json: cannot unmarshal number 18446744073709551616 into Go struct field Thing.Flags of type uint64");
  });

  test("slices, maps and top-level slices read each element's own literal", () => {
    expect(decode(`{"Ports": [1, 2], "ByName": {"a": 9007199254740993}}`)).toEqual({ Ports: [1, 2], ByName: { a: 9007199254740993n } });
    expect(msg(() => decode(`{"Ports": [1, 2.5]}`))).toBe("json: cannot unmarshal number 2.5 into Go struct field Thing.Ports of type int");
    const ops = decodeGoSlice<{ Flags: unknown }>(parseGoJson(`[{"Flags": 12345678901234567890}]`), S, "api.Things");
    expect(ops[0]!.Flags).toBe(12345678901234567890n);
  });

  test("the field reader refuses the same literals", () => {
    const r = (body: string) => JsonReader.of(parseGoJson(body), "ServiceDefinition");
    expect(r(`{"port": 8500}`).int("Port")).toBe(8500);
    expect(msg(() => r(`{"Port": 1e2}`).int("Port"))).toBe("json: cannot unmarshal number 1e2 into Go struct field ServiceDefinition.Port of type int");
    expect(msg(() => r(`{"Port": 85.5}`).int("Port"))).toBe("json: cannot unmarshal number 85.5 into Go struct field ServiceDefinition.Port of type int");
  });
});

describe("nesting depth", () => {
  test("bodies nested deeper than MAX_JSON_DEPTH fail with Go's scanner words, not a stack overflow", () => {
    expect(() => parseGoJson("[".repeat(1000) + "]".repeat(1000))).not.toThrow();
    expect(msg(() => parseGoJson("[".repeat(1001) + "]".repeat(1001)))).toBe("invalid character '[' exceeded max depth");
    expect(msg(() => parseGoJson('{"a":'.repeat(50_000)))).toBe("invalid character '{' exceeded max depth");
    // Siblings do not add up: depth is per path.
    expect(() => parseGoJson("[" + "[[]],".repeat(5000) + "[]]")).not.toThrow();
  });
});
