/**
 * TLS port over `node:tls`, identical on Bun and Deno.
 *
 * Server side: build a `tls.Server` with `createTlsServer` and feed it raw sockets with
 * `server.emit("connection", socket)` (see DESIGN.md section 3). Never wrap an accepted socket with
 * `new tls.TLSSocket(sock, { isServer: true })`: on Node and Deno that accepts client certificates
 * from unknown CAs.
 */
import * as net from "node:net";
import * as tls from "node:tls";
import { Buffer } from "node:buffer";

/** PEM text, or its bytes. */
export type PemInput = string | Uint8Array;

/** TLS material of one endpoint: trusted CA(s), own certificate (chain) and private key. */
export interface TlsMaterial {
  readonly ca: PemInput | readonly PemInput[];
  readonly cert: PemInput;
  readonly key: PemInput;
}

export interface TlsServerOptions {
  readonly material: TlsMaterial;
  /**
   * true: a client certificate is required and must chain to `material.ca`; a missing or unknown
   * certificate fails the handshake ('tlsClientError'). false: no client certificate is requested.
   */
  readonly requireClientCert: boolean;
  /** ALPN protocols the server accepts, in preference order. Empty/absent: no ALPN. */
  readonly alpn?: readonly string[];
  /** Optional SNI hook: pick a SecureContext per requested server name (node's SNICallback). */
  readonly sniCallback?: (servername: string, cb: (err: Error | null, ctx?: tls.SecureContext) => void) => void;
  /** Lowest TLS version accepted; default TLSv1.2. */
  readonly minVersion?: tls.SecureVersion;
  /** Handshake timeout inside tls.Server, in ms; default 10000. Callers usually add their own deadline. */
  readonly handshakeTimeoutMs?: number;
}

function pem(input: PemInput): string | Buffer {
  return typeof input === "string" ? input : Buffer.from(input);
}

function caList(ca: TlsMaterial["ca"]): Array<string | Buffer> {
  return (Array.isArray(ca) ? (ca as readonly PemInput[]) : [ca as PemInput]).map(pem);
}

/**
 * Creates a `tls.Server` that is never listened on: callers hand it sockets with
 * `emit("connection", socket)` and take the results from its 'secureConnection' event (the
 * TLSSocket then belongs to the listener of that event) and failures from 'tlsClientError'
 * (the socket is destroyed by the server).
 */
export function createTlsServer(options: TlsServerOptions): tls.Server {
  const alpn = options.alpn && options.alpn.length > 0 ? [...options.alpn] : undefined;
  return tls.createServer({
    ca: caList(options.material.ca),
    cert: pem(options.material.cert),
    key: pem(options.material.key),
    requestCert: options.requireClientCert,
    rejectUnauthorized: options.requireClientCert,
    ALPNProtocols: alpn,
    SNICallback: options.sniCallback,
    minVersion: options.minVersion ?? "TLSv1.2",
    handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
  });
}

export interface DialTlsOptions {
  /** An already connected socket to run TLS over (e.g. from dialTcp); or give host+port. */
  readonly socket?: net.Socket;
  readonly host?: string;
  readonly port?: number;
  /** CA(s) the server certificate must chain to. */
  readonly ca: PemInput | readonly PemInput[];
  /** Client certificate and key, for mutual TLS. */
  readonly cert?: PemInput;
  readonly key?: PemInput;
  /** SNI and the name checked against the server certificate; default `host` (never sent for IPs). */
  readonly servername?: string;
  /** ALPN protocols offered, in preference order. */
  readonly alpn?: readonly string[];
  /** Check the certificate's SANs against servername/host; default true. The chain is always verified. */
  readonly verifyHostname?: boolean;
  /** Deadline for connect + handshake, in ms; default 10000. */
  readonly timeoutMs?: number;
}

/**
 * Opens a TLS client connection and resolves after the handshake, with `alpnProtocol` set (false
 * when none was negotiated). The caller owns the returned socket. Rejects, with a message starting
 * `dial tls <target>:` and the socket destroyed, on an unknown server CA, a hostname mismatch (when
 * verifyHostname), a refused connection, a server alert (e.g. our client cert was refused) or the
 * deadline. A socket passed in `socket` is destroyed on failure too.
 *
 * With TLS 1.3 the server checks our client certificate after the client-side handshake finished,
 * so a refused client certificate shows up as an 'error'/'close' on the returned socket, not as a
 * rejection here: callers must always listen for 'error' on the socket.
 */
export function dialTls(options: DialTlsOptions): Promise<tls.TLSSocket> {
  const target = options.socket
    ? `${options.socket.remoteAddress ?? options.host ?? "socket"}:${options.socket.remotePort ?? options.port ?? 0}`
    : `${options.host}:${options.port}`;
  const checkName = options.servername ?? options.host ?? "localhost";
  const verifyHostname = options.verifyHostname ?? true;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise<tls.TLSSocket>((resolve, reject) => {
    const sni = options.servername ?? (options.host && net.isIP(options.host) === 0 ? options.host : undefined);
    const sock = tls.connect({
      socket: options.socket,
      host: options.socket ? undefined : options.host,
      port: options.socket ? undefined : options.port,
      ca: caList(options.ca),
      cert: options.cert === undefined ? undefined : pem(options.cert),
      key: options.key === undefined ? undefined : pem(options.key),
      servername: sni,
      ALPNProtocols: options.alpn ? [...options.alpn] : undefined,
      rejectUnauthorized: true,
      checkServerIdentity: (_host, cert) => (verifyHostname ? tls.checkServerIdentity(checkName, cert) : undefined),
    });
    sock.setNoDelay(true); // small RPC and Raft messages must not wait for Nagle's algorithm
    let settled = false;
    const fail = (message: string, code?: string, cause?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.on("error", () => {});
      sock.destroy();
      options.socket?.destroy();
      reject(Object.assign(new Error(`dial tls ${target}: ${message}`, { cause }), { code }));
    };
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs}ms`, "ETIMEDOUT"), timeoutMs);
    const onError = (err: NodeJS.ErrnoException) => fail(err.message || String(err.code), err.code, err);
    const onClose = () => fail("connection closed during handshake", "ECONNRESET");
    sock.once("error", onError);
    sock.once("close", onClose);
    sock.once("secureConnect", () => {
      if (settled) return;
      if (!sock.authorized) return fail(`server certificate rejected: ${sock.authorizationError}`, "CERT_UNTRUSTED");
      settled = true;
      clearTimeout(timer);
      sock.off("error", onError);
      sock.off("close", onClose);
      resolve(sock);
    });
  });
}
