/**
 * Single servers for the scale benchmark, each a real process on 127.0.0.1 with its data dir on the
 * normal disk (fsync on): a Causeway server (`causeway agent -server -bootstrap-expect 1`, from source,
 * with the flags test/bench/kv_clusters.ts gives its servers) that can be SIGKILLed and started again on
 * the same data dir and ports, and an etcd member (Debian's etcd-server, default settings).
 *
 * Every process and directory is registered as soon as it exists; killAllSync() SIGKILLs the processes
 * by PID and removes the directories (for exit hooks and signal handlers).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Buffer } from "node:buffer";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, poll } from "../harness/agent_process.ts";

const live = new Set<ChildProcess>();
const dirs = new Set<string>();

/** SIGKILLs every process started here (by PID) and removes every directory made here. */
export function killAllSync(): void {
  for (const c of live) if (c.exitCode === null && c.signalCode === null && c.pid !== undefined) process.kill(c.pid, "SIGKILL");
  live.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

/** Registers `c` for killAllSync(). */
export function track(c: ChildProcess): void {
  live.add(c);
  c.once("exit", () => live.delete(c));
}

/** A new temp directory under `root`, removed by killAllSync() or removeDir(). */
export function tempDir(root: string, prefix: string): string {
  const d = mkdtempSync(join(root, prefix));
  dirs.add(d);
  return d;
}

/** Removes a directory made by tempDir(). */
export function removeDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

/** SIGKILLs `c` by PID and resolves once it is gone. */
export function killAndWait(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null || c.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    c.once("exit", () => resolve());
    process.kill(c.pid!, "SIGKILL");
  });
}

/** A tracked child process, the tail of what it prints, and a promise that rejects when it exits. */
function spawnServer(name: string, cmd: string, args: readonly string[]): { child: ChildProcess; output(): string; exited: Promise<never> } {
  const child = spawn(cmd, [...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  track(child);
  let out = "";
  const append = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  const exited = new Promise<never>((_, reject) => child.once("exit", (code, signal) => reject(new Error(`${name} exited (${signal ?? `code ${code}`}) while starting`))));
  exited.catch(() => {}); // also rejects at the final kill
  return { child, output: () => out, exited };
}

/** Waits for `steps` in order unless the process exits first; on failure kills it and rejects with its output. */
async function whileAlive(p: ReturnType<typeof spawnServer>, steps: readonly (() => Promise<unknown>)[]): Promise<void> {
  try {
    for (const step of steps) await Promise.race([p.exited, step()]);
  } catch (e) {
    await killAndWait(p.child);
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${p.output().slice(-2000)}`);
  }
}

/** A single server process. */
export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  /** What the process printed, the last part. */
  output(): string;
}

/** Status probes must not hang a poll loop. */
const PROBE_MS = 3000;
const probe = (init: RequestInit = {}): RequestInit => ({ ...init, signal: AbortSignal.timeout(PROBE_MS) });

// ---------------------------------------------------------------------------------------------------
// Causeway

const cli = fileURLToPath(new URL("../../src/main/cli.ts", import.meta.url));

/** A Causeway server that keeps its data dir and ports across restarts. */
export interface CausewayServer {
  /** The running process (undefined while stopped). */
  current(): ServerProcess | undefined;
  /**
   * Starts the process and waits for its banner, then for a leader. `onSpawn` runs right after the
   * spawn (for timing what follows). Rejects with the output when it exits or does not start in time.
   */
  start(timeoutMs: number, onSpawn?: () => void): Promise<ServerProcess>;
  /** SIGKILLs the process (no clean shutdown). */
  kill(): Promise<void>;
}

/** A single-server Causeway cluster in `dataDir`, not started yet. `extraRuntimeArgs` go before the script (e.g. --cpu-prof). */
export async function causewayServer(dataDir: string, extraRuntimeArgs: readonly string[] = []): Promise<CausewayServer> {
  const [httpPort, serverPort, lanPort] = [await freePort(), await freePort(), await freePort()];
  const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
  const pre = isDeno ? ["run", "-A", ...extraRuntimeArgs, cli] : [...extraRuntimeArgs, cli];
  const args = [
    ...pre, "agent", "-server", "-bootstrap-expect", "1", "-node", "s0", "-data-dir", dataDir,
    "-bind", "127.0.0.1", "-client", "127.0.0.1", "-http-port", String(httpPort), "-dns-port", "-1", "-grpc-port", "-1", "-server-port", String(serverPort),
    "-serf-lan-port", String(lanPort), "-serf-wan-port", "-1", "-log-level", "warn",
  ];
  let child: ChildProcess | undefined;
  let proc: ServerProcess | undefined;
  return {
    current: () => proc,
    async start(timeoutMs, onSpawn) {
      const p = spawnServer("causeway", process.execPath, args);
      child = p.child;
      onSpawn?.();
      const url = `http://127.0.0.1:${httpPort}`;
      await whileAlive(p, [
        () => poll(async () => /Client Addr: HTTP:/.test(p.output()), (up) => up, timeoutMs, "the Causeway banner"),
        () => poll(async () => (await (await fetch(`${url}/v1/status/leader`, probe())).json()) as string, (l) => typeof l === "string" && l !== "", timeoutMs, "a Causeway leader"),
      ]);
      proc = { url, pid: p.child.pid!, dataDir, output: () => p.output().slice(-4000) };
      return proc;
    },
    async kill() {
      if (child) await killAndWait(child);
      child = undefined;
      proc = undefined;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// etcd

interface EtcdStatus { leader?: string; dbSize?: string }

/** A running etcd member and its stop function. */
export interface EtcdServer extends ServerProcess {
  /** Its backend database size as /v3/maintenance/status reports it (bytes). */
  dbSize(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts one etcd member with its data dir in `dataDir` and waits until it leads itself. */
export async function startEtcdServer(dataDir: string, timeoutMs: number): Promise<EtcdServer> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const p = spawnServer("etcd", "etcd", [
    "--name", "m0", "--data-dir", dataDir,
    "--listen-client-urls", client, "--advertise-client-urls", client,
    "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
    "--initial-cluster", `m0=${peer}`, "--initial-cluster-state", "new", "--initial-cluster-token", `bench-scale-${process.pid}`,
    "--logger", "zap", "--log-level", "warn",
  ]);
  const status = async (): Promise<EtcdStatus> => (await (await fetch(`${client}/v3/maintenance/status`, probe({ method: "POST", body: "{}" }))).json()) as EtcdStatus;
  await whileAlive(p, [() => poll(status, (s) => !!s.leader && s.leader !== "0", timeoutMs, "etcd to elect itself")]);
  return {
    url: client,
    pid: p.child.pid!,
    dataDir,
    output: () => p.output().slice(-4000),
    dbSize: async () => Number((await status()).dbSize ?? Number.NaN),
    stop: () => killAndWait(p.child),
  };
}
