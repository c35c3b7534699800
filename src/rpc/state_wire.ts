/**
 * How the State service's reads, results and other values travel between agents and servers: JSON in
 * which byte arrays (KV values) become `{"$bytes": "<base64>"}`, so a result decodes to exactly the
 * value the serving server produced; integers past 2^53 (uint64 KV flags) stay exact as bigints.
 *
 * A value holding a byte array of ATTACH_MIN bytes or more is sent as `[0x00][u32 BE JSON length][JSON]
 * [attachments]`: each such array is replaced in the JSON by `{"$attached": [offset, length]}` into the
 * raw attachments that follow (a 150 MB state snapshot took 4.4 s to encode and 2.8 s to decode as
 * base64 inside JSON). Values without one are plain JSON text as before.
 */
import { Buffer } from "node:buffer";
import { bigintReplacer, parseExact } from "../lib/index.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const BYTES = "$bytes";
/** Marks a byte array carried after the JSON: `{"$attached": [offset, length]}` into the attachments. */
const ATTACHED = "$attached";
/** Byte arrays this long or longer are attached rather than base64-encoded. */
const ATTACH_MIN = 64 * 1024;
/** First byte of a value with attachments (JSON text never starts with NUL). */
const ATTACHMENTS_MARK = 0;
/** Wraps a value's own object that looks like a marker (its only key is BYTES or ESCAPED), so it stays an object. */
const ESCAPED = "$escaped";

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Uint8Array);
const soleKey = (v: Record<string, unknown>): string | undefined => {
  const keys = Object.keys(v);
  return keys.length === 1 ? keys[0] : undefined;
};

/**
 * Encodes `value`; bigints (uint64 values past 2^53) are written as exact number literals. Byte arrays
 * become `{"$bytes": base64}`; an object of the value's own whose only key is "$bytes", "$attached" or
 * "$escaped" (a service's Meta, say) is written as `{"$escaped": [[key, value]]}` so that it decodes as
 * itself. Byte arrays of ATTACH_MIN bytes or more (a state snapshot) are not put in the JSON at all:
 * they follow it raw (see the module doc), which spares base64 and a JSON scan of every byte.
 */
export function encodeWire(value: unknown): Uint8Array {
  const { text, attached, attachedBytes } = splitAttachments(value);
  if (attached.length === 0) return enc.encode(text);
  const { out, at } = attachmentFrame(text, attachedBytes);
  let offset = at;
  for (const a of attached) {
    out.set(a, offset);
    offset += a.length;
  }
  return out;
}

/**
 * encodeWire's bytes, with the attachments copied in slices of about 4 MB and `pause()` awaited
 * between them: a fresh 150 MB buffer takes about 370 ms to fill here (its first touch of every page).
 * The value's byte arrays must not change until it resolves.
 */
export async function encodeWireInSlices(value: unknown, pause: () => Promise<void>): Promise<Uint8Array> {
  const { text, attached, attachedBytes } = splitAttachments(value);
  if (attached.length === 0) return enc.encode(text);
  const { out, at } = attachmentFrame(text, attachedBytes);
  let offset = at;
  let sincePause = 0;
  for (const a of attached) {
    for (let from = 0; from < a.length; from += COPY_SLICE) {
      const piece = a.subarray(from, from + COPY_SLICE);
      out.set(piece, offset);
      offset += piece.length;
      sincePause += piece.length;
      if (sincePause >= COPY_SLICE) {
        sincePause = 0;
        await pause();
      }
    }
  }
  return out;
}

/** Bytes copied between pauses by encodeWireInSlices. */
const COPY_SLICE = 4 * 1024 * 1024;

