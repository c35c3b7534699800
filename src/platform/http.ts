/**
 * HTTP/1.1 server port for fetch-style handlers (Hono apps expose `fetch(request)`).
 *
 * node:http behaves the same on Bun, Deno and Node; Bun's native server is the fast path. Request and header timeouts are
 * disabled because Consul's blocking queries hold a request open for up to 10 minutes; handlers bound
 * their own waits.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { bunRuntime, serveHttpBun } from "./bun/http.ts";
import type { FetchHandler, HttpServerHandle, ServeHttpOptions } from "./http_types.ts";

/**
 * Serves `handler` on host:port. Rejects (with the address in the message) when the port cannot be
 * bound. On Bun the native server is used (bun/http.ts: much faster); elsewhere node:http.
 */
export function serveHttp(options: ServeHttpOptions): Promise<HttpServerHandle> {
  const bun = bunRuntime();
  return bun ? serveHttpBun(bun, options) : serveHttpNode(options);
}

/** The node:http implementation (Deno, Node, and Bun when asked for it by tests). */
export function serveHttpNode(options: ServeHttpOptions): Promise<HttpServerHandle> {
  const sockets = new Set<Socket>();
  const server = createServer({ noDelay: true }, (req, res) => {
    handle(req, res, options.handler).catch((err) => {
      options.onError?.(err);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      res.end("internal error\n");
    });
  });
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 30_000;
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  return new Promise((resolve, reject) => {
    server.once("error", (err) => reject(new Error(`HTTP server cannot listen on ${options.host}:${options.port}: ${(err as Error).message}`)));
    server.listen(options.port, options.host, () => {
      const addr = server.address();
      const port = typeof addr === "object" && addr ? addr.port : options.port;
      resolve({
        host: options.host,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}

async function handle(req: IncomingMessage, res: ServerResponse, handler: FetchHandler): Promise<void> {
  const host = req.headers.host ?? "localhost";
  const url = `http://${host}${req.url ?? "/"}`;
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  const request = new Request(url, {
    method: req.method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>) : undefined,
    signal: abort.signal,
    // @ts-ignore: required by the fetch spec for streaming bodies; unknown to some type packages.
    duplex: "half",
  });
  const response = await handler(request, { remoteAddress: req.socket.remoteAddress ?? "" });
  const outHeaders: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    const prev = outHeaders[key];
    outHeaders[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  });
  res.writeHead(response.status, outHeaders);
  if (!response.body || req.method === "HEAD") {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((r) => res.once("drain", r));
    }
  } finally {
    res.end();
  }
}
