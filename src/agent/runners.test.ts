import { describe, expect, test } from "bun:test";
import { simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { seededRng } from "../platform/index.ts";
import type { HealthStatus } from "../model/index.ts";
import type { HttpProbeRequest, HttpProbeResponse } from "./ports.ts";
import { startHttpCheck, startTcpCheck, startTtlCheck } from "./runners.ts";

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Advances simulated time timer by timer, letting promise callbacks run between timers as real time would. */
async function run(clock: SimClock, ms: number): Promise<void> {
  const end = clock.monotonic() + ms;
  for (;;) {
    await flush();
    const next = clock.nextAt();
    if (next === undefined || next > end) break;
    clock.advance(next - clock.monotonic());
  }
  clock.advance(end - clock.monotonic());
  await flush();
}

function recorder() {
  const updates: { at: number; status: HealthStatus; output: string }[] = [];
  return { updates, notify: (_id: string, status: HealthStatus, output: string) => void updates.push({ at: -1, status, output }) };
}

describe("TTL check", () => {
  test("goes critical when not updated within the TTL, and each update restarts the TTL", () => {
    const clock = simClock();
    const r = recorder();
    const ttl = startTtlCheck({ checkId: "c", ttlMs: 10_000, clock, notify: r.notify, outputMaxSize: 4096 });
    clock.advance(9_999);
    expect(r.updates).toEqual([]);
    clock.advance(1);
    expect(r.updates.map((u) => [u.status, u.output])).toEqual([["critical", "TTL expired"]]);
    ttl.setStatus("passing", "all good");
    clock.advance(9_000);
    ttl.setStatus("warning", "hmm");
    clock.advance(9_000);
    expect(r.updates.map((u) => u.status)).toEqual(["critical", "passing", "warning"]);
    clock.advance(1_000);
    expect(r.updates.at(-1)).toMatchObject({ status: "critical", output: "TTL expired (last output before timeout follows): hmm" });
    ttl.stop();
    ttl.setStatus("passing", "after stop");
    clock.advance(60_000);
    expect(r.updates.length).toBe(4);
  });

  test("truncates output above the buffer size like Consul", () => {
    const clock = simClock();
    const r = recorder();
    const ttl = startTtlCheck({ checkId: "c", ttlMs: 1000, clock, notify: r.notify, outputMaxSize: 4096 });
    const stored = ttl.setStatus("passing", "x".repeat(5000));
    expect(stored).toBe(`${"x".repeat(4096)} ... (captured 4096 of 5000 bytes)`);
    expect(r.updates[0]!.output).toBe(stored);
    ttl.stop();
  });
});

function httpHarness(opts: { interval?: number; timeout?: number; seed?: number; method?: string; header?: Record<string, string[]> } = {}) {
  const clock = simClock();
  const rng = seededRng(opts.seed ?? 7);
  const calls: { at: number; req: HttpProbeRequest }[] = [];
  let respond: (req: HttpProbeRequest) => Promise<HttpProbeResponse> = async () => ({ status: 200, statusText: "OK", body: "ok" });
  const updates: { at: number; status: HealthStatus; output: string }[] = [];
  const runner = startHttpCheck({
    checkId: "web", intervalMs: opts.interval ?? 10_000, timeoutMs: opts.timeout ?? 0, clock, rng,
    notify: (_id, status, output) => void updates.push({ at: clock.monotonic(), status, output }),
    successBeforePassing: 0, failuresBeforeCritical: 0,
    probe: (req) => {
      calls.push({ at: clock.monotonic(), req });
      return respond(req);
    },
    url: "http://127.0.0.1:8080/health", method: opts.method ?? "", header: opts.header, body: "", tlsSkipVerify: false, outputMaxSize: 4096,
  });
  return { clock, calls, updates, runner, setResponse: (f: typeof respond) => void (respond = f) };
}

describe("HTTP check", () => {
  test("first run after Consul's random stagger in [0, interval), then every interval after a run completes", async () => {
    const h = httpHarness({ interval: 10_000, seed: 42 });
    const stagger = seededRng(42).next() * 10_000;
    expect(h.clock.nextAt()).toBe(stagger);
    await run(h.clock, Math.ceil(stagger));
    expect(h.calls.length).toBe(1);
    expect(h.calls[0]!.at).toBe(stagger);
    await run(h.clock, 10_000);
    expect(h.calls.map((c) => c.at)).toEqual([stagger, stagger + 10_000]);
    h.runner.stop();
    h.clock.advance(100_000);
    expect(h.calls.length).toBe(2);
  });

  test("different seeds stagger differently", () => {
    expect(httpHarness({ seed: 1 }).clock.nextAt()).not.toBe(httpHarness({ seed: 2 }).clock.nextAt());
  });

  test("sends GET with Consul's User-Agent and Accept by default; keeps caller headers", async () => {
    const h = httpHarness({ header: { Accept: ["application/json"] } });
    await run(h.clock, 10_000);
    expect(h.calls[0]!.req).toMatchObject({
      method: "GET", timeoutMs: 10_000, maxBodyBytes: 4096,
      headers: { Accept: ["application/json"], "User-Agent": ["Consul Health Check"] },
    });
  });

  const statuses: [number, string, HealthStatus][] = [
    [200, "OK", "passing"], [204, "No Content", "passing"], [299, "", "passing"], [429, "Too Many Requests", "warning"],
    [300, "Multiple Choices", "critical"], [404, "Not Found", "critical"], [500, "Internal Server Error", "critical"], [503, "Service Unavailable", "critical"],
  ];
  for (const [code, text, want] of statuses) {
    test(`status ${code} is ${want}`, async () => {
      const h = httpHarness({ method: "POST" });
      h.setResponse(async () => ({ status: code, statusText: text, body: "body" }));
      await run(h.clock, 10_000);
      expect(h.updates.map((u) => [u.status, u.output])).toEqual([
        [want, `HTTP POST http://127.0.0.1:8080/health: ${`${code} ${text}`.trimEnd()} Output: body`],
      ]);
    });
  }

  test("keeps only the last 4 KiB of the body", async () => {
    const h = httpHarness();
    h.setResponse(async () => ({ status: 200, statusText: "OK", body: "a".repeat(1000) + "b".repeat(4096) }));
    await run(h.clock, 10_000);
    expect(h.updates[0]!.output).toBe(`HTTP GET http://127.0.0.1:8080/health: 200 OK Output: ${"b".repeat(4096)}`);
  });

  test("a failed request is critical with Go's error text", async () => {
    const h = httpHarness();
    h.setResponse(async () => {
      throw new Error("dial tcp 127.0.0.1:8080: connect: connection refused");
    });
    await run(h.clock, 10_000);
    expect(h.updates[0]).toMatchObject({
      status: "critical",
      output: `Get "http://127.0.0.1:8080/health": dial tcp 127.0.0.1:8080: connect: connection refused`,
    });
  });

  test("a request that outlives the timeout is critical at the deadline; the late answer is ignored", async () => {
    const h = httpHarness({ timeout: 2_000 });
    let late: (r: HttpProbeResponse) => void = () => {};
    h.setResponse(() => new Promise((resolve) => (late = resolve)));
    await run(h.clock, h.clock.nextAt()!);
    const started = h.calls[0]!.at;
    expect(h.calls[0]!.req.timeoutMs).toBe(2_000);
    await run(h.clock, 1_999);
    expect(h.updates).toEqual([]);
    await run(h.clock, 1);
    expect(h.updates).toEqual([{
      at: started + 2_000, status: "critical",
      output: `Get "http://127.0.0.1:8080/health": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    }]);
    late({ status: 200, statusText: "OK", body: "" });
    await flush();
    expect(h.updates.length).toBe(1);
    // The next run is an interval after the timed-out one finished.
    expect(h.clock.nextAt()).toBe(started + 2_000 + 10_000);
  });

  test("the default timeout is 10 s", async () => {
    const h = httpHarness({ interval: 60_000 });
    h.setResponse(() => new Promise(() => {}));
    await run(h.clock, h.clock.nextAt()!);
    const started = h.calls[0]!.at;
    await run(h.clock, 10_000);
    expect(h.updates.map((u) => u.at)).toEqual([started + 10_000]);
  });
});

describe("TCP check", () => {
  function tcpHarness(probe: (addr: string, timeoutMs: number) => Promise<void>, thresholds = { successBeforePassing: 0, failuresBeforeCritical: 0 }) {
    const clock = simClock();
    const updates: [HealthStatus, string][] = [];
    const runner = startTcpCheck({
      checkId: "db", intervalMs: 5_000, timeoutMs: 1_000, clock, rng: seededRng(3),
      notify: (_id, s, o) => void updates.push([s, o]), ...thresholds, probe, addr: "127.0.0.1:5432",
    });
    return { clock, updates, runner };
  }

  test("passing on connect, critical with the dial error otherwise", async () => {
    let fail = false;
    const h = tcpHarness(async () => {
      if (fail) throw new Error("dial tcp 127.0.0.1:5432: connect: connection refused");
    });
    await run(h.clock, 5_000);
    fail = true;
    await run(h.clock, 5_000);
    expect(h.updates).toEqual([
      ["passing", "TCP connect 127.0.0.1:5432: Success"],
      ["critical", "dial tcp 127.0.0.1:5432: connect: connection refused"],
    ]);
    h.runner.stop();
  });

  test("a connect that hangs past the timeout is an i/o timeout", async () => {
    const h = tcpHarness(() => new Promise(() => {}));
    await run(h.clock, 5_000);
    await run(h.clock, 1_000);
    expect(h.updates).toEqual([["critical", "dial tcp 127.0.0.1:5432: i/o timeout"]]);
    h.runner.stop();
  });

  test("SuccessBeforePassing and FailuresBeforeCritical hold back flaps", async () => {
    const results = [true, true, false, false, false, true, true];
    const h = tcpHarness(async () => {
      if (!results.shift()) throw new Error("refused");
    }, { successBeforePassing: 2, failuresBeforeCritical: 3 });
    for (let i = 0; i < 7; i++) {
      await run(h.clock, 5_000);
    }
    expect(h.updates.map(([s]) => s)).toEqual(["passing", "critical", "passing"]);
    h.runner.stop();
  });
});
