/** Standard base64, with the runtimes' ES2025 Uint8Array methods (Bun and Deno have them). */

interface Base64Bytes {
  toBase64(): string;
}
interface Base64Ctor {
  fromBase64(s: string): Uint8Array;
}

/** Standard base64 of `b` (ES2025 Uint8Array.prototype.toBase64, on Bun and Deno). */
export function toBase64(b: Uint8Array): string {
  return (b as unknown as Base64Bytes).toBase64();
}

/** Decodes standard base64; throws SyntaxError on malformed input. */
export function fromBase64(s: string): Uint8Array {
  return (Uint8Array as unknown as Base64Ctor).fromBase64(s);
}
