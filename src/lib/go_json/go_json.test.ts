import { describe, expect, test } from "bun:test";
import { seededRng } from "../../platform/index.ts";
import { decodeGoBase64, formatGoDuration, multiErrorText, parseGoBool, parseGoDuration, uuidError } from "./go_compat.ts";
import { parseGoJson } from "./parse.ts";
import { JsonReader } from "./reader.ts";
import { decodeGoSlice, decodeGoStruct, map, slice, struct } from "./schema.ts";
import { goIntOf, goUint64Of } from "./value.ts";

const msg = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("did not throw");
};

describe("Go durations", () => {
  test("parse like time.ParseDuration, in nanoseconds", () => {
    expect(parseGoDuration("0")).toBe(0);
    expect(parseGoDuration("15s")).toBe(15e9);
    expect(parseGoDuration("1m30s")).toBe(90e9);
    expect(parseGoDuration("1.5h")).toBe(5400e9);
    expect(parseGoDuration("-2ms")).toBe(-2e6);
    expect(parseGoDuration("300µs")).toBe(300e3);
    expect(parseGoDuration(".5s")).toBe(5e8);
  });

  test("fail with Go 1.14's messages", () => {
    expect(msg(() => parseGoDuration("abc"))).toBe("time: invalid duration abc");
    expect(msg(() => parseGoDuration(""))).toBe("time: invalid duration ");
    expect(msg(() => parseGoDuration("5"))).toBe("time: missing unit in duration 5");
    expect(msg(() => parseGoDuration("5x"))).toBe("time: unknown unit x in duration 5x");
    expect(msg(() => parseGoDuration(".s"))).toBe("time: invalid duration .s");
  });

  test("format like Duration.String", () => {
    expect(formatGoDuration(0)).toBe("0s");
    expect(formatGoDuration(1500)).toBe("1.5µs");
    expect(formatGoDuration(3e8)).toBe("300ms");
    expect(formatGoDuration(10e9)).toBe("10s");
    expect(formatGoDuration(90e9)).toBe("1m30s");
    expect(formatGoDuration(86400e9)).toBe("24h0m0s");
    expect(formatGoDuration(1.5e9)).toBe("1.5s");
    expect(formatGoDuration(-2e6)).toBe("-2ms");
  });
});

describe("Go base64, bools, UUIDs, multierror", () => {
  test("base64 decodes standard padded input and reports the byte Go reports", () => {
    expect(new TextDecoder().decode(decodeGoBase64("aGVsbG8="))).toBe("hello");
    expect(decodeGoBase64("").length).toBe(0);
    expect(new TextDecoder().decode(decodeGoBase64("aGVs\nbG8="))).toBe("hello");
    expect(msg(() => decodeGoBase64("aGVsbG8"))).toBe("illegal base64 data at input byte 4");
    expect(msg(() => decodeGoBase64("a$=="))).toBe("illegal base64 data at input byte 1");
    expect(msg(() => decodeGoBase64("aGVsbG8=x"))).toBe("illegal base64 data at input byte 8");
    expect(new TextDecoder().decode(decodeGoBase64("aA=="))).toBe("h");
    expect(msg(() => decodeGoBase64("aA="))).toBe("illegal base64 data at input byte 3");
  });

  test("base64: the built-in shortcut for canonical input gives the exact decoder's bytes", () => {
    const rng = seededRng(20261203);
    for (let n = 0; n < 300; n++) {
      const bytes = rng.bytes(n % 97);
      const text = btoa(String.fromCharCode(...bytes));
      expect(decodeGoBase64(text)).toEqual(bytes);
      // A newline inside (Go skips CR and LF) takes the exact path: same bytes.
      const split = text.length > 4 ? `${text.slice(0, 4)}\r\n${text.slice(4)}` : text;
      expect(decodeGoBase64(split)).toEqual(bytes);
    }
    // Non-zero trailing bits are allowed, as by Go's StdEncoding ("aB==" and "aA==" are both "h").
    expect(decodeGoBase64("aB==")).toEqual(new Uint8Array([0x68]));
  });

  test("ParseBool accepts Go's spellings only", () => {
    expect(["1", "t", "TRUE", "True"].map(parseGoBool)).toEqual([true, true, true, true]);
    expect(["0", "f", "FALSE", "false"].map(parseGoBool)).toEqual([false, false, false, false]);
    expect(parseGoBool("yes")).toBeUndefined();
  });

  test("ParseUUID's errors", () => {
    expect(uuidError("0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c")).toBeUndefined();
    expect(uuidError("abc")).toBe("uuid string is wrong length");
    expect(uuidError("0b5e9a1c08d6f-4f51-9d3a-2c4e6f7a8b9c")).toBe("uuid is improperly formatted");
    expect(uuidError("gb5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c")).toBe("encoding/hex: invalid byte: U+0067 'g'");
  });

  test("multierror lists", () => {
    expect(multiErrorText(["a"])).toBe("1 error occurred:\n\t* a\n\n");
    expect(multiErrorText(["a", "b"])).toBe("2 errors occurred:\n\t* a\n\t* b\n\n");
  });
});

