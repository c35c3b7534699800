import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import type { HealthStatus } from "../model/index.ts";
import { seededRng } from "../platform/index.ts";
import { run } from "./agent_test_kit.test.ts";
import type { DockerEngine, DockerResponse, ProcessOutcome, ProcessSpec } from "./ports.ts";
import { capturedOutput, dockerExecClient, startDockerCheck, startScriptCheck } from "./runners_exec.ts";

/** A fake process: the test decides when (and how) it ends; kill() ends it by signal. */
function fakeProcesses(now: () => number) {
  const started: { spec: ProcessSpec; at: number; killed: number; end: (o: ProcessOutcome) => void; fail: (e: Error) => void }[] = [];
  const spawn = (spec: ProcessSpec) => {
    let end!: (o: ProcessOutcome) => void, fail!: (e: Error) => void;
    const done = new Promise<ProcessOutcome>((res, rej) => ((end = res), (fail = rej)));
    const p = { spec, at: now(), killed: 0, end, fail };
    started.push(p);
    return { done, kill: () => void (p.killed++, end({ code: null, output: "partial", totalBytes: 7 })) };
  };
  return { started, spawn };
}

function scriptHarness(opts: { timeoutMs?: number; outputMaxSize?: number } = {}) {
  const clock = simClock();
  const procs = fakeProcesses(() => clock.monotonic());
  const updates: { at: number; status: HealthStatus; output: string }[] = [];
  const runner = startScriptCheck({
    checkId: "s", intervalMs: 10_000, timeoutMs: opts.timeoutMs ?? 0, clock, rng: seededRng(3),
    notify: (_id, status, output) => void updates.push({ at: clock.monotonic(), status, output }),
    successBeforePassing: 0, failuresBeforeCritical: 0,
    spawn: procs.spawn, args: ["/usr/local/bin/check_mem", "-w", "90"], outputMaxSize: opts.outputMaxSize ?? 4096,
  });
  return { clock, procs, updates, runner };
}

describe("script check", () => {
  test("exit 0 is passing, 1 warning, anything else (or a signal) critical, with the output", async () => {
    const h = scriptHarness();
    const outcomes: [number | null, HealthStatus][] = [[0, "passing"], [1, "warning"], [2, "critical"], [127, "critical"], [null, "critical"]];
    for (const [i, [code]] of outcomes.entries()) {
      await run(h.clock, 10_000);
      expect(h.procs.started.length).toBe(i + 1);
      expect(h.procs.started[i]!.spec).toEqual({ args: ["/usr/local/bin/check_mem", "-w", "90"], maxOutputBytes: 4096 });
      h.procs.started[i]!.end({ code, output: `out ${code}`, totalBytes: `out ${code}`.length });
    }
    await run(h.clock, 1);
    expect(h.updates.map((u) => [u.status, u.output])).toEqual(outcomes.map(([code, s]) => [s, `out ${code}`]));
    h.runner.stop();
  });

  test("output past the limit keeps its tail with Consul's 'Captured' note", async () => {
    const h = scriptHarness({ outputMaxSize: 8 });
    await run(h.clock, 10_000);
    expect(h.procs.started[0]!.spec.maxOutputBytes).toBe(8);
    h.procs.started[0]!.end({ code: 0, output: "12345678", totalBytes: 20 });
    await run(h.clock, 1);
    expect(h.updates[0]!.output).toBe("Captured 8 of 20 bytes\n...\n12345678");
    expect(capturedOutput("abc", 3, 3)).toBe("abc");
    h.runner.stop();
  });

  test("a run past the timeout (default 30 s) is killed and critical; the next run waits for the exit", async () => {
    const h = scriptHarness();
    await run(h.clock, 10_000);
    const first = h.procs.started[0]!;
    const startedAt = first.at;
    await run(h.clock, startedAt + 29_999 - h.clock.monotonic());
    expect([first.killed, h.updates.length]).toEqual([0, 0]);
    await run(h.clock, 1);
    expect(first.killed).toBe(1);
    expect(h.updates).toEqual([{ at: startedAt + 30_000, status: "critical", output: "Timed out (30s) running check\n\npartial" }]);
    await run(h.clock, 10_000);
    expect(h.procs.started.length).toBe(2);
    expect(h.procs.started[1]!.at).toBe(startedAt + 40_000);
    h.runner.stop();
    expect(h.procs.started[1]!.killed).toBe(1);
  });

  test("a given timeout is used and named in Go's duration format", async () => {
    const h = scriptHarness({ timeoutMs: 1_500 });
    await run(h.clock, 10_000 + 1_500);
    expect(h.updates[0]!.output).toStartWith("Timed out (1.5s) running check");
    h.runner.stop();
  });

  test("a command that cannot start is critical with the spawner's message", async () => {
    const h = scriptHarness();
    await run(h.clock, 10_000);
    h.procs.started[0]!.fail(new Error('exec: "check_mem": executable file not found in $PATH'));
    await run(h.clock, 1);
    expect(h.updates).toMatchObject([{ status: "critical", output: 'exec: "check_mem": executable file not found in $PATH' }]);
    h.runner.stop();
  });

  test("nothing is reported after stop", async () => {
    const h = scriptHarness();
    await run(h.clock, 10_000);
    h.runner.stop();
    await run(h.clock, 60_000);
    expect(h.updates).toEqual([]);
    expect(h.procs.started.length).toBe(1);
  });
});

