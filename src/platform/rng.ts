/**
 * Rng port: the only source of randomness outside src/platform and src/main.
 *
 * `seededRng` is deterministic (same seed, same sequence) for simulation and tests;
 * `cryptoRng` draws from the runtime's CSPRNG for production use.
 */

export interface Rng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). n must be a positive integer below 2^32. */
  int(n: number): number;
  /** Fills a fresh buffer of `length` random bytes. */
  bytes(length: number): Uint8Array;
}

/**
 * A seeded xoshiro128** generator (Blackman and Vigna), state expanded from the seed with splitmix32.
 * Fast, 2^128-1 period, and identical on every runtime; not for cryptographic use.
 */
export function seededRng(seed: number): Rng {
  let s = seed >>> 0;
  const splitmix = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix(), b = splitmix(), c = splitmix(), d = splitmix();
  const nextU32 = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5) >>> 0, 7), 9) >>> 0;
    const t = (b << 9) >>> 0;
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t;
    d = rotl(d, 11);
    return result;
  };
  return fromU32(nextU32);
}

/** Randomness from the runtime's CSPRNG (WebCrypto). */
export function cryptoRng(): Rng {
  const buf = new Uint32Array(64);
  let pos = buf.length;
  return fromU32(() => {
    if (pos === buf.length) {
      crypto.getRandomValues(buf);
      pos = 0;
    }
    return buf[pos++]!;
  }, (length) => crypto.getRandomValues(new Uint8Array(length)));
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

function fromU32(nextU32: () => number, bytes?: (length: number) => Uint8Array): Rng {
  return {
    next: () => nextU32() / 0x1_0000_0000,
    int(n) {
      if (!Number.isInteger(n) || n <= 0 || n > 0xffff_ffff) throw new RangeError(`Rng.int: bad bound ${n}`);
      // Rejection sampling keeps the distribution exactly uniform.
      const limit = 0x1_0000_0000 - (0x1_0000_0000 % n);
      for (;;) {
        const x = nextU32();
        if (x < limit) return x % n;
      }
    },
    bytes: bytes ?? ((length) => {
      const out = new Uint8Array(length);
      for (let i = 0; i < length; i += 4) {
        const x = nextU32();
        for (let j = 0; j < 4 && i + j < length; j++) out[i + j] = (x >>> (8 * j)) & 0xff;
      }
      return out;
    }),
  };
}

/** A random (version 4) UUID drawn from `rng`, lowercase, as Go's uuid.GenerateUUID formats it. */
export function uuidFrom(rng: Rng): string {
  const b = rng.bytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A uniformly shuffled copy of `xs` (Fisher-Yates from the end, drawing with `rng.int`). */
export function shuffled<T>(xs: readonly T[], rng: Rng): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
