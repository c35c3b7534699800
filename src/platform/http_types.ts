/**
 * The HTTP server port's types, shared by the node:http implementation (http.ts) and Bun's native one
 * (bun/http.ts), and the few pure rules both apply to a request before its handler sees it (Host
 * header, body size). Both implementations import this file, never each other.
 */

/** A fetch-style handler (Hono apps expose `fetch(request)`); `remoteAddress` is the client's IP. */
export type FetchHandler = (request: Request, info: { remoteAddress: string }) => Response | Promise<Response>;

/** A request the client gave up on before it was answered (it closed the connection mid-body). */
export interface ClientAbort {
  /** The client's address. */
  readonly peer: string;
  readonly method: string;
  readonly path: string;
}

/** What serveHttp is asked to serve: `handler` on host:port; `onError` hears errors a handler threw. */
export interface ServeHttpOptions {
  readonly host: string;
  readonly port: number;
  readonly handler: FetchHandler;
  readonly onError?: (err: unknown) => void;
  /**
   * The largest request body accepted at all: the largest limit of any endpoint (each endpoint enforces
   * its own, smaller or equal, while reading). A body declared larger is answered 413, with Consul's
   * message, before the handler runs and never read; on node:http a chunked body that grows past it fails
   * its stream. Default 1 GiB.
   */
  readonly maxRequestBodyBytes?: number;
  /** Hears each request whose client went away mid-body, once (for one log line; no error object). */
  readonly onClientAbort?: (abort: ClientAbort) => void;
}

export interface HttpServerHandle {
  readonly host: string;
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** Stops accepting, closes idle and open connections, resolves when the server is closed. */
  close(): Promise<void>;
}

export const DEFAULT_MAX_REQUEST_BODY_BYTES = 1024 * 1024 * 1024;

/** Go's net/http answer to a Host header that is not a host (httpguts.ValidHostHeader). */
export const MALFORMED_HOST = "400 Bad Request: malformed Host header";

/**
 * Whether a Host header value passes Go's httpguts.ValidHostHeader: only the bytes a URL host (with
 * port, IPv6 brackets or percent-escapes) may hold. An empty value is valid: HTTP/1.0 health checkers
 * (HAProxy's httpchk) send none or an empty one, and Go serves them.
 */
export function validHostHeader(host: string): boolean {
  return /^[A-Za-z0-9!$%&'()*+,\-.:;=[\]_~]*$/.test(host);
}

/** The common Host values (a name or an IP, with or without a port), which make a valid URL as they are. */
export const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The host to build a request's URL with: the Host header when it makes a valid URL, else "localhost"
 * (no Host, an empty one, or one Go accepts but a URL cannot hold, such as "a:b"). Routes only read the
 * URL's path and query, so the substitute changes nothing they see.
 */
export function urlHost(host: string | null | undefined): string {
  if (!host) return "localhost";
  if (PLAIN_HOST.test(host)) return host;
  return URL.canParse(`http://${host}/`) ? host : "localhost";
}

/**
 * How long a connection is kept reading (and discarding) a body that will not be used after the answer
 * has been written, before it is closed: closing at once, with the client still sending, resets the
 * connection and the client may lose the answer it had not read yet (Go's rstAvoidanceDelay, 500 ms).
 */
export const LINGER_MS = 500;

/** Consul's wording for a body over the limit, with the declared size. */
export function bodyTooLargeMessage(declared: number, max: number): string {
  return `Request body(${declared} bytes) too large, max size: ${max} bytes.`;
}
