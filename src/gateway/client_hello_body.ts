/**
 * The body of a ClientHello handshake message (RFC 8446 4.1.2, RFC 5246 7.4.1.2): its structure checked
 * the way BoringSSL does (ssl_client_hello_init, ext_sni_parse_clienthello, ssl_is_valid_alpn_list) and
 * the server_name and ALPN extensions extracted. Pure; bounds-checked reads only, so it cannot throw.
 */

export type HelloBody =
  | { readonly ok: true; readonly serverName: string | undefined; readonly alpn: readonly string[] }
  | { readonly ok: false; readonly error: string };

const EXT_SERVER_NAME = 0;
const EXT_ALPN = 16;
const NAME_TYPE_HOST = 0;
/** BoringSSL TLSEXT_MAXLEN_host_name. */
const MAX_HOST_NAME = 255;

/** A cursor over `buf[pos, end)`; every read returns -1 (or undefined) when too few bytes remain. */
class Reader {
  constructor(
    private readonly buf: Uint8Array,
    public pos: number,
    public readonly end: number,
  ) {}
  get left(): number {
    return this.end - this.pos;
  }
  u8(): number {
    return this.left >= 1 ? this.buf[this.pos++]! : -1;
  }
  u16(): number {
    if (this.left < 2) return -1;
    const v = (this.buf[this.pos]! << 8) | this.buf[this.pos + 1]!;
    this.pos += 2;
    return v;
  }
  skip(n: number): boolean {
    if (n < 0 || this.left < n) return false;
    this.pos += n;
    return true;
  }
  /** A sub-reader over the next `n` bytes, which it skips; undefined when fewer remain. */
  sub(n: number): Reader | undefined {
    if (n < 0 || this.left < n) return undefined;
    const r = new Reader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return r;
  }
  /** The next `n` bytes as a Latin-1 string (one char per byte), ASCII letters lower-cased if asked. */
  text(n: number, lower: boolean): string {
    let s = "";
    for (let i = 0; i < n; i++) {
      let c = this.buf[this.pos + i]!;
      if (lower && c >= 0x41 && c <= 0x5a) c += 0x20;
      s += String.fromCharCode(c);
    }
    this.pos += n;
    return s;
  }
}

const bad = (error: string): HelloBody => ({ ok: false, error });

/** Parses a complete ClientHello body (the bytes after the 4-byte handshake header). */
export function parseHelloBody(body: Uint8Array): HelloBody {
  const r = new Reader(body, 0, body.length);
  const major = r.u8();
  if (major === -1 || r.u8() === -1) return bad("ClientHello truncated before its version");
  if (major !== 3) return bad(`ClientHello version major ${major} is not 3`);
  if (!r.skip(32)) return bad("ClientHello truncated in its random");
  const sessionLen = r.u8();
  if (sessionLen === -1 || sessionLen > 32 || !r.skip(sessionLen)) return bad("bad session_id");
  const suitesLen = r.u16();
  if (suitesLen < 2 || suitesLen % 2 !== 0 || !r.skip(suitesLen)) return bad("bad cipher_suites");
  const compLen = r.u8();
  if (compLen < 1 || !r.skip(compLen)) return bad("bad compression_methods");
  // A hello without extensions (SSL 3.0 style) is well-formed and has neither SNI nor ALPN.
  if (r.left === 0) return { ok: true, serverName: undefined, alpn: [] };
  const extLen = r.u16();
  if (extLen === -1 || extLen !== r.left) return bad("extensions length does not match the ClientHello");
  const seen = new Set<number>();
  let serverName: string | undefined;
  let alpn: string[] = [];
  while (r.left > 0) {
    const type = r.u16();
    const len = r.u16();
    const ext = len === -1 ? undefined : r.sub(len);
    if (type === -1 || !ext) return bad("truncated extension");
    if (seen.has(type)) return bad(`extension ${type} appears twice`);
    seen.add(type);
    if (type === EXT_SERVER_NAME) {
      const name = serverNameOf(ext);
      if (typeof name !== "string") return name;
      serverName = name;
    } else if (type === EXT_ALPN) {
      const list = alpnOf(ext);
      if (!Array.isArray(list)) return list as HelloBody;
      alpn = list;
    }
  }
  return { ok: true, serverName, alpn };
}

/**
 * ext_sni_parse_clienthello: a list holding exactly one host_name entry (BoringSSL treats the list as
 * non-extensible), non-empty, at most 255 bytes, no NUL.
 */
function serverNameOf(ext: Reader): string | HelloBody {
  const listLen = ext.u16();
  if (listLen === -1 || listLen !== ext.left) return bad("bad server_name list length");
  const nameType = ext.u8();
  const nameLen = ext.u16();
  if (nameType === -1 || nameLen === -1 || nameLen !== ext.left) return bad("server_name must hold exactly one name");
  if (nameType !== NAME_TYPE_HOST) return bad(`server_name type ${nameType} is not host_name`);
  if (nameLen === 0 || nameLen > MAX_HOST_NAME) return bad(`server_name length ${nameLen} outside 1..255`);
  const name = ext.text(nameLen, true);
  if (name.includes("\0")) return bad("server_name contains a NUL byte");
  return name;
}

/** ssl_is_valid_alpn_list: a non-empty list of non-empty protocol names filling the extension. */
function alpnOf(ext: Reader): string[] | HelloBody {
  const listLen = ext.u16();
  if (listLen < 2 || listLen !== ext.left) return bad("bad ALPN list length");
  const out: string[] = [];
  while (ext.left > 0) {
    const n = ext.u8();
    if (n < 1 || n > ext.left) return bad("bad ALPN protocol name length");
    out.push(ext.text(n, false));
  }
  return out;
}
