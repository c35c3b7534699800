import { describe, expect, test } from "bun:test";
import { MAX_META_BYTES } from "./config.ts";
import { TAGS_MAGIC, TagsTooLargeError, decodeTags, encodeTags, tagsEqual, tryDecodeTags } from "./tags.ts";
import { CodecError } from "./wire.ts";

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");

describe("encodeTags / decodeTags", () => {
  test("round trips, including unicode, empty values and a __proto__ key", () => {
    const cases = [
      { role: "consul", dc: "dc1", port: "8300" },
      { a: "", "ключ": "значение ✓", emoji: "🚀" },
      { ["__proto__"]: "x", constructor: "y" },
      { long: "v".repeat(300) },
    ];
    for (const tags of cases) {
      const bytes = encodeTags(tags);
      expect(bytes[0]).toBe(TAGS_MAGIC);
      const back = decodeTags(bytes);
      expect(Object.keys(back).sort()).toEqual(Object.keys(tags).sort());
      expect(tagsEqual(back, tags)).toBe(true);
    }
    const proto = decodeTags(encodeTags(JSON.parse('{"__proto__":"x"}')));
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(proto, "__proto__")?.value).toBe("x");
  });

  test("empty tags are empty metadata, and empty metadata is no tags", () => {
    expect(encodeTags({}).length).toBe(0);
    expect(decodeTags(new Uint8Array(0))).toEqual({});
  });

  test("deterministic: insertion order does not matter, bytes are canonical and compact", () => {
    const a = encodeTags({ role: "node", dc: "dc1", id: "x" });
    const b = encodeTags({ id: "x", role: "node", dc: "dc1" });
    expect(hex(a)).toBe(hex(b));
    // magic, then (len,key,len,value) sorted: dc, id, role
    expect(hex(a)).toBe("c7" + "026463" + "03646331" + "026964" + "0178" + "04726f6c65" + "046e6f6465");
    expect(a.length).toBe(1 + 3 + 4 + 3 + 2 + 5 + 5);
  });

  test("lengths of 128 bytes and more use a two-byte varint", () => {
    const bytes = encodeTags({ k: "x".repeat(200) });
    expect(bytes.length).toBe(1 + 2 + 2 + 200);
    expect(decodeTags(bytes)["k"]).toBe("x".repeat(200));
  });

  test("size limit: at the limit fits, one byte over throws a clear TagsTooLargeError", () => {
    const overhead = 1 + 1 + 1 + 2; // magic, key len, key "k", value len (2-byte varint)
    const fits = encodeTags({ k: "x".repeat(MAX_META_BYTES - overhead) });
    expect(fits.length).toBe(MAX_META_BYTES);
    let err: unknown;
    try { encodeTags({ k: "x".repeat(MAX_META_BYTES - overhead + 1), small: "1" }); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(TagsTooLargeError);
    expect(err).toBeInstanceOf(RangeError);
    const e = err as TagsTooLargeError;
    expect(e.limit).toBe(MAX_META_BYTES);
    expect(e.size).toBeGreaterThan(MAX_META_BYTES);
    expect(e.message).toContain(`${MAX_META_BYTES}-byte metadata limit`);
    expect(e.message).toContain("k=");
    expect(() => encodeTags({ a: "12345" }, 8)).toThrow(TagsTooLargeError);
  });

  test("rejects empty keys and non-string values", () => {
    expect(() => encodeTags({ "": "x" })).toThrow(TypeError);
    expect(() => encodeTags({ a: 1 } as unknown as Record<string, string>)).toThrow(TypeError);
  });

  test("decoding is strict and throws only CodecError", () => {
    const good = encodeTags({ a: "1", b: "2" });
    const bad: Uint8Array[] = [
      Uint8Array.of(0x00, 1, 0x61, 1, 0x31), // bad magic
      Uint8Array.of(TAGS_MAGIC), // magic without tags
      good.slice(0, good.length - 1), // truncated value
      Uint8Array.of(TAGS_MAGIC, 1, 0x61), // key without value
      Uint8Array.of(TAGS_MAGIC, 1, 0x62, 0, 1, 0x61, 0), // unsorted
      Uint8Array.of(TAGS_MAGIC, 1, 0x61, 0, 1, 0x61, 0), // duplicate
      Uint8Array.of(TAGS_MAGIC, 0, 0), // empty key
      Uint8Array.of(TAGS_MAGIC, 1, 0xff, 0), // invalid UTF-8
      Uint8Array.of(TAGS_MAGIC, 0x81, 0x00, 0x61, 0), // non-minimal varint
      Uint8Array.of(TAGS_MAGIC, 0xff, 0xff, 0xff, 0xff, 0x0f), // absurd length
    ];
    for (const b of bad) {
      expect(() => decodeTags(b)).toThrow(CodecError);
      expect(tryDecodeTags(b)).toBeUndefined();
    }
    expect(tryDecodeTags(good)).toEqual({ a: "1", b: "2" });
  });

  test("tagsEqual compares keys and values", () => {
    expect(tagsEqual({ a: "1" }, { a: "1" })).toBe(true);
    expect(tagsEqual({ a: "1" }, { a: "2" })).toBe(false);
    expect(tagsEqual({ a: "1" }, { b: "1" })).toBe(false);
    expect(tagsEqual({ a: "1" }, { a: "1", b: "" })).toBe(false);
  });
});
