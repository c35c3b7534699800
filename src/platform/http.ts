/**
 * HTTP/1.1 server port for fetch-style handlers (Hono apps expose `fetch(request)`).
 *
 * node:http behaves the same on Bun, Deno and Node; Bun's native server is the fast path. Request and header timeouts are
 * disabled because Consul's blocking queries hold a request open for up to 10 minutes; handlers bound
 * their own waits.
 *
 * Before a handler runs: a Host header Go would call malformed is answered 400 (an absent or empty one
 * is served, as Go serves HTTP/1.0 health checks), and a body declared over `maxRequestBodyBytes` 413.
 * The body reaches the handler as a stream that reads from the socket only as fast as the handler
 * does; a body the handler left unread (it refused it, or never wanted it) closes the connection after
 * the answer and a short linger (LINGER_MS) instead of a drain of the whole body, unless what is
 * left is small.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { bunRuntime, serveHttpBun } from "./bun/http.ts";
import {
  bodyTooLargeMessage, DEFAULT_MAX_REQUEST_BODY_BYTES, LINGER_MS, MALFORMED_HOST, urlHost, validHostHeader, type HttpServerHandle,
  type ServeHttpOptions,
} from "./http_types.ts";

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
    handle(req, res, options).catch((err) => {
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

/** Unread body bytes a kept-alive connection may still drain after the answer (Go's server reads up to 256 KiB). */
const MAX_DRAIN_BYTES = 256 * 1024;

async function handle(req: IncomingMessage, res: ServerResponse, options: ServeHttpOptions): Promise<void> {
  const host = req.headers.host;
  if (host !== undefined && !validHostHeader(host)) {
    res.writeHead(400, { "content-type": "text/plain; charset=utf-8", connection: "close" });
    res.end(MALFORMED_HOST);
    return;
  }
  const max = options.maxRequestBodyBytes ?? DEFAULT_MAX_REQUEST_BODY_BYTES;
  const declared = req.headers["content-length"] !== undefined ? Number(req.headers["content-length"]) : undefined;
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  // A GET may carry a body too: fetch's Request cannot hold it, but it is on the wire all the same.
  const bodyOnWire = req.headers["transfer-encoding"] !== undefined || (declared ?? 0) > 0;
  if (declared !== undefined && declared > max) {
    await answerUnread(req, res, 413, { "content-type": "text/plain; charset=utf-8" }, new TextEncoder().encode(bodyTooLargeMessage(declared, max) + "\n"));
    return;
  }
  const peer = req.socket.remoteAddress ?? "";
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  req.on("close", () => {
    if (hasBody && !req.complete && !res.writableFinished) options.onClientAbort?.({ peer, method: req.method ?? "", path: (req.url ?? "/").split("?")[0]! });
  });
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const body = hasBody ? bodyStream(req, max) : undefined;
  const request = new Request(`http://${urlHost(host)}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    body: body?.stream,
    signal: abort.signal,
    // @ts-ignore: required by the fetch spec for streaming bodies; unknown to some type packages.
    duplex: "half",
  });
  const response = await options.handler(request, { remoteAddress: peer });
  const outHeaders: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    const prev = outHeaders[key];
    outHeaders[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  });
  // A body left unread is not drained whole (it may be a gigabyte): the connection closes after the answer.
  // A small rest is read and dropped, so that the connection can serve its next request.
  body?.abandon();
  if (bodyOnWire && !req.complete) {
    if (declared === undefined || declared > MAX_DRAIN_BYTES || outHeaders["connection"] === "close") {
      await answerUnread(req, res, response.status, outHeaders, req.method === "HEAD" ? new Uint8Array() : new Uint8Array(await response.arrayBuffer()));
      return;
    }
    req.resume();
  }
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

/**
 * Answers a request whose body will not be read, then closes the connection: the answer goes out whole
 * (with its length, so the client knows it has all of it) while the body stays unread, which holds the
 * client back (TCP flow control); the connection closes LINGER_MS later, once the client has had time
 * to read the answer, as Go's server does (closeWriteAndWait).
 */
async function answerUnread(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: Uint8Array): Promise<void> {
  const out = { ...headers, "content-length": String(body.byteLength), connection: "close" };
  delete (out as Record<string, unknown>)["transfer-encoding"];
  req.pause();
  res.writeHead(status, out);
  res.write(body);
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, LINGER_MS);
    req.once("close", done);
  });
  res.end();
}

/** The error a body stream fails with when the client closes the connection mid-body. */
function connectionClosed(): Error {
  return Object.assign(new Error("The connection was closed."), { name: "AbortError" });
}

/**
 * The request body as a web stream that reads from the socket only when its reader asks (one chunk
 * queued at most) and fails past `max` bytes. Cancelling it merely stops reading: the socket stays open
 * for the answer (Readable.toWeb would destroy it), and what arrives later is dropped.
 */
function bodyStream(req: IncomingMessage, max: number): { stream: ReadableStream<Uint8Array>; abandon(): void } {
  let total = 0;
  let finished = false;
  let controller: ReadableStreamDefaultController<Uint8Array>;
  const fail = (err: Error) => {
    if (finished) return;
    finished = true;
    req.pause();
    controller.error(err);
  };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      req.on("data", (chunk: Buffer) => {
        if (finished) return;
        // The chunk that crosses `max` still reaches the reader, whose own (smaller or equal) limit refuses it.
        if (total > max) return fail(new RangeError(`request body larger than ${max} bytes`));
        total += chunk.byteLength;
        c.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((c.desiredSize ?? 0) <= 0) req.pause();
      });
      req.on("end", () => {
        if (finished) return;
        finished = true;
        c.close();
      });
      req.on("close", () => {
        if (!req.complete) fail(connectionClosed());
      });
      req.on("error", () => fail(connectionClosed()));
      req.pause();
    },
    pull() {
      if (!finished) req.resume();
    },
    cancel() {
      finished = true;
      req.pause();
    },
  });
  return {
    stream,
    /** The handler is done with the body: what arrives from now on is dropped (the caller decides whether it is read). */
    abandon() {
      if (finished) return;
      finished = true;
      controller.error(new Error("the request body was not read"));
    },
  };
}
