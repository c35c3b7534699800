import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import {
  KEY_QUERY_NAMES, KeyResponseCollector, decodeKeyResponse, encodeKeyResponse, handleInternalQuery, keyQuery, type KeyOperation,
} from "./key_query.ts";
import { GossipKey, InvalidKeyError, Keyring } from "./keyring.ts";

const rng = seededRng(5);
const newKey = (n = 32) => GossipKey.fromBytes(rng.bytes(n));
const [k1, k2, k3] = [newKey(), newKey(), newKey(16)];

/** Runs `op` on a member with `keyring`, as its Serf would for the query from `keyQuery`. */
function member(keyring: Keyring | undefined, op: KeyOperation, key?: GossipKey, persist?: (k: Keyring) => void) {
  const q = keyQuery(op, key?.toBase64());
  expect(q.name).toBe(KEY_QUERY_NAMES[op]);
  return decodeKeyResponse(handleInternalQuery(q.name, q.payload, { keyring, persist }, 1000)!);
}

describe("a member's answer to the key queries", () => {
  test("install adds a key (not primary), use makes it primary, remove drops it; each is persisted", () => {
    const ring = new Keyring(k1);
    const saved: string[][] = [];
    const persist = (k: Keyring) => void saved.push(k.exportKeys());
    expect(member(ring, "install", k2, persist)).toEqual({ result: true, message: "", keys: [], primaryKey: "" });
    expect(ring.exportKeys()).toEqual([k1.toBase64(), k2.toBase64()]);
    expect(member(ring, "use", k2, persist).result).toBe(true);
    expect(ring.primary.equals(k2)).toBe(true);
    expect(member(ring, "remove", k1, persist).result).toBe(true);
    expect(ring.exportKeys()).toEqual([k2.toBase64()]);
    expect(saved).toEqual([[k1.toBase64(), k2.toBase64()], [k2.toBase64(), k1.toBase64()], [k2.toBase64()]]);
  });

  test("list reports every installed key and the primary", () => {
    const ring = new Keyring(k2, [k1, k3]);
    expect(member(ring, "list")).toEqual({ result: true, message: "", keys: [k2, k1, k3].map((k) => k.toBase64()), primaryKey: k2.toBase64() });
  });

  test("refusals use memberlist's and serf's words and change nothing", () => {
    const ring = new Keyring(k1, [k2]);
    const saved: unknown[] = [];
    expect(member(ring, "remove", k1, (k) => saved.push(k))).toEqual({ result: false, message: "Removing the primary key is not allowed", keys: [], primaryKey: "" });
    expect(member(ring, "use", k3, (k) => saved.push(k))).toMatchObject({ result: false, message: "Requested key is not in the keyring" });
    expect(ring.exportKeys()).toEqual([k1.toBase64(), k2.toBase64()]);
    expect(saved).toEqual([]);
    expect(member(undefined, "install", k2)).toMatchObject({ result: false, message: "No keyring to modify (encryption not enabled)" });
    expect(member(undefined, "list")).toMatchObject({ result: false, message: "Keyring is empty (encryption not enabled)" });
  });

  test("a failure to persist is the member's error (serf writeKeyringFile)", () => {
    const ring = new Keyring(k1);
    const r = member(ring, "install", k2, () => {
      throw new Error("open /data/serf/local.keyring: permission denied");
    });
    expect(r).toMatchObject({ result: false, message: "open /data/serf/local.keyring: permission denied" });
  });

  test("a malformed request is answered with a failure; ping and unknown internal queries get no answer", () => {
    const bad = decodeKeyResponse(handleInternalQuery(KEY_QUERY_NAMES.install, Uint8Array.of(1, 0), { keyring: new Keyring(k1) }, 1000)!);
    expect(bad).toMatchObject({ result: false, message: "Failed to decode key request" });
    const wrongSize = handleInternalQuery(KEY_QUERY_NAMES.install, Uint8Array.of(1, 0, 3, 1, 2, 3), { keyring: new Keyring(k1) }, 1000)!;
    expect(decodeKeyResponse(wrongSize)).toMatchObject({ result: false, message: "key size must be 16, 24 or 32 bytes" });
    expect(handleInternalQuery("_serf_ping", new Uint8Array(0), {}, 1000)).toBeUndefined();
    expect(handleInternalQuery("_serf_conflict", new Uint8Array(0), {}, 1000)).toBeUndefined();
  });

  test("a key list too long for one response is truncated with serf's message", () => {
    const keys = Array.from({ length: 30 }, () => newKey());
    const ring = new Keyring(keys[0]!, keys.slice(1));
    const q = keyQuery("list");
    const payload = handleInternalQuery(q.name, q.payload, { keyring: ring }, 1000)!;
    expect(payload.length).toBeLessThanOrEqual(1000);
    const r = decodeKeyResponse(payload);
    expect(r.result).toBe(true);
    expect(r.keys.length).toBeLessThan(30);
    expect(r.message).toBe(`truncated key list response, showing first ${r.keys.length} of 30 keys`);
    expect(r.keys).toEqual(keys.slice(0, r.keys.length).map((k) => k.toBase64()));
  });

  test("the originator refuses a key that is not base64 of 16, 24 or 32 bytes before sending anything", () => {
    expect(() => keyQuery("install", "not base64!")).toThrow(InvalidKeyError);
    expect(() => keyQuery("use", "c2hvcnQ=")).toThrow(InvalidKeyError);
    expect(() => keyQuery("remove")).toThrow(InvalidKeyError);
  });
});

