/**
 * Script and gRPC health checks in a real agent process: registered through the HTTP API, run by the
 * agent (a real process; a real grpc-js health server), passing and failing as their targets change.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";

const dir = mkdtempSync(join(tmpdir(), "causeway-checks-"));
let agent: AgentProcess | undefined;

// A grpc-js server with grpc.health.v1.Health/Check; `serving` decides the answer.
let serving = 1;
const health = new grpc.Server();
let grpcPort = 0;
health.addService({
  Check: {
    path: "/grpc.health.v1.Health/Check", requestStream: false, responseStream: false,
    requestSerialize: () => Buffer.alloc(0), requestDeserialize: (b: Buffer) => ({ raw: b }),
    responseSerialize: (status: number) => Buffer.from([0x08, status]), responseDeserialize: (b: Buffer) => b[1] ?? 0,
  },
}, { Check: (_call: unknown, cb: grpc.sendUnaryData<number>) => cb(null, serving) });

beforeAll(async () => {
  grpcPort = await new Promise<number>((resolve, reject) =>
    health.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
  agent = await startAgentProcess(process.execPath, [
    CLI, "agent", "-server", "-bootstrap-expect", "1", "-data-dir", join(dir, "data"), "-node", "checks", "-bind", "127.0.0.1",
    "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0", "-enable-script-checks",
  ]);
  await poll(() => fetch(`${agent!.httpUrl}/v1/status/leader`).then((r) => r.text()), (t) => t !== '""', 15_000, "a leader");
});
afterAll(async () => {
  // SIGTERM first: a graceful stop kills the check processes still running (their own process groups).
  const code = await Promise.race([agent?.stop("SIGTERM"), new Promise((r) => setTimeout(() => r("late"), 10_000))]);
  if (code === "late") await agent?.stop("SIGKILL").catch(() => {});
  health.forceShutdown();
  rmSync(dir, { recursive: true, force: true });
});

const put = (path: string, body: unknown) => fetch(agent!.httpUrl + path, { method: "PUT", body: JSON.stringify(body) });
const check = (id: string) => () =>
  fetch(`${agent!.httpUrl}/v1/agent/checks`).then((r) => r.json()).then((all) => (all as Record<string, { Status: string; Output: string }>)[id]);

describe("health checks run by a real agent", () => {
  test("a script check follows its command's exit code, with its output", async () => {
    const code = join(dir, "code");
    writeFileSync(code, "0");
    const res = await put("/v1/agent/check/register", {
      Name: "script", Args: ["sh", "-c", `echo "exit $(cat ${code})"; exit $(cat ${code})`], Interval: "1s", Timeout: "5s",
    });
    expect([res.status, await res.text()]).toEqual([200, ""]);
    expect(await poll(check("script"), (c) => c?.Status === "passing", 15_000, "a passing script check")).toMatchObject({ Output: "exit 0\n" });
    writeFileSync(code, "1");
    expect(await poll(check("script"), (c) => c?.Status === "warning", 15_000, "a warning script check")).toMatchObject({ Output: "exit 1\n" });
    writeFileSync(code, "2");
    expect(await poll(check("script"), (c) => c?.Status === "critical", 15_000, "a critical script check")).toMatchObject({ Output: "exit 2\n" });
  }, 60_000);

  test("a script check that outlives its timeout is killed and critical", async () => {
    expect((await put("/v1/agent/check/register", { Name: "slow", Args: ["sleep", "30"], Interval: "1s", Timeout: "1s" })).status).toBe(200);
    const c = await poll(check("slow"), (x) => x?.Output?.startsWith("Timed out") ?? false, 15_000, "a timed-out script check");
    expect(c).toMatchObject({ Status: "critical", Output: "Timed out (1s) running check" });
    expect((await fetch(`${agent!.httpUrl}/v1/agent/check/deregister/slow`, { method: "PUT" })).status).toBe(200);
  }, 60_000);

  test("a gRPC check passes while the server answers SERVING and fails otherwise, and when it is gone", async () => {
    const target = `127.0.0.1:${grpcPort}/my.Service`;
    expect((await put("/v1/agent/check/register", { Name: "grpc", GRPC: target, Interval: "1s" })).status).toBe(200);
    expect(await poll(check("grpc"), (c) => c?.Status === "passing", 15_000, "a passing gRPC check")).toMatchObject({ Output: `gRPC check ${target}: success` });
    serving = 2;
    expect(await poll(check("grpc"), (c) => c?.Status === "critical", 15_000, "a critical gRPC check"))
      .toMatchObject({ Output: "gRPC application didn't report service healthy" });
    health.forceShutdown();
    const gone = await poll(check("grpc"), (c) => c?.Output?.startsWith("rpc error: code = Unavailable") ?? false, 15_000, "an unreachable gRPC server");
    expect(gone.Output).toContain(`dial tcp 127.0.0.1:${grpcPort}: connect: connection refused`);
  }, 60_000);

  test.skipIf(existsSync("/var/run/docker.sock") || !!process.env.DOCKER_HOST)("a Docker check is refused where there is no Docker socket", async () => {
    const res = await put("/v1/agent/check/register", { Name: "d", DockerContainerID: "abc", Args: ["true"], Interval: "10s" });
    expect(res.status).toBe(400);
    expect(await res.text()).toStartWith("Docker checks cannot run on this agent: there is no Docker socket at ");
  });
});
