/**
 * Hostile requests against a real `causeway agent -dev`, on Bun (Bun.serve) and on Deno (node:http):
 * 1 GB bodies, declared and chunked, to every kind of endpoint are refused with 413 while they stream,
 * and the server's resident memory (VmRSS from /proc/<pid>/status, sampled throughout) stays under
 * twice what it was before; health checks without a Host are served and a malformed Host is refused;
 * datacenter names are checked and an unknown one is Consul's "No path to datacenter"; a client that
 * hangs up mid-body is one log line; CA key settings the built-in CA cannot honour are refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { curlUpload, peakRssDuring, rssBytes } from "../harness/curl_upload.ts";
import { rawRequest, uploadBody } from "../harness/raw_http.ts";
import { CLI } from "../harness/server_cluster.ts";

const GB = 1_000_000_000;
const MIB = 1024 * 1024;
const DENO = join(import.meta.dir, "..", "..", "node_modules", ".bin", "deno");
const DEV_ARGS = ["agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"];

const RUNTIMES: [name: string, start: () => Promise<AgentProcess>][] = [
  ["Bun", () => startAgentProcess(process.execPath, [CLI, ...DEV_ARGS])],
  ["Deno", () => startAgentProcess(DENO, ["run", "-A", CLI, ...DEV_ARGS], { timeoutMs: 60_000 })],
];

/** Every kind of endpoint that takes a body, with its limit. */
const ENDPOINTS: [path: string, limit: number][] = [
  ["/v1/kv/big", 512 * 1024],
  ["/v1/txn", 512 * 1024],
  ["/v1/catalog/register", 4 * MIB],
  ["/v1/agent/service/register", 4 * MIB],
  ["/v1/config", 4 * MIB],
];

