/**
 * Request bodies, read with a size limit per endpoint while they stream in (Content-Length and chunked
 * alike): a body is refused as soon as it passes its limit, with no more than the limit held in memory.
 * Every route reads its body through this file (body.test.ts checks that none reads it otherwise).
 *
 * The limits (bytes):
 * - KV values and transactions: 512 KiB, Consul's kv_max_value_size and txn_max_req_len defaults
 *   (raft.SuggestedMaxDataSize; agent/kvs_endpoint.go, agent/txn_endpoint.go).
 * - JSON bodies (registrations, config entries, the CA configuration, intentions, sessions, keyring):
 *   4 MiB. Consul 1.8 has no limit of its own there; 4 MiB is well above any sane registration and far
 *   below what would hurt a server.
 * - User event payloads: 64 KiB (serf refuses anything over its 512-byte event limit anyway).
 * - Snapshot restore: 256 MiB of archive.
 */
import type { Context } from "hono";
import { MAX_KV_VALUE_BYTES } from "../model/index.ts";

const KIB = 1024;
const MIB = 1024 * KIB;

/** The body limit of each kind of endpoint, in bytes. */
export const BODY_LIMITS = {
  kv: MAX_KV_VALUE_BYTES,
  txn: MAX_KV_VALUE_BYTES,
  json: 4 * MIB,
  event: 64 * KIB,
  snapshot: 256 * MIB,
} as const;

/** The largest per-endpoint limit: what the HTTP server itself refuses before any route sees a body. */
export const MAX_REQUEST_BODY_BYTES = Math.max(...Object.values(BODY_LIMITS));

/**
 * A body over its endpoint's limit: answered 413 (statusCode) with Consul's wording, and the
 * connection closed afterwards, since the rest of the body was never read.
 */
export class RequestTooLargeError extends Error {
  override readonly name = "RequestTooLargeError";
  readonly statusCode = 413;
}

/**
 * The body could not be read because the client went away (or broke the framing) mid-body. Answered
 * 400, which nobody hears; the HTTP server logs the abort once, with the peer.
 */
export class BodyReadError extends Error {
  override readonly name = "BodyReadError";
  readonly statusCode = 400;
}

export interface BodyOptions {
  /** A documentation link for the 413 message ("See <doc>."), as Consul's KV and txn endpoints give one. */
  readonly doc?: string;
}

function tooLarge(limit: number, declared: number | undefined, o: BodyOptions): RequestTooLargeError {
  const size = declared === undefined ? "" : `(${declared} bytes)`;
  return new RequestTooLargeError(`Request body${size} too large, max size: ${limit} bytes.${o.doc ? ` See ${o.doc}.` : ""}`);
}

/** The declared Content-Length, or undefined when absent or not a plain number (chunked bodies). */
function declaredLength(c: Context): number | undefined {
  const raw = c.req.header("content-length");
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined;
}

/**
 * Reads the whole body, refusing it (RequestTooLargeError) once it passes `limit`: at once when the
 * declared Content-Length is larger, otherwise as soon as the bytes read so far are. Stops reading
 * there (the stream is released, not cancelled), so no more than `limit` bytes are ever held. Throws
 * BodyReadError when the stream fails.
 */
export async function readBodyBytes(c: Context, limit: number, o: BodyOptions = {}): Promise<Uint8Array> {
  const declared = declaredLength(c);
  if (declared !== undefined && declared > limit) throw tooLarge(limit, declared, o);
  // A declared length within the limit is all there can be (the server holds the body to it): read it at once.
  if (declared !== undefined) return readDeclared(c);
  const stream = c.req.raw.body;
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      // Past the limit: stop reading, without cancelling, so that the server reads no more of it either
      // (the client is held back by TCP until the connection closes after the 413).
      if (total > limit) throw tooLarge(limit, undefined, o);
      chunks.push(value);
    }
  } catch (err) {
    throw err instanceof RequestTooLargeError ? err : bodyReadError(err);
  } finally {
    reader.releaseLock();
  }
  return chunks.length === 1 ? chunks[0]! : new Uint8Array(await new Blob(chunks as BlobPart[]).arrayBuffer());
}

async function readDeclared(c: Context): Promise<Uint8Array> {
  try {
    return new Uint8Array(await c.req.raw.arrayBuffer());
  } catch (err) {
    throw bodyReadError(err);
  }
}

function bodyReadError(err: unknown): BodyReadError {
  return new BodyReadError(`Failed to read the request body: ${err instanceof Error && err.name === "AbortError" ? "the connection was closed" : "the stream failed"}`);
}

/** The body as UTF-8 text (invalid sequences replaced, as Response.text() does), limited as readBodyBytes. */
export async function readBodyText(c: Context, limit: number = BODY_LIMITS.json, o: BodyOptions = {}): Promise<string> {
  return new TextDecoder().decode(await readBodyBytes(c, limit, o));
}
