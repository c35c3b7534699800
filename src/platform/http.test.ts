import { afterEach, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { rawRequest, uploadBody } from "../../test/harness/raw_http.ts";
import { bunRuntime, serveHttpBun } from "./bun/http.ts";
import { serveHttpNode } from "./http.ts";
import type { ClientAbort, FetchHandler, HttpServerHandle, ServeHttpOptions } from "./http_types.ts";
import { urlHost, validHostHeader } from "./http_types.ts";

const MAX = 1024 * 1024;

/** Both implementations: node:http (Deno, Node) and Bun.serve. */
const IMPLEMENTATIONS: [string, (o: ServeHttpOptions) => Promise<HttpServerHandle>][] = [
  ["node:http", serveHttpNode],
  ["Bun.serve", (o) => serveHttpBun(bunRuntime()!, o)],
];

const servers: HttpServerHandle[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** What a handler saw of each request. */
interface Seen {
  url: string;
  host: string | null;
  bodyBytes?: number;
  bodyError?: string;
}

/** A handler that echoes what it saw; with `readLimit` it reads the body up to that and refuses past it. */
function echo(seen: Seen[], readLimit?: number): FetchHandler {
  return async (req) => {
    const s: Seen = { url: req.url, host: req.headers.get("host") };
    seen.push(s);
    if (readLimit !== undefined && req.body) {
      // Reads up to readLimit, then refuses what is left without cancelling it (as src/http/body.ts does).
      const reader = req.body.getReader();
      s.bodyBytes = 0;
      try {
        let next = await reader.read();
        while (!next.done && s.bodyBytes <= readLimit) {
          s.bodyBytes += next.value.byteLength;
          next = s.bodyBytes > readLimit ? next : await reader.read();
        }
      } catch (err) {
        s.bodyError = (err as Error).name;
        return new Response("broken\n", { status: 400 });
      }
      if (s.bodyBytes > readLimit) {
        reader.releaseLock();
        return new Response("too large\n", { status: 413, headers: { connection: "close" } });
      }
    }
    return new Response(`path=${new URL(req.url).pathname}\n`);
  };
}

const raw = rawRequest;
const upload = (port: number, path: string, total: number, declare: boolean) => uploadBody(port, path, total, { chunked: !declare });

describe("Host header rules", () => {
  test("Go's ValidHostHeader bytes; a URL host for anything else", () => {
    for (const ok of ["", "localhost", "127.0.0.1:8500", "[::1]:8500", "a:b", "x_y", "a%20b"]) expect(validHostHeader(ok)).toBe(true);
    for (const bad of ["a b", "a/b", "u@evil", "a\tb", "é"]) expect(validHostHeader(bad)).toBe(false);
    expect([urlHost(undefined), urlHost(""), urlHost("a:b"), urlHost("consul.local:8500"), urlHost("[::1]")]).toEqual(["localhost", "localhost", "localhost", "consul.local:8500", "[::1]"]);
  });
});

for (const [name, serve] of IMPLEMENTATIONS) {
  describe(`serveHttp on ${name}`, () => {
    const start = async (handler: FetchHandler, extra: Partial<ServeHttpOptions> = {}) => {
      const s = await serve({ host: "127.0.0.1", port: 0, handler, maxRequestBodyBytes: MAX, ...extra });
      servers.push(s);
      return s.port;
    };

    test("HTTP/1.0 without Host and an empty Host are served; the handler gets a valid URL", async () => {
      const seen: Seen[] = [];
      const port = await start(echo(seen));
      expect(await raw(port, "GET /v1/status/leader HTTP/1.0\r\n\r\n")).toMatch(/^HTTP\/1\.[01] 200[\s\S]*path=\/v1\/status\/leader/);
      expect(await raw(port, "GET /v1/agent/self?x=1 HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 200[\s\S]*path=\/v1\/agent\/self/);
      expect(await raw(port, "GET /a HTTP/1.1\r\nHost: a:b\r\nConnection: close\r\n\r\n")).toMatch(/^HTTP\/1\.1 200[\s\S]*path=\/a/);
      expect(seen.map((s) => s.url)).toEqual(["http://localhost/v1/status/leader", "http://localhost/v1/agent/self?x=1", "http://localhost/a"]);
    });

    test("a malformed Host is 400 with Go's words and never reaches the handler", async () => {
      const seen: Seen[] = [];
      const port = await start(echo(seen));
      for (const host of ["a b", "a/b", "u@evil"]) {
        const answer = await raw(port, `GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
        expect(answer).toStartWith("HTTP/1.1 400");
        expect(answer).toContain("400 Bad Request: malformed Host header");
      }
      expect(seen).toEqual([]);
    });

    test("a body declared over the server's limit is 413 and never read", async () => {
      const seen: Seen[] = [];
      const port = await start(echo(seen, MAX));
      const { answer, sent } = await upload(port, "/v1/kv/k", 64 * MAX, true);
      expect(answer).toStartWith("HTTP/1.1 413");
      expect(answer).toContain(`Request body(${64 * MAX} bytes) too large, max size: ${MAX} bytes.`);
      expect(sent).toBeLessThan(32 * MAX);
      expect(seen).toEqual([]);
    });

    test("a handler that refuses a chunked body mid-way answers at once and the upload stops (no drain)", async () => {
      const seen: Seen[] = [];
      const port = await start(echo(seen, 64 * 1024));
      const { answer, sent } = await upload(port, "/v1/kv/k", 256 * MAX, false);
      expect(answer).toStartWith("HTTP/1.1 413");
      expect(answer).toContain("too large");
      expect(sent).toBeLessThan(64 * MAX);
      expect(seen[0]!.bodyBytes).toBeLessThan(MAX);
    });

    test("a body the handler never reads (even a GET's) does not keep the client sending", async () => {
      const port = await start(() => new Response("ok\n"));
      for (const method of ["PUT", "GET", "DELETE"]) {
        // Chunked, of any size, or declared up to the server's limit.
        for (const [chunked, total] of [[true, 1024 * MAX], [false, MAX]] as const) {
          const { answer, sent } = await uploadBody(port, "/ignored", total, { method, chunked });
          expect([method, chunked, answer.split("\r\n")[0]]).toEqual([method, chunked, "HTTP/1.1 200 OK"]);
          expect(answer).toContain("ok\n");
          expect(answer.toLowerCase()).toContain("connection: close");
          // Held back by TCP until the connection closes. Bun reads (and drops) a GET's body meanwhile, as
          // fetch gives the handler no stream to leave unread, so how much of it gets sent before the close
          // depends on the machine's speed: only the close is checked there.
          if (!(name === "Bun.serve" && method === "GET")) expect(sent).toBeLessThan(64 * MAX);
        }
      }
    });

    test("a small body left unread is dropped and the connection serves its next request", async () => {
      const port = await start((req) => new Response(`${new URL(req.url).pathname}\n`));
      const first = `PUT /first HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n${"a".repeat(1000)}`;
      const second = "GET /second HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
      const answer = await raw(port, first + second);
      expect(answer.match(/HTTP\/1\.1 200/g)?.length).toBe(2);
      expect(answer).toContain("/second\n");
    });

    test("bodies within the limit arrive whole, declared or chunked", async () => {
      const seen: Seen[] = [];
      const port = await start(echo(seen, MAX));
      expect((await upload(port, "/a", MAX, true)).answer).toStartWith("HTTP/1.1 200");
      expect((await upload(port, "/b", MAX - 7, false)).answer).toStartWith("HTTP/1.1 200");
      expect(seen.map((s) => s.bodyBytes)).toEqual([MAX, MAX - 7]);
    });

    test("a client that goes away mid-body is reported once, with its address; the body read fails", async () => {
      const aborts: ClientAbort[] = [];
      const seen: Seen[] = [];
      const errors: unknown[] = [];
      const port = await start(echo(seen, MAX), { onClientAbort: (a) => aborts.push(a), onError: (e) => errors.push(e) });
      const s = connect(port, "127.0.0.1");
      await new Promise((r) => s.once("connect", r));
      s.write("PUT /v1/kv/abort?x=1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n" + "a".repeat(5000));
      await new Promise((r) => setTimeout(r, 100));
      s.destroy();
      for (let i = 0; i < 50 && (aborts.length === 0 || seen[0]?.bodyError === undefined); i++) await new Promise((r) => setTimeout(r, 20));
      expect(aborts).toEqual([{ peer: "127.0.0.1", method: "PUT", path: "/v1/kv/abort" }]);
      expect(seen[0]!.bodyError).toBe("AbortError");
      expect(errors).toEqual([]);
    });
  });
}
