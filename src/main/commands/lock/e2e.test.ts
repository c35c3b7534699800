/**
 * `causeway lock` end to end: real lock processes (each its own runtime) with real `sh -c` children
 * against a real `causeway agent -dev`. Children append start/end markers to a file; the order of
 * the markers shows whether holders overlapped. Every process started here is killed by pid in a
 * finally block.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agentCall, poll, startAgentProcess, type AgentProcess } from "../../../../test/harness/agent_process.ts";

const CLI = fileURLToPath(new URL("../../cli.ts", import.meta.url));
const work = mkdtempSync(join(tmpdir(), "causeway-lock-"));
let agent: AgentProcess | undefined;

beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [CLI, "agent", "-dev", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"]);
  await poll(() => agentCall(agent!.httpUrl, "PUT", "/v1/kv/ready", undefined, "1").then((r) => r.json), (ok) => ok === true, 20_000, "the agent accepting writes");
}, 60_000);

afterAll(async () => {
  if (agent) await agent.stop("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

interface LockRun {
  readonly proc: ChildProcess;
  readonly done: Promise<{ code: number | null; out: string; err: string }>;
}

/** Starts `causeway lock <argv>` as a process of its own against the agent. */
function lock(argv: string[], running: ChildProcess[]): LockRun {
  const proc = spawn(process.execPath, [CLI, "lock", ...argv], { env: { ...process.env, CONSUL_HTTP_ADDR: agent!.httpUrl }, stdio: ["ignore", "pipe", "pipe"] });
  running.push(proc);
  let out = "", err = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  return { proc, done: new Promise((resolve) => proc.once("close", (code) => resolve({ code, out, err }))) };
}

/** Runs `body` with a list for the lock processes it starts; kills those still running (by pid) afterwards. */
async function withRunning(body: (running: ChildProcess[]) => Promise<void>): Promise<void> {
  const running: ChildProcess[] = [];
  try {
    await body(running);
  } finally {
    for (const p of running) {
      if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) continue;
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
}

/** The marker lines, and the most holders that were inside at once. */
function markers(file: string): { lines: string[]; most: number } {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  let inside = 0, most = 0;
  for (const line of lines) {
    inside += line.startsWith("start ") ? 1 : -1;
    most = Math.max(most, inside);
  }
  return { lines, most };
}

/** The session holding `key`, once one does. */
async function holderOf(key: string): Promise<string> {
  const entries = await poll(() => agentCall(agent!.httpUrl, "GET", `/v1/kv/${key}`).then((r) => r.json as Array<{ Session?: string }> | undefined), (e) => !!e?.[0]?.Session, 20_000, `${key} held`);
  return entries![0]!.Session!;
}

test("-n 1: three contenders on one prefix never overlap, and all get their turn", async () => {
  const file = join(work, "mutex.log");
  await withRunning(async (running) => {
    const runs = ["a", "b", "c"].map((id) => lock(["e2e/mutex", `echo start ${id} >> ${file}; sleep 0.3; echo end ${id} >> ${file}`], running));
    const results = await Promise.all(runs.map((r) => r.done));
    expect(results.map((r) => [r.code, r.err])).toEqual([[0, ""], [0, ""], [0, ""]]);
    const { lines, most } = markers(file);
    expect(most).toBe(1);
    expect(lines.length).toBe(6);
    for (let i = 0; i < 6; i += 2) expect(lines[i + 1]).toBe(lines[i]!.replace("start", "end"));
    expect(lines.filter((l) => l.startsWith("start")).sort()).toEqual(["start a", "start b", "start c"]);
    expect((await agentCall(agent!.httpUrl, "GET", "/v1/kv/e2e/mutex/.lock")).status).toBe(404);
  });
}, 60_000);

test("-n 2: two holders at once, never three", async () => {
  const file = join(work, "semaphore.log");
  // Until a first holder has left, each child waits (up to 3 s) for two holders inside, so that two at
  // once is observed, not hoped for.
  const child = (id: string) =>
    `echo start ${id} >> ${file}; i=0; while [ $i -lt 60 ]; do e=$(grep -c end ${file}); n=$(( $(grep -c start ${file}) - e )); ` +
    `[ $n -ge 2 ] || [ $e -gt 0 ] && break; sleep 0.05; i=$((i+1)); done; sleep 0.2; echo end ${id} >> ${file}`;
  await withRunning(async (running) => {
    const runs = ["a", "b", "c"].map((id) => lock(["-n=2", "e2e/semaphore", child(id)], running));
    const results = await Promise.all(runs.map((r) => r.done));
    expect(results.map((r) => [r.code, r.err])).toEqual([[0, ""], [0, ""], [0, ""]]);
    const { lines, most } = markers(file);
    expect(lines.length).toBe(6);
    expect(most).toBe(2);
    expect((await agentCall(agent!.httpUrl, "GET", "/v1/kv/e2e/semaphore?recurse")).status).toBe(404);
  });
}, 60_000);

test("a lost lock (its session destroyed) terminates the child; exit 0 as in Consul", async () => {
  await withRunning(async (running) => {
    const run = lock(["-verbose", "e2e/lost", "exec sleep 30"], running);
    const session = await holderOf("e2e/lost/.lock");
    expect((await agentCall(agent!.httpUrl, "PUT", `/v1/session/destroy/${session}`)).status).toBe(200);
    const r = await run.done;
    expect(r.code).toBe(0);
    expect(r.out).toContain("Lock lost, killing child\nTerminating child pid ");
    expect(r.err).toBe("Error running handler: signal: terminated\n");
  });
}, 60_000);

test("SIGTERM while the child runs: the child is stopped, the lock released and its key and session removed", async () => {
  await withRunning(async (running) => {
    const run = lock(["-verbose", "-name=e2e-term", "e2e/term", "exec sleep 30"], running);
    await holderOf("e2e/term/.lock");
    run.proc.kill("SIGTERM");
    const r = await run.done;
    expect(r.code).toBe(0);
    expect(r.out).toContain("Shutdown triggered, killing child\n");
    expect(r.out).toEndWith("Cleanup succeeded\n");
    expect((await agentCall(agent!.httpUrl, "GET", "/v1/kv/e2e/term/.lock")).status).toBe(404);
    const sessions = (await agentCall(agent!.httpUrl, "GET", "/v1/session/list")).json as Array<{ Name: string }>;
    expect(sessions.filter((s) => s.Name === "e2e-term")).toEqual([]);
  });
}, 60_000);
