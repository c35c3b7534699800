import { describe, expect, test } from "bun:test";
import { createCipheriv, createDecipheriv } from "node:crypto";
import type { CipherGCMTypes } from "node:crypto";
import { seededRng } from "../platform/index.ts";
import {
  createDecryptFailureCounter,
  decryptOrDrop,
  decryptPacket,
  DecryptError,
  ENCRYPTION_OVERHEAD,
  ENCRYPTION_VERSION,
  encryptedLength,
  encryptPacket,
  NONCE_SIZE,
} from "./crypto.ts";
import type { DecryptFailure } from "./crypto.ts";
import { GossipKey, Keyring } from "./keyring.ts";

const rng = seededRng(42);
const newKey = (n = 32) => GossipKey.fromBytes(rng.bytes(n));
const text = (s: string) => new TextEncoder().encode(s);

/** Resolves to the DecryptError reason; fails the test on success or on any other error. */
async function failure(promise: Promise<unknown>): Promise<DecryptFailure> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DecryptError) return err.reason;
    throw new Error(`expected DecryptError, got ${String(err)}`);
  }
  throw new Error("expected decryption to fail");
}

describe("round trip", () => {
  test.each([16, 24, 32])("AES-%i-byte key, several sizes of plaintext", async (n) => {
    const ring = new Keyring(newKey(n));
    for (const len of [0, 1, 15, 16, 17, 1400, 65_000]) {
      const plain = rng.bytes(len);
      const packet = await encryptPacket(ring, plain, rng);
      expect(packet.length).toBe(encryptedLength(len));
      expect(packet.length).toBe(len + ENCRYPTION_OVERHEAD);
      expect(packet[0]).toBe(ENCRYPTION_VERSION);
      expect(await decryptPacket(ring, packet)).toEqual(plain);
    }
  });

  test("a fresh nonce from the random source for every packet", async () => {
    const ring = new Keyring(newKey());
    const plain = text("same message");
    const p1 = await encryptPacket(ring, plain, rng);
    const p2 = await encryptPacket(ring, plain, rng);
    expect(p1.subarray(1, 1 + NONCE_SIZE)).not.toEqual(p2.subarray(1, 1 + NONCE_SIZE));
    expect(p1).not.toEqual(p2);
    // The nonce is exactly what the source gave.
    const fixed = { bytes: (n: number) => new Uint8Array(n).fill(7) };
    expect((await encryptPacket(ring, plain, fixed)).subarray(1, 13)).toEqual(new Uint8Array(12).fill(7));
  });

  test("a random source that returns the wrong length is a programming error, not a weak nonce", async () => {
    const ring = new Keyring(newKey());
    await expect(encryptPacket(ring, text("x"), { bytes: () => new Uint8Array(8) })).rejects.toThrow(/want 12/);
  });

  test("many packets in parallel", async () => {
    const ring = new Keyring(newKey(), [newKey(16)]);
    const plains = Array.from({ length: 200 }, (_, i) => rng.bytes(i));
    const packets = await Promise.all(plains.map((p) => encryptPacket(ring, p, rng)));
    expect(await Promise.all(packets.map((p) => decryptPacket(ring, p)))).toEqual(plains);
  });
});

describe("key rotation", () => {
  test("install, use, old packets decrypt until the old key is removed", async () => {
    const oldKey = newKey(), newer = newKey();
    const ring = new Keyring(oldKey);
    const oldPacket = await encryptPacket(ring, text("before"), rng);

    expect(ring.install(newer)).toBe(true);
    // Still encrypting with the old key; a node that only has the old key can read it.
    const during = await encryptPacket(ring, text("during"), rng);
    expect(await decryptPacket(new Keyring(oldKey), during)).toEqual(text("during"));

    ring.use(newer);
    const newPacket = await encryptPacket(ring, text("after"), rng);
    expect(await decryptPacket(ring, oldPacket)).toEqual(text("before"));
    expect(await decryptPacket(ring, newPacket)).toEqual(text("after"));
    // A node that only knows the old key cannot read the new primary's packets.
    expect(await failure(decryptPacket(new Keyring(oldKey), newPacket))).toBe("authentication-failed");

    ring.remove(oldKey);
    expect(await failure(decryptPacket(ring, oldPacket))).toBe("authentication-failed");
    expect(await decryptPacket(ring, newPacket)).toEqual(text("after"));
  });

  test("a decryption in flight keeps the keys it started with", async () => {
    const k1 = newKey(), k2 = newKey();
    const ring = new Keyring(k2, [k1]);
    const packet = await encryptPacket(new Keyring(k1), text("x"), rng);
    const pending = decryptPacket(ring, packet);
    ring.remove(k1);
    expect(await pending).toEqual(text("x"));
  });

  test("a packet from an unrelated keyring fails", async () => {
    const packet = await encryptPacket(new Keyring(newKey()), text("x"), rng);
    expect(await failure(decryptPacket(new Keyring(newKey(), [newKey(16), newKey(24)]), packet))).toBe("authentication-failed");
  });
});

