/**
 * Gossip packet encryption: AES-GCM through WebCrypto (`crypto.subtle`), in the layout of
 * hashicorp/memberlist's security.go, encryption version 1 (no padding):
 *
 *     [version = 1 (1 byte)][nonce (12 bytes)][ciphertext (same length as the plaintext)][GCM tag (16 bytes)]
 *
 * Additional authenticated data is optional; memberlist passes its `Label` there, so packets of a
 * differently labelled cluster fail to authenticate. The version byte is not authenticated (as in
 * memberlist); only version 1 is accepted, so altering it still makes the packet fail.
 *
 * Nonces are 96 random bits drawn from the injected RandomBytes source. In production that source
 * must be a CSPRNG (`cryptoRng()` from src/platform): a repeated nonce under one key breaks GCM. With
 * random nonces, rotate a key well before 2^32 packets (NIST SP 800-38D section 8.3).
 */
import type { GossipKey } from "./keyring.ts";

/** The only encryption version written and accepted. */
export const ENCRYPTION_VERSION = 1;
export const VERSION_SIZE = 1;
export const NONCE_SIZE = 12;
export const TAG_SIZE = 16;
/** Bytes an encrypted packet adds to its plaintext: 29. */
export const ENCRYPTION_OVERHEAD = VERSION_SIZE + NONCE_SIZE + TAG_SIZE;

/** A source of random bytes, e.g. the platform `Rng` (`cryptoRng()` in production, `seededRng` in tests). */
export interface RandomBytes {
  bytes(length: number): Uint8Array;
}

/** The keys an operation uses: the primary encrypts, `keys()` (primary first) decrypt. A `Keyring` is one. */
export interface KeySource {
  readonly primary: GossipKey;
  keys(): readonly GossipKey[];
}

/** Additional authenticated data: bytes, or a label as text (UTF-8). Empty means none. */
export type AdditionalData = Uint8Array | string;

/** Why a packet did not decrypt. */
export type DecryptFailure =
  /** Zero-length packet. */
  | "empty"
  /** First byte is not ENCRYPTION_VERSION. */
  | "unsupported-version"
  /** Shorter than version + nonce + tag. */
  | "too-short"
  /** No installed key authenticated it: wrong key, tampered bytes, or different additional data. */
  | "authentication-failed"
  /** Not a byte array, or anything unexpected while decrypting. */
  | "malformed";

