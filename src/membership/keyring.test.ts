import { describe, expect, test } from "bun:test";
import { inspect } from "node:util";
import { seededRng } from "../platform/index.ts";
import {
  encodeBase64,
  formatKeyringFile,
  GossipKey,
  InvalidKeyError,
  Keyring,
  KeyringError,
  parseKeyringFile,
} from "./keyring.ts";

const rng = seededRng(7);
const b64 = (n: number) => Buffer.from(rng.bytes(n)).toString("base64");

/** The message must not contain the secret, nor any 8-character piece of it. */
function expectNoLeak(message: string, secret: string) {
  for (let i = 0; i + 8 <= secret.length; i++) expect(message).not.toContain(secret.slice(i, i + 8));
}

function errorOf(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected an error");
}

describe("GossipKey", () => {
  test.each([16, 24, 32])("parses and re-encodes a %i-byte key", (n) => {
    const text = b64(n);
    const key = GossipKey.fromBase64(text);
    expect(key.size).toBe(n);
    expect(key.toBase64()).toBe(text);
    expect(Buffer.from(key.bytes()).toString("base64")).toBe(text);
  });

  test("ignores surrounding whitespace (a key read from a file)", () => {
    const text = b64(32);
    expect(GossipKey.fromBase64(`  ${text}\n`).toBase64()).toBe(text);
  });

  test.each([1, 15, 17, 20, 23, 31, 33, 48, 64])("rejects a %i-byte key, naming the length, not the key", (n) => {
    const text = b64(n);
    const err = errorOf(() => GossipKey.fromBase64(text));
    expect(err).toBeInstanceOf(InvalidKeyError);
    expect(err.message).toContain(`${n} bytes`);
    expect(err.message).toContain("16, 24 or 32");
    expectNoLeak(err.message, text);
    expect(errorOf(() => GossipKey.fromBytes(new Uint8Array(n)))).toBeInstanceOf(InvalidKeyError);
  });

  test("rejects bad base64 with the problem, never the value", () => {
    const good = b64(32);
    const cases: [string, string][] = [
      ["", "empty"],
      ["   ", "empty"],
      [good.replace(/=+$/, ""), "padding"],
      [good.slice(0, 10) + "!" + good.slice(11), "character 11 is not in the base64 alphabet"],
      [good.slice(0, 5) + "-" + good.slice(6), "URL-safe"],
      [good.slice(0, 5) + "_" + good.slice(6), "URL-safe"],
      [good.slice(0, 20) + " " + good.slice(20), "character 21"],
      [good.slice(0, 3) + "é" + good.slice(4), "character 4"],
      ["====", "character 1"],
      ["AB=C", "character 3"],
      [good + "====", "not in the base64 alphabet"],
    ];
    for (const [text, why] of cases) {
      const err = errorOf(() => GossipKey.fromBase64(text));
      expect(err).toBeInstanceOf(InvalidKeyError);
      expect(err.message).toContain("not valid base64");
      expect(err.message).toContain(why);
      expectNoLeak(err.message, text.trim());
    }
  });

  test("rejects values that are not strings or bytes", () => {
    expect(errorOf(() => GossipKey.fromBase64(42 as unknown as string))).toBeInstanceOf(InvalidKeyError);
    expect(errorOf(() => GossipKey.fromBytes([1, 2] as unknown as Uint8Array))).toBeInstanceOf(InvalidKeyError);
  });

  test("holds a private copy of its bytes", () => {
    const raw = rng.bytes(32);
    const key = GossipKey.fromBytes(raw);
    const text = key.toBase64();
    raw.fill(0);
    key.bytes().fill(0);
    expect(key.toBase64()).toBe(text);
  });

  test("equals compares key material", () => {
    const text = b64(32);
    expect(GossipKey.fromBase64(text).equals(GossipKey.fromBase64(text))).toBe(true);
    expect(GossipKey.fromBase64(text).equals(GossipKey.fromBase64(b64(32)))).toBe(false);
    expect(GossipKey.fromBytes(new Uint8Array(16)).equals(GossipKey.fromBytes(new Uint8Array(32)))).toBe(false);
  });

  test("is redacted in strings, JSON and console inspection", () => {
    const text = b64(32);
    const key = GossipKey.fromBase64(text);
    for (const shown of [String(key), `${key}`, JSON.stringify({ encrypt: key }), inspect(key), inspect({ key }), Bun.inspect(key)]) {
      expect(shown).toContain("redacted");
      expectNoLeak(shown, text);
    }
  });
});

