/**
 * The HTTP server port's types, shared by the node:http implementation (http.ts) and Bun's native one
 * (bun/http.ts). Types only: both implementations import this file, never each other's types.
 */

/** A fetch-style handler (Hono apps expose `fetch(request)`); `remoteAddress` is the client's IP. */
export type FetchHandler = (request: Request, info: { remoteAddress: string }) => Response | Promise<Response>;

/** What serveHttp is asked to serve: `handler` on host:port; `onError` hears errors a handler threw. */
export interface ServeHttpOptions {
  readonly host: string;
  readonly port: number;
  readonly handler: FetchHandler;
  readonly onError?: (err: unknown) => void;
}

export interface HttpServerHandle {
  readonly host: string;
  /** The bound port (the real one when 0 was asked for). */
  readonly port: number;
  /** Stops accepting, closes idle and open connections, resolves when the server is closed. */
  close(): Promise<void>;
}