/** Every decryption failure rejects with this class and nothing else. Its message holds no key or packet bytes. */
export class DecryptError extends Error {
  override readonly name = "DecryptError";
  readonly reason: DecryptFailure;
  constructor(reason: DecryptFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** Length of the encrypted packet for a plaintext of `plainLength` bytes. */
export function encryptedLength(plainLength: number): number {
  return plainLength + ENCRYPTION_OVERHEAD;
}

/**
 * Encrypts `plaintext` with the keyring's primary key and a fresh random nonce. `aad`, if given and
 * not empty, must be given identically to decrypt. Throws (rejects) a plain Error only on a
 * programming fault: a RandomBytes source that returns the wrong number of bytes.
 */
export async function encryptPacket(
  keys: KeySource,
  plaintext: Uint8Array,
  rng: RandomBytes,
  aad?: AdditionalData,
): Promise<Uint8Array> {
  const nonce = rng.bytes(NONCE_SIZE);
  if (!(nonce instanceof Uint8Array) || nonce.length !== NONCE_SIZE) {
    throw new Error(`random source returned ${nonce?.length} bytes for a nonce; want ${NONCE_SIZE}`);
  }
  const key = await cryptoKey(keys.primary);
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(gcmParams(nonce.slice(), aad), key, plaintext.slice()),
  );
  const out = new Uint8Array(VERSION_SIZE + NONCE_SIZE + sealed.length);
  out[0] = ENCRYPTION_VERSION;
  out.set(nonce, VERSION_SIZE);
  out.set(sealed, VERSION_SIZE + NONCE_SIZE);
  return out;
}

/**
 * Decrypts a packet made by `encryptPacket` (or any AES-GCM implementation with the same layout),
 * trying each installed key in keyring order, primary first. The key list is read once at the start,
 * so a keyring change during the await does not affect this call.
 *
 * Never throws synchronously and never rejects with anything but DecryptError, whatever the input:
 * the caller drops the packet and counts it (see `decryptOrDrop`).
 */
export async function decryptPacket(keys: KeySource, packet: Uint8Array, aad?: AdditionalData): Promise<Uint8Array> {
  try {
    if (!(packet instanceof Uint8Array)) throw new DecryptError("malformed", "packet is not a byte array");
    if (packet.length === 0) throw new DecryptError("empty", "cannot decrypt an empty packet");
    if (packet[0] !== ENCRYPTION_VERSION) {
      throw new DecryptError("unsupported-version", `unsupported encryption version ${packet[0]}`);
    }
    if (packet.length < ENCRYPTION_OVERHEAD) {
      throw new DecryptError("too-short", `packet of ${packet.length} bytes is too small to decrypt`);
    }
    const params = gcmParams(packet.slice(VERSION_SIZE, VERSION_SIZE + NONCE_SIZE), aad);
    const sealed = packet.slice(VERSION_SIZE + NONCE_SIZE);
    for (const key of keys.keys()) {
      try {
        return new Uint8Array(await crypto.subtle.decrypt(params, await cryptoKey(key), sealed));
      } catch {
        // Wrong key or not authentic: try the next one (memberlist decryptPayload does the same).
      }
    }
    throw new DecryptError("authentication-failed", "no installed key could decrypt the packet");
  } catch (err) {
    if (err instanceof DecryptError) throw err;
    throw new DecryptError("malformed", "packet could not be decrypted");
  }
}

/** Counts of dropped packets by reason. */
export interface DecryptFailureCounter {
  /** Adds one failure. */
  record(error: DecryptError): void;
  /** All failures so far. */
  readonly total: number;
  /** A copy of the counts by reason (every reason present, zero if none). */
  snapshot(): Readonly<Record<DecryptFailure, number>>;
}

/** A counter for packets that failed to decrypt, for metrics and `members`-style diagnostics. */
export function createDecryptFailureCounter(): DecryptFailureCounter {
  const counts: Record<DecryptFailure, number> = {
    "empty": 0,
    "unsupported-version": 0,
    "too-short": 0,
    "authentication-failed": 0,
    "malformed": 0,
  };
  let total = 0;
  return {
    record(error) {
      counts[error.reason]++;
      total++;
    },
    get total() {
      return total;
    },
    snapshot: () => ({ ...counts }),
  };
}

/**
 * The receive path's helper: the plaintext, or undefined after counting the failure. Never rejects.
 */
export async function decryptOrDrop(
  keys: KeySource,
  packet: Uint8Array,
  counter: DecryptFailureCounter,
  aad?: AdditionalData,
): Promise<Uint8Array | undefined> {
  try {
    return await decryptPacket(keys, packet, aad);
  } catch (err) {
    counter.record(err instanceof DecryptError ? err : new DecryptError("malformed", "packet could not be decrypted"));
    return undefined;
  }
}

const encoder = new TextEncoder();

function gcmParams(iv: Uint8Array<ArrayBuffer>, aad: AdditionalData | undefined): AesGcmParams {
  const data = typeof aad === "string" ? encoder.encode(aad) : aad?.slice();
  // GCM with empty additional data equals GCM with none (the GHASH input is identical), so an empty
  // label interoperates with a peer that passes no additional data.
  return data && data.length > 0
    ? { name: "AES-GCM", iv, additionalData: data, tagLength: TAG_SIZE * 8 }
    : { name: "AES-GCM", iv, tagLength: TAG_SIZE * 8 };
}

/** Imported, non-extractable CryptoKeys, one per GossipKey object. A failed import is not cached. */
const imported = new WeakMap<GossipKey, Promise<CryptoKey>>();

function cryptoKey(key: GossipKey): Promise<CryptoKey> {
  let pending = imported.get(key);
  if (!pending) {
    const raw = key.bytes();
    pending = crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
    pending.then(() => raw.fill(0), () => {
      raw.fill(0);
      imported.delete(key);
    });
    imported.set(key, pending);
  }
  return pending;
}
