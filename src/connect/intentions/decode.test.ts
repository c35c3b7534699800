/** decodeIntentionBody: encoding/json with DisallowUnknownFields, as Consul 1.8's decodeBody. */
import { describe, expect, test } from "bun:test";
import { decodeIntentionBody, IntentionError } from "./index.ts";

const decodeError = (v: unknown): string => {
  try {
    decodeIntentionBody(v);
  } catch (e) {
    expect(e).toBeInstanceOf(IntentionError);
    expect((e as IntentionError).code).toBe("decode");
    return (e as Error).message;
  }
  throw new Error("expected a decode error");
};

describe("field names", () => {
  test("match case-insensitively", () => {
    expect(
      decodeIntentionBody({ sourcename: "web", DESTINATIONNAME: "db", action: "deny", SourceNs: "default", sourceType: "consul", meta: { K: "V" } }),
    ).toEqual({ SourceName: "web", DestinationName: "db", Action: "deny", SourceNS: "default", SourceType: "consul", Meta: { K: "V" } });
  });

  test("snake_case is not translated: it is an unknown field", () => {
    expect(decodeError({ source_name: "web" })).toBe('json: unknown field "source_name"');
  });

  test("an unknown field fails (DisallowUnknownFields)", () => {
    expect(decodeError({ SourceName: "web", Permissions: [] })).toBe('json: unknown field "Permissions"');
  });

  test("Meta keys keep their case", () => {
    expect(decodeIntentionBody({ Meta: { Owner: "ops", owner: "dev" } }).Meta).toEqual({ Owner: "ops", owner: "dev" });
  });
});

describe("values", () => {
  test("read-only fields the api client echoes back are accepted and dropped", () => {
    const echoed = {
      ID: "0f4b7b4e-0000-0000-0000-000000000000",
      SourceName: "web",
      Precedence: 9,
      CreatedAt: "2020-06-01T10:00:00Z",
      UpdatedAt: "2020-06-01T10:00:00Z",
      Hash: "AAAA",
      CreateIndex: 10,
      ModifyIndex: 12,
      DefaultAddr: "",
      DefaultPort: 0,
    };
    expect(decodeIntentionBody(echoed)).toEqual({ ID: echoed.ID, SourceName: "web", DefaultAddr: "", DefaultPort: 0 });
  });

  test("null leaves a field unset; a null Meta is nil; a null Meta value is the empty string", () => {
    expect(decodeIntentionBody({ SourceName: null, Description: null, Meta: null })).toEqual({ Meta: null });
    expect(decodeIntentionBody({ Meta: { a: null } })).toEqual({ Meta: { a: "" } });
  });

  test("a top-level null is an empty body", () => {
    expect(decodeIntentionBody(null)).toEqual({});
  });

  test("a __proto__ Meta key is data", () => {
    const meta = decodeIntentionBody(JSON.parse('{"Meta": {"__proto__": "x"}}')).Meta!;
    expect(Object.keys(meta)).toEqual(["__proto__"]);
    expect(meta["__proto__"]).toBe("x");
  });
});

const MISMATCHES: readonly (readonly [unknown, string])[] = [
  [[], "json: cannot unmarshal array into Go value of type structs.Intention"],
  ["web", "json: cannot unmarshal string into Go value of type structs.Intention"],
  [{ SourceName: 1 }, "json: cannot unmarshal number into Go struct field Intention.SourceName of type string"],
  [{ Action: true }, "json: cannot unmarshal bool into Go struct field Intention.Action of type structs.IntentionAction"],
  [{ SourceType: {} }, "json: cannot unmarshal object into Go struct field Intention.SourceType of type structs.IntentionSourceType"],
  [{ DefaultPort: "80" }, "json: cannot unmarshal string into Go struct field Intention.DefaultPort of type int"],
  [{ DefaultPort: 1.5 }, "json: cannot unmarshal number 1.5 into Go struct field Intention.DefaultPort of type int"],
  [{ CreateIndex: -1 }, "json: cannot unmarshal number -1 into Go struct field Intention.CreateIndex of type uint64"],
  [{ Meta: [] }, "json: cannot unmarshal array into Go struct field Intention.Meta of type map[string]string"],
  [{ Meta: { a: 1 } }, "json: cannot unmarshal number into Go struct field Intention.Meta of type string"],
  [{ CreatedAt: 0 }, "json: cannot unmarshal number into Go struct field Intention.CreatedAt of type string"],
];

describe("type mismatches", () => {
  test.each(MISMATCHES)("%j", (body, want) => {
    expect(decodeError(body)).toBe(want);
  });

  test("the first error in document order wins", () => {
    expect(decodeError({ SourceName: 1, Bogus: true })).toContain("Intention.SourceName");
    expect(decodeError({ Bogus: true, SourceName: 1 })).toBe('json: unknown field "Bogus"');
  });
});
