/**
 * An incremental TLS ClientHello reader: the gateway's tls_inspector. It takes the connection's first
 * bytes as they arrive (a record may be split across reads, the handshake message across records),
 * finds the server_name (SNI) and ALPN extensions, and never terminates TLS: the caller forwards the
 * bytes it buffered, untouched, to the chosen upstream.
 *
 * Validation follows BoringSSL's ClientHello parsing (ssl/extensions.cc, ssl/handshake_server.cc), the
 * library Envoy's tls_inspector uses, so a hello Envoy would refuse is refused here too: exactly one
 * non-empty host_name of at most 255 bytes without NUL, a well-formed ALPN list, no repeated extension,
 * no trailing bytes. Any input gives a result; nothing throws; work and memory are bounded by `maxBytes`.
 */
import { parseHelloBody } from "./client_hello_body.ts";

/**
 * Why the first bytes are not a usable ClientHello; each value doubles as the stat name it counts under.
 * - `not_tls`: the bytes are not a TLS record (plain HTTP, SSH, random bytes).
 * - `sslv2`: an SSLv2-compatible ClientHello (no extensions, so no SNI; BoringSSL refuses it too).
 * - `malformed`: TLS records, but not a well-formed ClientHello.
 * - `too_large`: the ClientHello does not fit in `maxBytes`.
 * Envoy's tls_inspector counts the first three as `tls_not_found` and the last as
 * `client_hello_too_large`; a `done` result is its `tls_found` (plus `sni_found`/`sni_not_found`,
 * `alpn_found`/`alpn_not_found`).
 */
export type ClientHelloFailure = "not_tls" | "sslv2" | "malformed" | "too_large";

export type ClientHelloResult =
  /** Not decided yet: feed more bytes. */
  | { readonly state: "more" }
  /**
   * A complete, well-formed ClientHello. `serverName` is the SNI host name with ASCII letters
   * lower-cased (undefined without the extension); `alpn` the offered protocols in order (empty without).
   */
  | { readonly state: "done"; readonly serverName: string | undefined; readonly alpn: readonly string[] }
  /** Not a usable ClientHello; `detail` says why in words (for logs, not for matching). */
  | { readonly state: "failed"; readonly reason: ClientHelloFailure; readonly detail: string };

/**
 * Default bound on the bytes read before giving up (record headers included): 16 KiB, the default
 * `preread_buffer_size` of nginx's ssl_preread (the peer the gateway is benchmarked against), so both
 * refuse the same hellos. Envoy's tls_inspector allows 64 KiB; real ClientHellos are 0.2-2 KiB (about
 * 1.5 KiB with a post-quantum key share), so 16 KiB leaves 8x headroom while bounding what each
 * not-yet-routed connection may make the gateway buffer.
 */
export const DEFAULT_MAX_CLIENT_HELLO_BYTES = 16 * 1024;

export interface ClientHelloParserOptions {
  /** Upper bound on bytes consumed, record headers included; default DEFAULT_MAX_CLIENT_HELLO_BYTES. */
  readonly maxBytes?: number;
}

export interface ClientHelloParser {
  /**
   * Consumes the next bytes of the connection and returns the result so far. Once the result is
   * `done` or `failed` it never changes and further bytes are ignored (they belong to the upstream).
   * The chunk is not retained.
   */
  feed(chunk: Uint8Array): ClientHelloResult;
  /** The current result (what the last `feed` returned; `more` before the first). */
  readonly result: ClientHelloResult;
  /** Bytes consumed so far: never more than `maxBytes`. */
  readonly consumed: number;
}

const MORE: ClientHelloResult = { state: "more" };
const CONTENT_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 1;
/** RFC 8446 5.1: a plaintext record carries at most 2^14 bytes. */
const MAX_RECORD_PAYLOAD = 16384;