describe("Keyring", () => {
  const [a, b, c] = [b64(32), b64(32), b64(16)];

  test("starts with the primary; install appends, is idempotent, and keeps the primary", () => {
    const ring = new Keyring(a);
    expect(ring.exportKeys()).toEqual([a]);
    expect(ring.install(b)).toBe(true);
    expect(ring.install(c)).toBe(true);
    expect(ring.install(b)).toBe(false);
    expect(ring.install(a)).toBe(false);
    expect(ring.exportKeys()).toEqual([a, b, c]);
    expect(ring.primary.toBase64()).toBe(a);
    expect(ring.size).toBe(3);
    expect(ring.has(c)).toBe(true);
    expect(ring.has(b64(32))).toBe(false);
  });

  test("use makes an installed key primary; the old primary moves to second (memberlist order)", () => {
    const ring = new Keyring(a, [b, c]);
    ring.use(c);
    expect(ring.exportKeys()).toEqual([c, a, b]);
    ring.use(c);
    expect(ring.exportKeys()).toEqual([c, a, b]);
    ring.use(b);
    expect(ring.exportKeys()).toEqual([b, c, a]);
  });

  test("use refuses a key that is not installed, without naming it", () => {
    const ring = new Keyring(a);
    const other = b64(32);
    const err = errorOf(() => ring.use(other));
    expect(err).toBeInstanceOf(KeyringError);
    expect(err.message).toContain("not installed");
    expectNoLeak(err.message, other);
    expect(ring.exportKeys()).toEqual([a]);
  });

  test("remove refuses the primary with a clear error and removes others", () => {
    const ring = new Keyring(a, [b]);
    const err = errorOf(() => ring.remove(a));
    expect(err).toBeInstanceOf(KeyringError);
    expect(err.message).toContain("removing the primary key is not allowed");
    expectNoLeak(err.message, a);
    expect(ring.exportKeys()).toEqual([a, b]);
    expect(ring.remove(b)).toBe(true);
    expect(ring.remove(b)).toBe(false);
    expect(ring.exportKeys()).toEqual([a]);
    expect(() => ring.remove(a)).toThrow(KeyringError);
  });

  test("operations validate their key argument", () => {
    const ring = new Keyring(a);
    expect(() => ring.install("nope")).toThrow(InvalidKeyError);
    expect(() => ring.use(b64(20))).toThrow(InvalidKeyError);
    expect(() => ring.remove("")).toThrow(InvalidKeyError);
    expect(() => new Keyring(b64(8))).toThrow(InvalidKeyError);
  });

  test("keys() is a snapshot", () => {
    const ring = new Keyring(a, [b]);
    const before = ring.keys();
    ring.remove(b);
    expect(before.map((k) => k.toBase64())).toEqual([a, b]);
    expect(ring.keys().map((k) => k.toBase64())).toEqual([a]);
  });

  test("fromBase64List: first is primary; a bad entry is named by index", () => {
    expect(Keyring.fromBase64List([b, a]).primary.toBase64()).toBe(b);
    const bad = b64(31);
    const err = errorOf(() => Keyring.fromBase64List([a, bad]));
    expect(err).toBeInstanceOf(InvalidKeyError);
    expect(err.message).toContain("key 1:");
    expectNoLeak(err.message, bad);
    expect(() => Keyring.fromBase64List([])).toThrow(InvalidKeyError);
  });

  test("keyring file round trip; parse errors never quote the file", () => {
    const ring = new Keyring(a, [b, c]);
    const text = formatKeyringFile(ring);
    expect(JSON.parse(text)).toEqual([a, b, c]);
    expect(parseKeyringFile(text).exportKeys()).toEqual([a, b, c]);
    for (const bad of [`["${a}"`, `{"k":"${a}"}`, `["${a}", 3]`, "[]", `["${a}", "${b64(12)}"]`]) {
      const err = errorOf(() => parseKeyringFile(bad));
      expect(err).toBeInstanceOf(InvalidKeyError);
      expectNoLeak(err.message, a);
    }
  });

  test("is redacted in strings, JSON and console inspection", () => {
    const ring = new Keyring(a, [b]);
    for (const shown of [String(ring), JSON.stringify({ ring }), inspect(ring), Bun.inspect(ring)]) {
      expect(shown).toContain("2 key(s)");
      expectNoLeak(shown, a);
      expectNoLeak(shown, b);
    }
  });
});

test("encodeBase64 matches the standard encoding for every length", () => {
  for (let n = 0; n < 70; n++) {
    const bytes = rng.bytes(n);
    expect(encodeBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
  }
});