for (const [runtime, start] of RUNTIMES) {
  describe(`agent -dev on ${runtime}`, () => {
    let agent: AgentProcess;
    let port: number;
    const url = (path: string) => `${agent.httpUrl}${path}`;
    const put = (path: string, body: string) => fetch(url(path), { method: "PUT", body, signal: AbortSignal.timeout(10_000) });

    beforeAll(async () => {
      agent = await start();
      port = Number(new URL(agent.httpUrl).port);
      await poll(() => put("/v1/kv/ready", "1").then((r) => r.json()), (ok) => ok === true, 30_000, "a first KV write");
      // Warm up the paths under test, so that the baseline includes what a served request costs.
      for (let i = 0; i < 20; i++) await put(`/v1/kv/warm/${i}`, "x".repeat(1000));
      await put("/v1/catalog/register", JSON.stringify({ Node: "warm", Address: "10.0.0.1", Service: { Service: "web" } }));
      await curlUpload(url("/v1/kv/warm"), 2 * MIB, { chunked: true });
    }, 90_000);
    afterAll(async () => {
      // SIGTERM lets the -dev agent remove its data dir; SIGKILL if it does not stop in time.
      const stopped = agent?.stop("SIGTERM").catch(() => null);
      await Promise.race([stopped, new Promise((r) => setTimeout(r, 5_000))]);
      agent?.child.kill("SIGKILL");
    });

    test("1 GB bodies, declared or chunked, are refused with 413 while streaming; RSS stays under 2x its baseline", async () => {
      const baseline = await rssBytes(agent.child.pid!);
      const seen: string[] = [];
      const { peak } = await peakRssDuring(agent.child.pid!, async () => {
        for (const [path, limit] of ENDPOINTS) {
          for (const chunked of [false, true]) {
            const r = await curlUpload(url(path), GB, { chunked });
            seen.push(`${path} ${chunked ? "chunked" : "declared"}: ${r.code}, ${r.uploaded} bytes sent, ${Math.round(r.ms)} ms`);
            expect([path, chunked, r.code]).toEqual([path, chunked, "413"]);
            // A declared gigabyte is over every endpoint's limit: the server refuses it before any route.
            expect(r.body).toStartWith(chunked ? `Request body too large, max size: ${limit} bytes.` : `Request body(${GB} bytes) too large, max size: ${256 * MIB} bytes.`);
            // Refused while streaming: the client got nowhere near the end of its body.
            expect(r.uploaded).toBeLessThan(64 * MIB);
          }
        }
        // The snapshot endpoint has the largest limit; a body declared over it is refused unread too.
        const snap = await curlUpload(url("/v1/snapshot"), GB);
        expect([snap.code, snap.body, snap.uploaded < 64 * MIB]).toEqual(["413", `Request body(${GB} bytes) too large, max size: ${256 * MIB} bytes.\n`, true]);
        // A raw client that keeps sending whatever the server says is cut off as well.
        for (const chunked of [false, true]) expect((await uploadBody(port, "/v1/kv/raw", GB, { chunked })).sent).toBeLessThan(64 * MIB);
      });
      console.log(`${runtime}: RSS baseline ${(baseline / MIB).toFixed(1)} MiB, peak ${(peak / MIB).toFixed(1)} MiB over ${seen.length + 3} uploads of 1 GB\n  ${seen.join("\n  ")}`);
      expect(peak).toBeLessThan(2 * baseline);
      // And the agent is none the worse for it.
      expect(await (await put("/v1/kv/after", "ok")).json()).toBe(true);
    }, 120_000);

    test("a 20 MB body declared under the server's own limit gets the endpoint's 413 with Consul's words, also after Expect: 100-continue", async () => {
      for (const expectContinue of [false, true]) {
        const r = await curlUpload(url("/v1/catalog/register"), 20_000_000, { expect: expectContinue });
        expect([r.code, r.body]).toEqual(["413", "Request body(20000000 bytes) too large, max size: 4194304 bytes.\n"]);
        const kv = await curlUpload(url("/v1/kv/k"), 20_000_000, { expect: expectContinue });
        expect(kv.body).toBe("Request body(20000000 bytes) too large, max size: 524288 bytes. See https://www.consul.io/docs/agent/options.html#kv_max_value_size.\n");
      }
    }, 60_000);

    test("HTTP/1.0 without a Host and an empty Host are served; a malformed Host is 400", async () => {
      expect(await rawRequest(port, "GET /v1/status/leader HTTP/1.0\r\n\r\n")).toMatch(/^HTTP\/1\.1 200 [\s\S]*"127\.0\.0\.1:\d+"$/);
      expect(await rawRequest(port, "GET /v1/status/leader HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n")).toStartWith("HTTP/1.1 200");
      const bad = await rawRequest(port, "GET /v1/status/leader HTTP/1.1\r\nHost: a b/c\r\n\r\n");
      expect(bad).toStartWith("HTTP/1.1 400");
      expect(bad).toContain("malformed Host header");
    });

    test("?dc=: a bad name is 400, an unknown one 400 with Consul's 'No path to datacenter' (Consul: 500), without internals", async () => {
      const bad = await fetch(url("/v1/catalog/nodes?dc=a%20b"));
      expect([bad.status, await bad.text()]).toEqual([400, `Invalid datacenter name "a b": only letters, digits, '-' and '_' are allowed\n`]);
      for (let i = 0; i < 50; i++) {
        const res = await fetch(url(`/v1/kv/x?dc=nowhere-${i}`));
        expect([res.status, await res.text()]).toEqual([400, "No path to datacenter\n"]);
      }
      const write = await put("/v1/kv/x?dc=nowhere", "v");
      expect([write.status, await write.text()]).toEqual([400, "No path to datacenter\n"]);
      const reg = await put("/v1/catalog/register", JSON.stringify({ Datacenter: "nowhere", Node: "n", Address: "10.0.0.1" }));
      expect([reg.status, await reg.text()]).toEqual([400, "No path to datacenter\n"]);
      const ops = await fetch(url("/v1/operator/raft/configuration?dc=nowhere"));
      expect([ops.status, await ops.text()]).toEqual([400, "No path to datacenter\n"]);
    });

    test("a client that hangs up mid-body is logged as one line with its address, not a stack", async () => {
      const before = agent.output().length;
      await rawRequest(port, `PUT /v1/kv/abort HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n${"a".repeat(5000)}`, 300);
      const logged = await poll(async () => agent.output().slice(before), (o) => o.includes("mid-request"), 5_000, "the abort to be logged");
      await new Promise((r) => setTimeout(r, 200));
      const lines = agent.output().slice(before).split("\n").filter((l) => l.trim() !== "");
      expect(lines.filter((l) => l.includes("/v1/kv/abort"))).toEqual([expect.stringMatching(/\[WARN\] agent\.http: client closed the connection mid-request peer=127\.0\.0\.1 method=PUT path=\/v1\/kv\/abort$/)]);
      expect(logged).not.toMatch(/AbortError|DOMException|^\s+at /m);
    });

    test("CA configuration: key settings Consul refuses and an empty configuration are 400s that change nothing", async () => {
      const before = await (await fetch(url("/v1/connect/ca/configuration"))).json();
      for (const [body, message] of [
        [{ Provider: "consul", Config: { PrivateKeyType: "rsa", PrivateKeyBits: 3072 } }, "error configuring provider: RSA key length must be 2048 or 4096 bits"],
        [{ Provider: "consul", Config: { PrivateKeyType: "ec", PrivateKeyBits: 300 } }, "error configuring provider: ECDSA key length must be one of (224, 256, 384, 521) bits"],
        [{}, "Missing CA provider"],
      ] as const) {
        const res = await put("/v1/connect/ca/configuration", JSON.stringify(body));
        expect(res.status).toBe(400);
        expect(await res.text()).toStartWith(message);
      }
      const empty = await put("/v1/connect/ca/configuration", "");
      expect([empty.status, await empty.text()]).toEqual([400, "Request decode failed: EOF\n"]);
      expect(await (await fetch(url("/v1/connect/ca/configuration"))).json()).toEqual(before);
    });
  });
}
