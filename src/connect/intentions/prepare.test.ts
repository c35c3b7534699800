/** Create / update / delete preparation: defaults, IDs, times, hash, uniqueness. */
import { describe, expect, test } from "bun:test";
import { blake2b } from "@noble/hashes/blake2.js";
import {
  checkIntentionDelete,
  checkIntentionDuplicate,
  formatGoTime,
  intentionHash,
  IntentionError,
  prepareIntentionCreate,
  prepareIntentionUpdate,
  type Intention,
} from "./index.ts";

const T0 = Date.UTC(2020, 5, 1, 10, 0, 0, 120);
const T1 = Date.UTC(2020, 5, 2, 11, 30, 0, 0);
const body = { SourceName: "web", DestinationName: "db", Action: "allow" };

const rejection = (f: () => unknown): IntentionError => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(IntentionError);
    return e as IntentionError;
  }
  throw new Error("expected a rejection");
};

describe("prepareIntentionCreate", () => {
  test("fills Consul's defaults and computed fields, in Go's field order", () => {
    const ixn = prepareIntentionCreate(body, "id-1", { nowMs: T0 });
    expect(ixn).toEqual({
      ID: "id-1",
      Description: "",
      SourceNS: "default",
      SourceName: "web",
      DestinationNS: "default",
      DestinationName: "db",
      SourceType: "consul",
      Action: "allow",
      DefaultAddr: "",
      DefaultPort: 0,
      Meta: {},
      Precedence: 9,
      CreatedAt: "2020-06-01T10:00:00.12Z",
      UpdatedAt: "2020-06-01T10:00:00.12Z",
      Hash: ixn.Hash,
      CreateIndex: 0,
      ModifyIndex: 0,
    });
    expect(Object.keys(ixn)).toEqual([
      "ID", "Description", "SourceNS", "SourceName", "DestinationNS", "DestinationName", "SourceType", "Action",
      "DefaultAddr", "DefaultPort", "Meta", "Precedence", "CreatedAt", "UpdatedAt", "Hash", "CreateIndex", "ModifyIndex",
    ]);
  });

  test("an explicit namespace is kept; precedence follows the wildcards", () => {
    const ixn = prepareIntentionCreate({ ...body, SourceNS: "*", SourceName: "*", DestinationName: "*" }, "id", { nowMs: T0 });
    expect([ixn.SourceNS, ixn.DestinationNS, ixn.Precedence]).toEqual(["*", "default", 4]);
  });

  test("an ID in the body is refused", () => {
    const e = rejection(() => prepareIntentionCreate({ ...body, ID: "mine" }, "id", { nowMs: T0 }));
    expect([e.code, e.message]).toEqual(["invalid", "ID must be empty when creating a new intention"]);
  });

  test("an empty ID in the body is fine", () => {
    expect(prepareIntentionCreate({ ...body, ID: "" }, "id-2", { nowMs: T0 }).ID).toBe("id-2");
  });
});

describe("prepareIntentionUpdate", () => {
  const stored: Intention = { ...prepareIntentionCreate(body, "id-1", { nowMs: T0 }), CreateIndex: 5, ModifyIndex: 7 };

  test("replaces every field, keeps CreatedAt and CreateIndex, sets UpdatedAt, takes the ID from the URL", () => {
    const ixn = prepareIntentionUpdate({ ID: "ignored", SourceName: "api", DestinationName: "db", Action: "deny" }, "id-1", stored, { nowMs: T1 });
    expect(ixn.ID).toBe("id-1");
    expect([ixn.SourceName, ixn.Action, ixn.Description]).toEqual(["api", "deny", ""]);
    expect([ixn.CreatedAt, ixn.UpdatedAt, ixn.CreateIndex]).toEqual(["2020-06-01T10:00:00.12Z", "2020-06-02T11:30:00Z", 5]);
    expect(ixn.Hash).not.toBe(stored.Hash);
  });

  test("a missing intention is refused before validation", () => {
    const e = rejection(() => prepareIntentionUpdate({}, "nope", undefined, { nowMs: T1 }));
    expect(e.message).toBe("Cannot modify non-existent intention: 'nope'");
  });

  test("validation applies to updates too", () => {
    expect(rejection(() => prepareIntentionUpdate({ ...body, Action: "" }, "id-1", stored, { nowMs: T1 })).message).toBe(
      "1 error occurred:\n\t* Action must be set to 'allow' or 'deny'\n\n",
    );
  });

  test("deleting a missing intention is refused", () => {
    expect(rejection(() => checkIntentionDelete("gone", undefined)).message).toBe("Cannot delete non-existent intention: 'gone'");
    checkIntentionDelete("id-1", stored);
  });
});

describe("intentionHash", () => {
  const ixn = prepareIntentionCreate({ ...body, Meta: { b: "2", a: "1" }, Description: "d" }, "id-1", { nowMs: T0 });

  test("is BLAKE2b-256 over Consul's field sequence, base64 as Go encodes []byte", () => {
    const enc = new TextEncoder();
    const parts = ["id-1", "d", "default", "web", "default", "db", "consul", "allow"].map((s) => enc.encode(s));
    const prec = new Uint8Array(8);
    prec[0] = 9;
    const metaBytes = ["a", "1", "b", "2"].map((s) => enc.encode(s));
    const all = new Uint8Array([...parts, prec, ...metaBytes].flatMap((p) => [...p]));
    const want = btoa(String.fromCharCode(...blake2b(all, { dkLen: 32 })));
    expect(ixn.Hash).toBe(want);
    expect(ixn.Hash).toHaveLength(44);
  });

  test("ignores times and indexes, and Meta insertion order", () => {
    const again = prepareIntentionCreate({ ...body, Meta: { a: "1", b: "2" }, Description: "d" }, "id-1", { nowMs: T1 });
    expect(again.Hash).toBe(ixn.Hash);
    expect(intentionHash({ ...ixn, Action: "deny" })).not.toBe(ixn.Hash);
    expect(intentionHash({ ...ixn, Meta: { a: "1" } })).not.toBe(ixn.Hash);
  });
});

describe("formatGoTime", () => {
  test.each([
    [Date.UTC(2020, 0, 1), "2020-01-01T00:00:00Z"],
    [Date.UTC(2020, 0, 1, 0, 0, 0, 5), "2020-01-01T00:00:00.005Z"],
    [Date.UTC(2020, 0, 1, 0, 0, 0, 500), "2020-01-01T00:00:00.5Z"],
  ])("%i -> %s", (ms, want) => {
    expect(formatGoTime(ms)).toBe(want);
  });
});

describe("checkIntentionDuplicate", () => {
  const a = prepareIntentionCreate(body, "a", { nowMs: T0 });

  test("the same 4-tuple under another ID is refused, compared case-insensitively", () => {
    const b = prepareIntentionCreate({ ...body, SourceName: "WEB", Action: "deny" }, "b", { nowMs: T0 });
    expect(rejection(() => checkIntentionDuplicate([a], b)).message).toBe(
      "duplicate intention found: ALLOW default/web => default/db (ID: a, Precedence: 9)",
    );
  });

  test("an update of the same ID, or another tuple, is fine", () => {
    checkIntentionDuplicate([a], { ...a, Action: "deny" });
    checkIntentionDuplicate([a], prepareIntentionCreate({ ...body, SourceName: "api" }, "c", { nowMs: T0 }));
  });
});