describe("bad packets reject with DecryptError only", () => {
  const ring = new Keyring(newKey());

  test("every single-byte tamper", async () => {
    const packet = await encryptPacket(ring, text("the quick brown fox"), rng, "label");
    for (let i = 0; i < packet.length; i++) {
      const bad = packet.slice();
      bad[i]! ^= 1 << (i % 8);
      expect(await failure(decryptPacket(ring, bad, "label"))).toBe(i === 0 ? "unsupported-version" : "authentication-failed");
    }
  });

  test("every truncation, and extra bytes", async () => {
    const packet = await encryptPacket(ring, text("hello"), rng);
    for (let len = 0; len < packet.length; len++) {
      const reason = await failure(decryptPacket(ring, packet.subarray(0, len)));
      expect(reason).toBe(len === 0 ? "empty" : len < ENCRYPTION_OVERHEAD ? "too-short" : "authentication-failed");
    }
    const longer = new Uint8Array(packet.length + 1);
    longer.set(packet);
    expect(await failure(decryptPacket(ring, longer))).toBe("authentication-failed");
  });

  test("wrong versions, including memberlist's padded version 0", async () => {
    const packet = await encryptPacket(ring, text("hello"), rng);
    for (const v of [0, 2, 128, 255]) {
      const bad = packet.slice();
      bad[0] = v;
      expect(await failure(decryptPacket(ring, bad))).toBe("unsupported-version");
    }
  });

  test("not a byte array", async () => {
    for (const junk of [undefined, null, "packet", 42, [1, 2, 3], new ArrayBuffer(40)]) {
      expect(await failure(decryptPacket(ring, junk as unknown as Uint8Array))).toBe("malformed");
    }
  });

  test("property: 2000 seeded random inputs, half with a valid version byte, never anything but DecryptError", async () => {
    const gen = seededRng(20_240_601);
    const seen = new Set<DecryptFailure>();
    for (let i = 0; i < 2000; i++) {
      const bytes = gen.bytes(gen.int(120));
      if (bytes.length > 0 && gen.int(2) === 0) bytes[0] = ENCRYPTION_VERSION;
      const aad = gen.int(3) === 0 ? gen.bytes(gen.int(20)) : undefined;
      seen.add(await failure(decryptPacket(ring, bytes, aad)));
    }
    expect([...seen].sort()).toEqual(["authentication-failed", "empty", "too-short", "unsupported-version"]);
  });
});

describe("additional data (memberlist's label)", () => {
  const ring = new Keyring(newKey());

  test("must match exactly", async () => {
    const packet = await encryptPacket(ring, text("x"), rng, "dc1-lan");
    expect(await decryptPacket(ring, packet, "dc1-lan")).toEqual(text("x"));
    expect(await decryptPacket(ring, packet, text("dc1-lan"))).toEqual(text("x"));
    for (const other of ["dc2-lan", "dc1-la", "DC1-LAN", "", undefined]) {
      expect(await failure(decryptPacket(ring, packet, other))).toBe("authentication-failed");
    }
    const unlabelled = await encryptPacket(ring, text("y"), rng);
    expect(await failure(decryptPacket(ring, unlabelled, "dc1-lan"))).toBe("authentication-failed");
  });

  test("an empty label is the same as none", async () => {
    const packet = await encryptPacket(ring, text("x"), rng, "");
    expect(await decryptPacket(ring, packet)).toEqual(text("x"));
    expect(await decryptPacket(ring, packet, new Uint8Array(0))).toEqual(text("x"));
  });
});

describe("standard AES-GCM", () => {
  test.each([16, 24, 32])("decrypts what node:crypto aes-%i-gcm seals in the same layout, and vice versa", async (n) => {
    const raw = rng.bytes(n);
    const ring = new Keyring(GossipKey.fromBytes(raw));
    const nonce = rng.bytes(12);
    const plain = text("interop with a standard implementation");
    const aad = text("label");
    const algorithm = `aes-${n * 8}-gcm` as CipherGCMTypes;
    const cipher = createCipheriv(algorithm, raw, nonce);
    cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    const packet = new Uint8Array(Buffer.concat([Buffer.from([1]), nonce, body, cipher.getAuthTag()]));
    expect(await decryptPacket(ring, packet, "label")).toEqual(plain);

    const ours = await encryptPacket(ring, plain, rng, aad);
    const decipher = createDecipheriv(algorithm, raw, ours.subarray(1, 13));
    decipher.setAAD(aad);
    decipher.setAuthTag(ours.subarray(ours.length - 16));
    const opened = Buffer.concat([decipher.update(ours.subarray(13, ours.length - 16)), decipher.final()]);
    expect(new Uint8Array(opened)).toEqual(plain);
  });

  test("known answer: McGrew-Viega GCM test case 14 (AES-256, zero key, zero nonce, one zero block)", async () => {
    const ring = new Keyring(GossipKey.fromBytes(new Uint8Array(32)));
    const packet = await encryptPacket(ring, new Uint8Array(16), { bytes: (n) => new Uint8Array(n) });
    expect(Buffer.from(packet.subarray(13)).toString("hex")).toBe(
      "cea7403d4d606b6e074ec5d3baf39d18" + "d0d1c8a799996bf0265b98b5d48ab919",
    );
  });
});

describe("decryptOrDrop", () => {
  test("returns the plaintext or undefined, counting failures by reason", async () => {
    const ring = new Keyring(newKey());
    const counter = createDecryptFailureCounter();
    const good = await encryptPacket(ring, text("ok"), rng);
    expect(await decryptOrDrop(ring, good, counter)).toEqual(text("ok"));
    expect(await decryptOrDrop(ring, new Uint8Array(0), counter)).toBeUndefined();
    expect(await decryptOrDrop(ring, new Uint8Array([9, 9]), counter)).toBeUndefined();
    expect(await decryptOrDrop(ring, new Uint8Array([1, 9]), counter)).toBeUndefined();
    expect(await decryptOrDrop(ring, good, counter, "other-label")).toBeUndefined();
    expect(await decryptOrDrop(ring, good, counter, "other-label")).toBeUndefined();
    expect(counter.total).toBe(5);
    expect(counter.snapshot()).toEqual({
      "empty": 1,
      "unsupported-version": 1,
      "too-short": 1,
      "authentication-failed": 2,
      "malformed": 0,
    });
  });
});