describe("Go JSON decoding", () => {
  test("syntax errors read like encoding/json's", () => {
    expect(msg(() => parseGoJson(""))).toBe("EOF");
    expect(msg(() => parseGoJson("  "))).toBe("EOF");
    expect(msg(() => parseGoJson('{"a": 1'))).toBe("unexpected EOF");
    expect(msg(() => parseGoJson("nope"))).toBe("invalid character 'o' in literal null (expecting 'u')");
    expect(msg(() => parseGoJson("x"))).toBe("invalid character 'x' looking for beginning of value");
    expect(msg(() => parseGoJson('{"a" 1}'))).toBe("invalid character '1' after object key");
    expect(msg(() => parseGoJson('{"a":1 "b"}'))).toBe("invalid character '\"' after object key:value pair");
    expect(msg(() => parseGoJson("{1}"))).toBe("invalid character '1' looking for beginning of object key string");
    expect(msg(() => parseGoJson("[1 2]"))).toBe("invalid character '2' after array element");
    expect(msg(() => parseGoJson('"a\nb"'))).toBe("invalid character '\\n' in string literal");
    expect(msg(() => parseGoJson("1.x"))).toBe("invalid character 'x' after decimal point in numeric literal");
  });

  test("values parse; text after the first value is ignored, as json.Decoder does", () => {
    expect(parseGoJson('{"a": [1, "x\\u0041", true, null]} trailing')).toEqual({ a: [1, "xA", true, null] });
    const obj = parseGoJson('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    expect(Object.keys(obj)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  const S = struct("pkg.Thing", { Name: "string", Port: "int", Size: "uint64", On: "bool", Tags: slice("string"), Meta: map("string"), Raw: "bytes", Any: "any" }).struct;

  test("struct fields match case-insensitively, exact first; later duplicates win; unknown fields are ignored", () => {
    expect(decodeGoStruct(parseGoJson('{"name": "a", "NAME": "b", "port": 1, "other": 1}'), S)).toEqual({ Name: "b", Port: 1 });
    expect(decodeGoStruct(parseGoJson("null"), S)).toEqual({});
  });

  test("null leaves scalars unset and sets slices, maps and interfaces to nil", () => {
    expect(decodeGoStruct(parseGoJson('{"Name": null, "Tags": null, "Meta": null, "Any": null}'), S)).toEqual({ Tags: null, Meta: null, Any: null });
  });

  test("type mismatches fail with encoding/json's message", () => {
    expect(msg(() => decodeGoStruct(parseGoJson('{"Name": 1}'), S))).toBe("json: cannot unmarshal number into Go struct field Thing.Name of type string");
    expect(msg(() => decodeGoStruct(parseGoJson('{"Port": 1.5}'), S))).toBe("json: cannot unmarshal number 1.5 into Go struct field Thing.Port of type int");
    expect(msg(() => decodeGoStruct(parseGoJson('{"Size": -1}'), S))).toBe("json: cannot unmarshal number -1 into Go struct field Thing.Size of type uint64");
    expect(msg(() => decodeGoStruct(parseGoJson('{"Tags": "a"}'), S))).toBe("json: cannot unmarshal string into Go struct field Thing.Tags of type []string");
    expect(msg(() => decodeGoStruct(parseGoJson('{"Meta": {"a": 1}}'), S))).toBe("json: cannot unmarshal number into Go struct field Thing.Meta of type string");
    expect(msg(() => decodeGoStruct(parseGoJson('{"Raw": 1}'), S))).toBe("json: cannot unmarshal number into Go struct field Thing.Raw of type []uint8");
    expect(msg(() => decodeGoStruct(parseGoJson('{"Raw": "%%"}'), S))).toBe("illegal base64 data at input byte 0");
    expect(msg(() => decodeGoStruct(parseGoJson("[]"), S))).toBe("json: cannot unmarshal array into Go value of type pkg.Thing");
  });

  test("slices of structs", () => {
    const one = struct("pkg.Op", { KV: struct("pkg.KV", { Verb: "string" }) });
    expect(decodeGoSlice(parseGoJson('[{"kv": {"verb": "get"}}, null]'), one, "pkg.Ops")).toEqual([{ KV: { Verb: "get" } }, {}]);
    expect(msg(() => decodeGoSlice(parseGoJson("{}"), one, "pkg.Ops"))).toBe("json: cannot unmarshal object into Go value of type pkg.Ops");
    expect(msg(() => decodeGoSlice(parseGoJson('[{"KV": {"Verb": 1}}]'), one, "pkg.Ops"))).toBe(
      "json: cannot unmarshal number into Go struct field Op.KV.Verb of type string",
    );
  });
});

describe("JsonReader", () => {
  test("fields match in any letter case and as snake_case; an exact spelling wins; null is absent", () => {
    const r = JsonReader.of({ enable_tag_override: true, name: "a", Name: "b", port: null, Meta: { Some_Key: "v" } }, "ServiceDefinition");
    expect(r.bool("EnableTagOverride")).toBe(true);
    expect(r.str("Name")).toBe("b");
    expect(r.keyOf("Port")).toBe("Port");
    expect(r.int("Port")).toBe(0);
    expect(r.strMap("Meta")).toEqual({ Some_Key: "v" });
    expect(r.strList("Tags")).toBeNull();
  });

  test("durations are Go strings or nanoseconds, read as milliseconds", () => {
    const r = JsonReader.of({ ttl: "15s", Interval: 5_000_000_000 }, "CheckDefinition");
    expect([r.durationMs("TTL"), r.durationMs("Interval"), r.durationMs("Timeout")]).toEqual([15_000, 5_000, 0]);
  });

  test("type mismatches fail with Go's text, naming the field's path", () => {
    const r = JsonReader.of({ Port: "80", Weights: { Passing: 1.5 }, Checks: [{ TTL: 1 }, { TTL: true }], Timeout: "soon", TTL: [] }, "ServiceDefinition");
    expect(msg(() => r.int("Port"))).toBe("json: cannot unmarshal string into Go struct field ServiceDefinition.Port of type int");
    expect(msg(() => r.child("Weights")!.int("Passing"))).toBe(
      "json: cannot unmarshal number 1.5 into Go struct field ServiceDefinition.Weights.Passing of type int",
    );
    expect(msg(() => r.children("Checks")[1]!.str("TTL"))).toBe(
      "json: cannot unmarshal boolean into Go struct field ServiceDefinition.Checks[1].TTL of type string",
    );
    expect(msg(() => r.durationMs("Timeout"))).toBe('invalid "Timeout": time: invalid duration "soon"');
    expect(msg(() => r.durationMs("TTL"))).toBe('invalid "TTL": invalid format');
    expect(msg(() => JsonReader.of([], "CheckDefinition"))).toBe("json: cannot unmarshal array into Go struct field CheckDefinition of type struct");
  });
});

const S = struct("api.Thing", { Port: "int", Flags: "uint64", Ratio: "float64", Ports: slice("int"), ByName: map("uint64") });
const decode = (body: string) => decodeGoStruct<Record<string, unknown>>(parseGoJson(body), S.struct);

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
