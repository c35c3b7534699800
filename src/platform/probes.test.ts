import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as http from "node:http";
import * as net from "node:net";
import type { AddressInfo } from "node:net";
import { httpHealthProbe, splitHostPort, tcpHealthProbe } from "./probes.ts";

let server: http.Server;
let base = "";
const seen: { method: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", headers: req.headers, body });
      if (req.url === "/ok") res.writeHead(200, "OK").end("healthy");
      else if (req.url === "/busy") res.writeHead(429, "Too Many Requests").end("slow down");
      else if (req.url === "/moved") res.writeHead(302, { location: "/ok" }).end();
      else if (req.url === "/big") res.writeHead(200).end("a".repeat(100_000) + "END");
      else if (req.url === "/hang") return; // never answers
      else res.writeHead(404, "Not Found").end("nope");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const req = (path: string, extra: Partial<Parameters<typeof httpHealthProbe>[0]> = {}) =>
  httpHealthProbe({ url: base + path, method: "GET", headers: { "User-Agent": ["Consul Health Check"] }, body: "", timeoutMs: 2_000, tlsSkipVerify: false, maxBodyBytes: 4096, ...extra });

describe("httpHealthProbe over loopback", () => {
  test("returns status, reason and body; sends the given headers and body", async () => {
    expect(await req("/ok", { method: "POST", body: "ping" })).toEqual({ status: 200, statusText: "OK", body: "healthy" });
    expect(seen.at(-1)).toMatchObject({ method: "POST", body: "ping", headers: { "user-agent": "Consul Health Check" } });
    expect(await req("/busy")).toEqual({ status: 429, statusText: "Too Many Requests", body: "slow down" });
  });

  test("follows redirects and keeps only the body's tail", async () => {
    expect((await req("/moved")).body).toBe("healthy");
    const big = await req("/big", { maxBodyBytes: 10 });
    expect(big.body).toBe("aaaaaaaEND");
  });

  test("times out on a server that never answers", async () => {
    await expect(req("/hang", { timeoutMs: 100 })).rejects.toThrow("context deadline exceeded");
  });

  test("a refused connection reads like Go's dial error", async () => {
    const closed = await freePort();
    await expect(httpHealthProbe({ url: `http://127.0.0.1:${closed}/`, method: "GET", headers: {}, body: "", timeoutMs: 2_000, tlsSkipVerify: false, maxBodyBytes: 10 }))
      .rejects.toThrow(`dial tcp 127.0.0.1:${closed}: connect: connection refused`);
  });
});

describe("tcpHealthProbe over loopback", () => {
  test("connects to a listener; a closed port is refused", async () => {
    const port = (server.address() as AddressInfo).port;
    await tcpHealthProbe(`127.0.0.1:${port}`, 2_000);
    const closed = await freePort();
    await expect(tcpHealthProbe(`127.0.0.1:${closed}`, 2_000)).rejects.toThrow(`dial tcp 127.0.0.1:${closed}: connect: connection refused`);
    await expect(tcpHealthProbe("127.0.0.1", 2_000)).rejects.toThrow("dial tcp address 127.0.0.1: missing port in address");
  });

  test("splitHostPort handles IPv6", () => {
    expect(splitHostPort("[::1]:80")).toEqual({ host: "::1", port: 80 });
    expect(splitHostPort("db.local:5432")).toEqual({ host: "db.local", port: 5432 });
  });
});

/** A port that was free a moment ago (bound then released). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