describe("aggregating the answers (serf KeyManager)", () => {
  const ok = (keys: string[] = [], primaryKey = "") => encodeKeyResponse({ result: true, message: "", keys, primaryKey });

  test("counts keys and primaries per node and finishes once every node answered", () => {
    const c = new KeyResponseCollector(3);
    expect(c.add("a", ok(["K1", "K2"], "K1"))).toBe(false);
    expect(c.add("b", ok(["K1", "K2"], "K2"))).toBe(false);
    expect(c.add("c", ok(["K1"], "K1"))).toBe(true);
    expect(c.finish()).toEqual({ messages: {}, numNodes: 3, numResp: 3, numErr: 0, keys: { K1: 3, K2: 2 }, primaryKeys: { K1: 2, K2: 1 } });
  });

  test("a refusal is an error with the node's message; a missing answer is an error too", () => {
    const c = new KeyResponseCollector(3);
    c.add("a", ok());
    c.add("b", encodeKeyResponse({ result: false, message: "Removing the primary key is not allowed", keys: [], primaryKey: "" }));
    expect(c.finish()).toMatchObject({ numResp: 2, numErr: 1, messages: { b: "Removing the primary key is not allowed" }, error: "1/3 nodes reported failure" });
    const d = new KeyResponseCollector(3);
    d.add("a", ok());
    d.add("b", ok());
    expect(d.finish().error).toBe("2/3 nodes reported success");
  });

  test("garbage answers count as failures with serf's messages", () => {
    const c = new KeyResponseCollector(2);
    c.add("a", Uint8Array.of(9, 9));
    c.add("b", Uint8Array.of(2, 1));
    expect(c.finish()).toMatchObject({
      numErr: 2, error: "2/2 nodes reported failure",
      messages: { a: "Invalid key query response type", b: "Failed to decode key query response" },
    });
  });

  test("a truncation warning is reported without counting as a failure", () => {
    const c = new KeyResponseCollector(1);
    c.add("a", encodeKeyResponse({ result: true, message: "truncated key list response, showing first 1 of 2 keys", keys: ["K1"], primaryKey: "K1" }));
    const r = c.finish();
    expect(r.error).toBeUndefined();
    expect(r.messages).toEqual({ a: "truncated key list response, showing first 1 of 2 keys" });
  });
});
