import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import type { HealthStatus } from "../model/index.ts";
import { seededRng } from "../platform/index.ts";
import { run } from "./agent_test_kit.test.ts";
import type { GrpcHealthRequest } from "./ports.ts";
import { GRPC_UNHEALTHY, parseGrpcTarget, startGrpcCheck } from "./runners_grpc.ts";

function grpcHarness(target: string, answer: (req: GrpcHealthRequest) => Promise<number>, opts: { timeoutMs?: number; useTls?: boolean } = {}) {
  const clock = simClock();
  const calls: GrpcHealthRequest[] = [];
  const updates: [HealthStatus, string][] = [];
  const runner = startGrpcCheck({
    checkId: "g", intervalMs: 10_000, timeoutMs: opts.timeoutMs ?? 0, clock, rng: seededRng(5),
    notify: (_id, s, o) => void updates.push([s, o]), successBeforePassing: 0, failuresBeforeCritical: 0,
    probe: (req) => (calls.push(req), answer(req)), target, useTls: opts.useTls ?? false, tlsSkipVerify: true,
  });
  return { clock, calls, updates, runner };
}

describe("gRPC check", () => {
  test("splits host:port/service at the first slash", () => {
    expect(parseGrpcTarget("127.0.0.1:9000")).toEqual({ server: "127.0.0.1:9000", service: "" });
    expect(parseGrpcTarget("h:1/pkg.Svc/x")).toEqual({ server: "h:1", service: "pkg.Svc/x" });
  });

  test("SERVING is passing with Consul's output; the probe gets server, service, TLS and the 10 s default timeout", async () => {
    const h = grpcHarness("127.0.0.1:9000/pkg.Svc", async () => 1, { useTls: true });
    await run(h.clock, 10_000);
    h.runner.stop();
    expect(h.updates).toEqual([["passing", "gRPC check 127.0.0.1:9000/pkg.Svc: success"]]);
    expect(h.calls).toEqual([{ target: "127.0.0.1:9000", service: "pkg.Svc", useTls: true, tlsSkipVerify: true, timeoutMs: 10_000 }]);
  });

  for (const status of [0, 2, 3]) {
    test(`status ${status} is critical with Consul 1.8's ErrGRPCUnhealthy`, async () => {
      const h = grpcHarness("h:1", async () => status);
      await run(h.clock, 10_000);
      h.runner.stop();
      expect(h.updates).toEqual([["critical", GRPC_UNHEALTHY]]);
    });
  }

  test("a probe error is critical with its text; a probe that outlives the timeout is DeadlineExceeded", async () => {
    const refused = 'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing dial tcp h:1: connect: connection refused"';
    const h = grpcHarness("h:1", async () => {
      throw new Error(refused);
    });
    await run(h.clock, 10_000);
    h.runner.stop();
    expect(h.updates).toEqual([["critical", refused]]);
    const slow = grpcHarness("h:1", () => new Promise(() => {}), { timeoutMs: 2_000 });
    await run(slow.clock, 12_000);
    slow.runner.stop();
    expect(slow.calls[0]!.timeoutMs).toBe(2_000);
    expect(slow.updates).toEqual([["critical", "rpc error: code = DeadlineExceeded desc = context deadline exceeded"]]);
  });
});
