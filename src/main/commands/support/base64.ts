/**
 * Base64 as Go's `encoding/base64.StdEncoding`: padded standard alphabet; decoding skips `\r` and `\n`
 * and otherwise rejects anything else with `illegal base64 data at input byte N`.
 */
import { Buffer } from "node:buffer";

/** Standard padded base64 of `bytes`. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/** Decodes standard padded base64; throws `illegal base64 data at input byte N` like Go. */
export function decodeBase64(text: string): Uint8Array {
  const clean = text.replace(/[\r\n]/g, "");
  const bad = clean.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0) throw new Error(`illegal base64 data at input byte ${bad}`);
  const pad = clean.indexOf("=");
  if (clean.length % 4 !== 0 || (pad >= 0 && (pad < clean.length - 2 || !/^=+$/.test(clean.slice(pad))))) {
    throw new Error(`illegal base64 data at input byte ${pad >= 0 ? pad : clean.length - (clean.length % 4)}`);
  }
  return new Uint8Array(Buffer.from(clean, "base64"));
}