/** A fresh parser for one connection. */
export function createClientHelloParser(options: ClientHelloParserOptions = {}): ClientHelloParser {
  const maxBytes = Math.max(0, Math.floor(options.maxBytes ?? DEFAULT_MAX_CLIENT_HELLO_BYTES));
  let result: ClientHelloResult = MORE;
  let consumed = 0;
  const header = new Uint8Array(5);
  let headerLen = 0;
  let records = 0;
  /** Payload bytes of the current record still to come (0: reading a record header). */
  let recordLeft = 0;
  const msgHeader = new Uint8Array(4);
  let msgHeaderLen = 0;
  let msg: Uint8Array | undefined;
  let msgLen = 0;

  const fail = (reason: ClientHelloFailure, detail: string): ClientHelloResult => (result = { state: "failed", reason, detail });

  /** Checks the record header bytes read so far; returns a failure as soon as one is certain. */
  const checkHeader = (): ClientHelloResult | undefined => {
    const first = records === 0;
    const type = header[0]!;
    if (type !== CONTENT_HANDSHAKE) {
      if (!first) return fail("malformed", `a record of content type ${type} interrupts the ClientHello`);
      if ((type & 0x80) === 0) return fail("not_tls", `first byte 0x${hex(type)} is not a TLS handshake record`);
      // SSLv2 record header: 2-byte length with the high bit set, then message type 1 (client-hello).
      if (headerLen < 3) return undefined;
      return header[2] === HANDSHAKE_CLIENT_HELLO ? fail("sslv2", "SSLv2-compatible ClientHello") : fail("not_tls", `first byte 0x${hex(type)} is not a TLS handshake record`);
    }
    if (headerLen >= 2 && header[1] !== 3) {
      return first ? fail("not_tls", `record version major ${header[1]} is not 3`) : fail("malformed", `record version major ${header[1]} is not 3`);
    }
    if (headerLen < 5) return undefined;
    const len = (header[3]! << 8) | header[4]!;
    if (len === 0) return fail("malformed", "empty handshake record");
    if (len > MAX_RECORD_PAYLOAD) return fail("malformed", `record length ${len} exceeds 16384`);
    return undefined;
  };

  /** Appends handshake payload bytes; returns a final result once the ClientHello is complete or refused. */
  const pushHandshake = (chunk: Uint8Array, from: number, to: number): ClientHelloResult | undefined => {
    let i = from;
    if (!msg) {
      while (msgHeaderLen < 4 && i < to) msgHeader[msgHeaderLen++] = chunk[i++]!;
      if (msgHeader[0] !== HANDSHAKE_CLIENT_HELLO) return fail("malformed", `first handshake message has type ${msgHeader[0]}, not client_hello`);
      if (msgHeaderLen < 4) return undefined;
      const len = (msgHeader[1]! << 16) | (msgHeader[2]! << 8) | msgHeader[3]!;
      // The rest of the message still has to arrive: refuse at once when it cannot fit.
      if (consumed - (to - i) + len > maxBytes) return fail("too_large", `ClientHello of ${len + 4} bytes exceeds the ${maxBytes}-byte limit`);
      msg = new Uint8Array(len);
    }
    const take = Math.min(to - i, msg.length - msgLen);
    msg.set(chunk.subarray(i, i + take), msgLen);
    msgLen += take;
    if (msgLen < msg.length) return undefined;
    const body = parseHelloBody(msg);
    return (result = body.ok ? { state: "done", serverName: body.serverName, alpn: body.alpn } : { state: "failed", reason: "malformed", detail: body.error });
  };

  const feed = (chunk: Uint8Array): ClientHelloResult => {
    let i = 0;
    while (result.state === "more" && i < chunk.length) {
      const allowed = maxBytes - consumed;
      if (allowed <= 0) break;
      if (recordLeft === 0) {
        const take = Math.min(5 - headerLen, chunk.length - i, allowed);
        header.set(chunk.subarray(i, i + take), headerLen);
        headerLen += take;
        i += take;
        consumed += take;
        if (checkHeader()) break;
        if (headerLen === 5) {
          recordLeft = (header[3]! << 8) | header[4]!;
          headerLen = 0;
          records++;
        }
      } else {
        const take = Math.min(recordLeft, chunk.length - i, allowed);
        recordLeft -= take;
        consumed += take;
        const done = pushHandshake(chunk, i, i + take);
        i += take;
        if (done) break;
      }
    }
    if (result.state === "more" && consumed >= maxBytes) fail("too_large", `no complete ClientHello in the first ${maxBytes} bytes`);
    return result;
  };

  return {
    feed,
    get result() {
      return result;
    },
    get consumed() {
      return consumed;
    },
  };
}

/** One-shot form: the result of feeding `bytes` to a fresh parser (`more` when they end early). */
export function parseClientHello(bytes: Uint8Array, options?: ClientHelloParserOptions): ClientHelloResult {
  return createClientHelloParser(options).feed(bytes);
}

function hex(b: number): string {
  return b.toString(16).padStart(2, "0");
}
