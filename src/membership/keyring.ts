/**
 * Gossip encryption keys and the keyring that holds them, after hashicorp/memberlist keyring.go and
 * serf's keyring management (install, use, remove, list).
 *
 * A key is 16, 24 or 32 raw bytes (AES-128, AES-192, AES-256); Consul's `encrypt` and `causeway keygen`
 * use 32 bytes written as standard, padded base64. The keyring has one primary key, which encrypts,
 * and keeps every installed key in order (primary first) for decryption.
 *
 * Secrecy: no error message, `toString()`, `toJSON()` or inspection of a key or keyring ever contains
 * key material. Only `GossipKey.toBase64()`, `GossipKey.bytes()` and `Keyring.exportKeys()` reveal it,
 * and only when called on purpose.
 */

/** Raw key lengths accepted, in bytes: AES-128, AES-192 and AES-256. */
export const KEY_SIZES: readonly number[] = [16, 24, 32];

/** The key length `causeway keygen` produces and Consul's `encrypt` expects. */
export const DEFAULT_KEY_SIZE = 32;

/** A key that cannot be used: bad base64, bad length, or not a string/bytes. The message never holds the key. */
export class InvalidKeyError extends Error {
  override readonly name = "InvalidKeyError";
}

/** A keyring operation that was refused (removing the primary key, using a key that is not installed). */
export class KeyringError extends Error {
  override readonly name = "KeyringError";
}

const REDACTED = "[GossipKey redacted]";

/** One validated gossip encryption key. Immutable; holds a private copy of its bytes. */
export class GossipKey {
  readonly #raw: Uint8Array<ArrayBuffer>;

  private constructor(raw: Uint8Array<ArrayBuffer>) {
    this.#raw = raw;
  }

  /** Copies and validates raw key bytes. Throws InvalidKeyError on a length other than 16, 24 or 32. */
  static fromBytes(raw: Uint8Array): GossipKey {
    if (!(raw instanceof Uint8Array)) throw new InvalidKeyError("invalid gossip encryption key: expected bytes");
    checkLength(raw.length);
    return new GossipKey(raw.slice());
  }

  /**
   * Parses standard, padded base64 (RFC 4648 section 4), as Consul's `encrypt` option. Surrounding
   * whitespace is ignored (a key pasted from a file often ends in a newline). Throws InvalidKeyError
   * that names the problem (position of a bad character, missing padding, URL-safe alphabet, decoded
   * length) without repeating the value.
   */
  static fromBase64(text: string): GossipKey {
    if (typeof text !== "string") throw new InvalidKeyError("invalid gossip encryption key: expected a base64 string");
    const raw = decodeBase64(text.trim());
    if (!KEY_SIZES.includes(raw.length)) raw.fill(0);
    checkLength(raw.length);
    return new GossipKey(raw);
  }

  /** Key length in bytes (16, 24 or 32). Not secret. */
  get size(): number {
    return this.#raw.length;
  }

  /** A fresh copy of the raw bytes. The caller owns the copy. */
  bytes(): Uint8Array<ArrayBuffer> {
    return this.#raw.slice();
  }

  /** The key as standard padded base64: the form `encrypt`, `keygen` and the keyring CLI use. */
  toBase64(): string {
    return encodeBase64(this.#raw);
  }

  /** Constant-time comparison of key material (no early exit on the first differing byte). */
  equals(other: GossipKey): boolean {
    const a = this.#raw, b = other.#raw;
    if (a.length !== b.length) return false;
    let diff = 0;
    for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
    return diff === 0;
  }

  /** Redacted, so a key that reaches a log line or template string does not leak. */
  toString(): string {
    return REDACTED;
  }

  /** Redacted, so `JSON.stringify` of a config or error holding a key does not leak it. */
  toJSON(): string {
    return REDACTED;
  }

  /** Redacted for `console.log` / `util.inspect` on Node-compatible runtimes and Bun. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return REDACTED;
  }

  /** Redacted for `console.log` / `Deno.inspect`. */
  [Symbol.for("Deno.customInspect")](): string {
    return REDACTED;
  }
}

/** A key given either as a GossipKey or as base64 text. */
export type KeyInput = GossipKey | string;

function toKey(input: KeyInput): GossipKey {
  return input instanceof GossipKey ? input : GossipKey.fromBase64(input);
}

/**
 * The installed gossip keys. Order is memberlist's: the primary first, then the other keys in the
 * order they were installed; decryption tries them in this order. There is always exactly one
 * primary, so a keyring is never empty. Mutations are synchronous; `keys()` returns a snapshot, so a
 * decryption that is in flight keeps the keys it started with.
 */
export class Keyring {
  #keys: GossipKey[];

  /** Builds a keyring whose primary is `primary`, followed by `others` (duplicates dropped). */
  constructor(primary: KeyInput, others: readonly KeyInput[] = []) {
    this.#keys = [toKey(primary)];
    for (const k of others) this.install(k);
  }

  /**
   * Builds a keyring from base64 keys with the first as primary: the layout of the `encrypt` option
   * plus serf's keyring file (a JSON array of base64 strings, primary first). Throws InvalidKeyError
   * naming the index of a bad key; an empty list is an InvalidKeyError too.
   */
  static fromBase64List(keys: readonly string[]): Keyring {
    if (!Array.isArray(keys) || keys.length === 0) throw new InvalidKeyError("keyring needs at least one key");
    const parsed = keys.map((k, i) => {
      try {
        return GossipKey.fromBase64(k);
      } catch (err) {
        throw new InvalidKeyError(`key ${i}: ${(err as Error).message}`);
      }
    });
    return new Keyring(parsed[0]!, parsed.slice(1));
  }

