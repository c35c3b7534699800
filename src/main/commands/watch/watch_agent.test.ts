/**
 * `causeway watch` as a process against a real `causeway agent -dev`: the handler runs for the key's
 * first (absent) value and again after a PUT, with the Go API's JSON on stdin and the index in
 * CONSUL_INDEX; SIGTERM ends the watch with exit 0.
 */
import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../../../../test/harness/agent_process.ts";
import { CLI } from "../../../../test/harness/server_cluster.ts";

/** `causeway watch <args>` as a process. */
function startWatchProcess(args: readonly string[]) {
  const child = spawn(process.execPath, [CLI, "watch", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/**
 * Runs `fn` with a fresh `causeway agent -dev` (its HTTP URL), a temporary directory and a way to start
 * watch processes; every watch process, the agent and the directory are removed afterwards, also on failure.
 */
async function withAgent(fn: (url: string, dir: string, watch: (args: readonly string[]) => WatchProcess) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "causeway-watch-e2e-"));
  const watches: WatchProcess[] = [];
  let agent: AgentProcess | undefined;
  try {
    agent = await startAgentProcess(process.execPath, [
      CLI, "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
    ]);
    await fn(agent.httpUrl, dir, (args) => {
      const w = startWatchProcess(args);
      watches.push(w);
      return w;
    });
  } finally {
    for (const w of watches) {
      if (w.child.exitCode === null && w.child.signalCode === null) {
        w.child.kill("SIGKILL");
        await w.exited;
      }
    }
    await agent?.stop("SIGKILL").catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

type WatchProcess = ReturnType<typeof startWatchProcess>;
const readIfThere = (path: string) => async () => (existsSync(path) ? readFileSync(path, "utf8") : "");

describe("causeway watch against a real agent", () => {
  test("-type key runs the handler for the absent key, then for a PUT; SIGTERM exits 0", () =>
    withAgent(async (url, dir, startWatch) => {
      await poll(() => fetch(`${url}/v1/status/leader`).then((r) => r.text()), (t) => t !== '""', 10_000, "a leader");
      const out = join(dir, "handler.out");
      const watch = startWatch([`-http-addr=${url}`, "-type=key", "-key=watched/k", `cat >> ${out}; echo " index=$CONSUL_INDEX" >> ${out}`]);
      const read = readIfThere(out);
      await poll(read, (t) => t.includes("index="), 20_000, `the first handler run (watch output: ${watch.output()})`);
      expect(readFileSync(out, "utf8")).toMatch(/^null\n index=\d+\n$/);
      expect(await (await fetch(`${url}/v1/kv/watched/k`, { method: "PUT", body: "hello" })).text()).toBe("true");
      const runs = (await poll(read, (t) => t.split("index=").length === 3, 20_000, "the handler run after the PUT")).split("\n").filter((l) => l !== "");
      const pair = JSON.parse(runs[2]!);
      expect(pair).toMatchObject({ Key: "watched/k", LockIndex: 0, Flags: 0, Value: Buffer.from("hello").toString("base64"), Session: "" });
      expect(Object.keys(pair)).toEqual(["Key", "CreateIndex", "ModifyIndex", "LockIndex", "Flags", "Value", "Session"]);
      expect(runs[3]).toBe(` index=${pair.ModifyIndex}`);
      watch.child.kill("SIGTERM");
      expect(await watch.exited).toBe(0);
      expect(watch.output()).toBe("");
    }), 60_000);

  test("-type event hands the handler each new event once: the list's index names the last one it saw", () =>
    withAgent(async (url, dir, startWatch) => {
      const out = join(dir, "handler.out");
      const watch = startWatch([`-http-addr=${url}`, "-type=event", "-name=deploy", `tr -d '\\n' >> ${out}; echo >> ${out}`]);
      const read = readIfThere(out);
      const runs = async () => (await read()).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { Payload: string }[]);
      await poll(runs, (r) => r.length === 1, 20_000, `the first handler run (watch output: ${watch.output()})`);
      // Event IDs are random, so the list's index (a hash of the newest ID) goes down as often as up.
      for (const payload of ["v1", "v2", "v3"]) {
        expect((await fetch(`${url}/v1/event/fire/deploy`, { method: "PUT", body: payload })).status).toBe(200);
        await poll(runs, (r) => r.at(-1)?.some((e) => atob(e.Payload) === payload) ?? false, 20_000, `the handler run for ${payload}`);
      }
      expect((await runs()).map((events) => events.map((e) => atob(e.Payload)))).toEqual([[], ["v1"], ["v2"], ["v3"]]);
      watch.child.kill("SIGTERM");
      expect(await watch.exited).toBe(0);
    }), 60_000);
});