/** The JSON text of `value` with its large byte arrays replaced by references, and those arrays. */
function splitAttachments(value: unknown): { text: string; attached: Uint8Array[]; attachedBytes: number } {
  // Most results hold no bytes, bigints or marker-like keys: plain JSON.stringify writes the same text
  // without calling the replacer for every value (a 50,000-service catalog: about 100 ms less).
  if (isPlainJson(value, 0)) return { text: JSON.stringify(value), attached: [], attachedBytes: 0 };
  const attached: Uint8Array[] = [];
  let attachedBytes = 0;
  const text = JSON.stringify(value, (key, v: unknown) => {
    if (v instanceof Uint8Array) {
      if (v.length < ATTACH_MIN) return { [BYTES]: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") };
      attached.push(v);
      attachedBytes += v.length;
      return { [ATTACHED]: [attachedBytes - v.length, v.length] };
    }
    if (isPlainObject(v)) {
      const k = soleKey(v);
      if (k === BYTES || k === ESCAPED || k === ATTACHED) return { [ESCAPED]: [[k, v[k]]] };
    }
    return bigintReplacer(key, v);
  });
  return { text, attached, attachedBytes };
}

/**
 * Whether `v` holds nothing the replacer would change: no byte arrays, no bigints, no object with a
 * marker key (BYTES, ESCAPED, ATTACHED). Stops at the first such value; past MAX_SCAN_DEPTH it says
 * no and leaves the value to the replacer.
 */
function isPlainJson(v: unknown, depth: number): boolean {
  if (typeof v === "bigint") return false;
  if (v === null || typeof v !== "object") return true;
  if (depth > MAX_SCAN_DEPTH || v instanceof Uint8Array) return false;
  if (Array.isArray(v)) {
    for (const x of v) if (!isPlainJson(x, depth + 1)) return false;
    return true;
  }
  const o = v as Record<string, unknown>;
  if (BYTES in o || ESCAPED in o || ATTACHED in o) return false;
  for (const k in o) if (!isPlainJson(o[k], depth + 1)) return false;
  return true;
}

const MAX_SCAN_DEPTH = 64;

/** The output buffer of a value with attachments, its mark and JSON written; `at`: where the attachments go. */
function attachmentFrame(text: string, attachedBytes: number): { out: Uint8Array; at: number } {
  const head = enc.encode(text);
  const out = new Uint8Array(5 + head.length + attachedBytes);
  out[0] = ATTACHMENTS_MARK;
  new DataView(out.buffer).setUint32(1, head.length);
  out.set(head, 5);
  return { out, at: 5 + head.length };
}

/**
 * Parses what encodeWire wrote; throws SyntaxError on anything else. Attached byte arrays are views of
 * `bytes` (no copy).
 */
export function decodeWire<T>(bytes: Uint8Array): T {
  let text = bytes;
  let attachments: Uint8Array | undefined;
  if (bytes.length > 0 && bytes[0] === ATTACHMENTS_MARK) {
    if (bytes.length < 5) throw new SyntaxError("wire value: truncated attachment header");
    const headLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
    if (5 + headLength > bytes.length) throw new SyntaxError("wire value: JSON head runs past the end");
    text = bytes.subarray(5, 5 + headLength);
    attachments = bytes.subarray(5 + headLength);
  }
  const json = dec.decode(text);
  // Without `"$` the text holds no marker: plain parsing gives the same value, without calling the
  // reviver for every value (a 50,000-service catalog: 300-850 ms with it).
  if (!attachments && !json.includes('"$')) return parseExact(json) as T;
  return parseExact(json, (_key, v: unknown) => {
    if (!isPlainObject(v)) return v;
    const k = soleKey(v);
    if (k === BYTES && typeof v[BYTES] === "string") return new Uint8Array(Buffer.from(v[BYTES], "base64"));
    if (k === ATTACHED) return attachment(attachments, v[ATTACHED]);
    const pair = k === ESCAPED && Array.isArray(v[ESCAPED]) ? (v[ESCAPED] as unknown[])[0] : undefined;
    if (Array.isArray(pair) && typeof pair[0] === "string") {
      const out: Record<string, unknown> = {};
      Object.defineProperty(out, pair[0], { value: pair[1], enumerable: true, writable: true, configurable: true });
      return out;
    }
    return v;
  }) as T;
}

function attachment(attachments: Uint8Array | undefined, ref: unknown): Uint8Array {
  const ok = attachments && Array.isArray(ref) && ref.length === 2 && ref.every((n) => Number.isSafeInteger(n) && n >= 0) &&
    ref[0] + ref[1] <= attachments.length;
  if (!ok) throw new SyntaxError(`wire value: bad attachment reference ${JSON.stringify(ref)}`);
  return attachments!.subarray(ref[0], ref[0] + ref[1]);
}
