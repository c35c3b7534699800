/**
 * For CLI command tests: a fake agent HTTP API on a loopback port that records every request (method,
 * raw path and query, headers, body) and answers from a route table keyed `"METHOD /path"` (the raw,
 * still-escaped path, no query). Unrouted requests get 404. Lets a test assert the exact requests a
 * command makes without the real HTTP layer.
 */
import { serveHttp, type HttpServerHandle } from "../../src/platform/index.ts";

export interface RecordedRequest {
  readonly method: string;
  /** The path as sent, still percent-encoded. */
  readonly path: string;
  /** The query as sent, without the "?" ("" when none). */
  readonly query: string;
  readonly headers: Headers;
  readonly body: Uint8Array;
  /** The body as UTF-8 text. */
  readonly text: string;
  /** `METHOD /path?query`, for compact assertions. */
  readonly line: string;
}

export interface FakeReply {
  readonly status?: number;
  /** A string or bytes are sent as they are; anything else as JSON. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

export type FakeRoute = FakeReply | ((req: RecordedRequest) => FakeReply);

export interface RecordingAgent {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every request since the last `reset`, in arrival order. */
  readonly requests: RecordedRequest[];
  /** The request lines (`METHOD /path?query`) since the last `reset`. */
  lines(): string[];
  /** Forgets recorded requests and replaces the routes. */
  reset(routes?: Readonly<Record<string, FakeRoute>>): void;
  close(): Promise<void>;
}

/** Starts a recording fake agent on 127.0.0.1 and an ephemeral port. */
export async function startRecordingAgent(routes: Readonly<Record<string, FakeRoute>> = {}): Promise<RecordingAgent> {
  let table = routes;
  const requests: RecordedRequest[] = [];
  const server: HttpServerHandle = await serveHttp({
    host: "127.0.0.1",
    port: 0,
    handler: async (req: Request) => {
      const url = new URL(req.url);
      const raw = req.url.slice(req.url.indexOf(url.host) + url.host.length);
      const q = raw.indexOf("?");
      const path = q < 0 ? raw : raw.slice(0, q);
      const query = q < 0 ? "" : raw.slice(q + 1);
      const body = new Uint8Array(await req.arrayBuffer());
      const recorded: RecordedRequest = { method: req.method, path, query, headers: req.headers, body, text: new TextDecoder().decode(body), line: `${req.method} ${path}${q < 0 ? "" : `?${query}`}` };
      requests.push(recorded);
      const route = table[`${req.method} ${path}`];
      if (route === undefined) return new Response("not found", { status: 404 });
      const reply = typeof route === "function" ? route(recorded) : route;
      const payload = reply.body;
      const isRaw = typeof payload === "string" || payload instanceof Uint8Array || payload === undefined;
      const headers: Record<string, string> = { ...(isRaw ? {} : { "content-type": "application/json" }), ...reply.headers };
      return new Response(isRaw ? (payload as string | Uint8Array<ArrayBuffer> | undefined) ?? "" : JSON.stringify(payload), { status: reply.status ?? 200, headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    lines: () => requests.map((r) => r.line),
    reset(next = {}) {
      requests.length = 0;
      table = next;
    },
    close: () => server.close(),
  };
}