  /** The key that encrypts outgoing packets. */
  get primary(): GossipKey {
    return this.#keys[0]!;
  }

  /** Number of installed keys (at least 1). */
  get size(): number {
    return this.#keys.length;
  }

  /** A snapshot of the installed keys, primary first, in decryption order. */
  keys(): readonly GossipKey[] {
    return [...this.#keys];
  }

  /** True if the key is installed. */
  has(key: KeyInput): boolean {
    const k = toKey(key);
    return this.#keys.some((x) => x.equals(k));
  }

  /**
   * Installs a key for decryption (`keyring -install`). It does not become primary. Installing a key
   * that is already present is a no-op. Returns true if the key was added. Throws InvalidKeyError.
   */
  install(key: KeyInput): boolean {
    const k = toKey(key);
    if (this.#keys.some((x) => x.equals(k))) return false;
    this.#keys = [...this.#keys, k];
    return true;
  }

  /**
   * Makes an installed key the primary (`keyring -use`). The previous primary stays installed and
   * moves to second place. Throws KeyringError if the key is not installed (install it first).
   */
  use(key: KeyInput): void {
    const k = toKey(key);
    const found = this.#keys.find((x) => x.equals(k));
    if (!found) throw new KeyringError("cannot use a key that is not installed in the keyring; install it first");
    this.#keys = [found, ...this.#keys.filter((x) => x !== found)];
  }

  /**
   * Removes a key (`keyring -remove`). Throws KeyringError when the key is the primary: make another
   * key primary first (memberlist: "Removing the primary key is not allowed"). Removing a key that is
   * not installed is a no-op; returns true if a key was removed.
   */
  remove(key: KeyInput): boolean {
    const k = toKey(key);
    if (this.primary.equals(k)) {
      throw new KeyringError("removing the primary key is not allowed; use another key as primary first");
    }
    const before = this.#keys.length;
    this.#keys = this.#keys.filter((x) => !x.equals(k));
    return this.#keys.length !== before;
  }

  /**
   * The installed keys as base64, primary first (`keyring -list`, and the content of a keyring file).
   * This reveals key material: show it only to an operator who asked for it.
   */
  exportKeys(): string[] {
    return this.#keys.map((k) => k.toBase64());
  }

  /** Redacted summary: counts only. */
  toString(): string {
    return `[Keyring ${this.#keys.length} key(s)]`;
  }

  /** Redacted summary: counts only. */
  toJSON(): string {
    return this.toString();
  }

  /** Redacted for `console.log` on Node-compatible runtimes and Bun. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  /** Redacted for `console.log` on Deno. */
  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }
}

/**
 * Parses a keyring file: a JSON array of base64 keys, primary first (serf's `local.keyring` /
 * `remote.keyring` layout). Throws InvalidKeyError; the message never quotes the file's content
 * (a JSON parser's message might, so it is replaced).
 */
export function parseKeyringFile(text: string): Keyring {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidKeyError("keyring file is not valid JSON (expected an array of base64 keys)");
  }
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new InvalidKeyError("keyring file must be a JSON array of base64 key strings");
  }
  return Keyring.fromBase64List(value as string[]);
}

/** Serializes a keyring in the keyring file layout (JSON array, primary first). Reveals key material. */
export function formatKeyringFile(keyring: Keyring): string {
  return JSON.stringify(keyring.exportKeys());
}

function checkLength(n: number): void {
  if (!KEY_SIZES.includes(n)) {
    throw new InvalidKeyError(
      `invalid gossip encryption key: ${n} bytes; a key must be 16, 24 or 32 bytes (AES-128, AES-192 or AES-256; causeway keygen makes 32)`,
    );
  }
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

/** Standard padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >>> 18) & 63]! + ALPHABET[(n >>> 12) & 63]!;
    out += i + 1 < bytes.length ? ALPHABET[(n >>> 6) & 63]! : "=";
    out += i + 2 < bytes.length ? ALPHABET[n & 63]! : "=";
  }
  return out;
}

/** Strict standard padded base64 decoding; errors name the problem, never the text. */
function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const fail = (why: string): never => {
    throw new InvalidKeyError(`invalid gossip encryption key: not valid base64 (${why})`);
  };
  if (text.length === 0) fail("empty");
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const body = text.length - pad;
  for (let i = 0; i < body; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128 || DECODE[c] === -1) {
      if (c === 0x2d || c === 0x5f) fail(`character ${i + 1} is from the URL-safe alphabet; use standard base64`);
      fail(`character ${i + 1} is not in the base64 alphabet`);
    }
  }
  if (text.length % 4 !== 0) fail(`length ${text.length} is not a multiple of 4; is padding missing?`);
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < text.length; i += 4) {
    const v = (k: number) => (i + k < body ? DECODE[text.charCodeAt(i + k)]! : 0);
    const n = (v(0) << 18) | (v(1) << 12) | (v(2) << 6) | v(3);
    out[o++] = (n >>> 16) & 255;
    if (o < out.length) out[o++] = (n >>> 8) & 255;
    if (o < out.length) out[o++] = n & 255;
  }
  return out;
}