/** A Docker Engine that answers from a table of `METHOD path` -> response (or error). */
function fakeDocker(table: Record<string, DockerResponse | Error>) {
  const calls: { method: string; path: string; body: unknown; maxBytes: number }[] = [];
  const docker: DockerEngine = {
    unavailable: () => undefined,
    async call(method, path, body, maxBytes) {
      calls.push({ method, path, body, maxBytes });
      const r = table[`${method} ${path}`];
      if (r === undefined) return { status: 500, body: "no route", totalBytes: 8 };
      if (r instanceof Error) throw r;
      return r;
    },
  };
  return { docker, calls };
}

const ok = (status: number, body: string): DockerResponse => ({ status, body, totalBytes: body.length });

describe("Docker check", () => {
  const happy = (exitCode: number) => ({
    "POST /containers/web%201/exec": ok(201, '{"Id":"e1"}'),
    "POST /exec/e1/start": ok(200, "disk ok\n"),
    "GET /exec/e1/json": ok(200, `{"ExitCode":${exitCode},"Running":false}`),
  });

  for (const [code, status] of [[0, "passing"], [1, "warning"], [3, "critical"]] as const) {
    test(`exec exit code ${code} is ${status}; the calls are Consul's create/start/inspect`, async () => {
      const clock = simClock();
      const { docker, calls } = fakeDocker(happy(code));
      const updates: [HealthStatus, string][] = [];
      const runner = startDockerCheck({
        checkId: "d", intervalMs: 5_000, timeoutMs: 0, clock, rng: seededRng(1), notify: (_id, s, o) => void updates.push([s, o]),
        successBeforePassing: 0, failuresBeforeCritical: 0, docker, containerId: "web 1", args: ["/bin/check", "disk"], outputMaxSize: 4096,
      });
      await run(clock, 5_000);
      runner.stop();
      expect(updates).toEqual([[status, "disk ok\n"]]);
      expect(calls).toEqual([
        { method: "POST", path: "/containers/web%201/exec", maxBytes: 4096,
          body: { AttachStdin: false, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ["/bin/check", "disk"] } },
        { method: "POST", path: "/exec/e1/start", maxBytes: 4096, body: { Detach: false, Tty: true } },
        { method: "GET", path: "/exec/e1/json", maxBytes: 4096, body: undefined },
      ]);
    });
  }

  test("Consul's DockerClient errors, word for word", async () => {
    const errorOf = (p: Promise<unknown>) => p.then(() => "no error", (e: Error) => e.message);
    const c = (table: Record<string, DockerResponse | Error>) => dockerExecClient(fakeDocker(table).docker, 4096);
    expect(await errorOf(c({ "POST /containers/x/exec": ok(404, "") }).createExec("x", ["a"]))).toBe("create exec failed for unknown container x");
    expect(await errorOf(c({ "POST /containers/x/exec": ok(409, "") }).createExec("x", ["a"]))).toBe("create exec failed since container x is paused or stopped");
    expect(await errorOf(c({ "POST /containers/x/exec": ok(500, "boom") }).createExec("x", ["a"]))).toBe("create exec failed for container x with status 500: boom");
    expect(await errorOf(c({ "POST /containers/x/exec": new Error("dial unix /s: connect: no such file or directory") }).createExec("x", ["a"])))
      .toBe("create exec failed for container x: dial unix /s: connect: no such file or directory");
    expect(await errorOf(c({ "POST /containers/x/exec": ok(201, "{") }).createExec("x", ["a"]))).toStartWith("create exec response for container x cannot be parsed: ");
    expect(await errorOf(c({ "POST /exec/e/start": ok(404, "") }).startExec("x", "e"))).toBe("start exec failed for container x: invalid exec id e");
    expect(await errorOf(c({ "POST /exec/e/start": ok(409, "") }).startExec("x", "e"))).toBe("start exec failed since container x is paused or stopped");
    expect(await errorOf(c({ "GET /exec/e/json": ok(404, "") }).inspectExec("x", "e"))).toBe("inspect exec failed for container x: invalid exec id e");
    expect(await errorOf(c({ "GET /exec/e/json": ok(503, "busy") }).inspectExec("x", "e"))).toBe("inspect exec failed for container x with status 503: busy");
  });

  test("a failing call makes the check critical with its message", async () => {
    const clock = simClock();
    const { docker } = fakeDocker({ "POST /containers/gone/exec": ok(404, "") });
    const updates: [HealthStatus, string][] = [];
    const runner = startDockerCheck({
      checkId: "d", intervalMs: 5_000, timeoutMs: 0, clock, rng: seededRng(1), notify: (_id, s, o) => void updates.push([s, o]),
      successBeforePassing: 0, failuresBeforeCritical: 0, docker, containerId: "gone", args: ["true"], outputMaxSize: 4096,
    });
    await run(clock, 5_000);
    runner.stop();
    expect(updates).toEqual([["critical", "create exec failed for unknown container gone"]]);
  });
});
