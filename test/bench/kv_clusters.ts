/**
 * Clusters for the KV benchmark: Causeway servers (`causeway agent -server`, run from source) and etcd
 * members, each a real process on 127.0.0.1 with its data dir in a temp dir on the normal disk (fsync on),
 * behind one interface that speaks the system's own HTTP KV API.
 *
 * Every process and temp dir is registered as soon as it exists; killEverythingSync() removes them all
 * (for signal handlers and exit hooks), close() of a cluster removes its own.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Buffer } from "node:buffer";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

/** One cluster reachable over HTTP; urls[i] is server i's API base URL. */
export interface KvCluster {
  readonly system: "causeway" | "etcd";
  readonly servers: number;
  readonly urls: readonly string[];
  /** TCP ports of urls, for the keep-alive check. */
  readonly ports: readonly number[];
  /** Index into urls of the current leader (asks the cluster). */
  leader(): Promise<number>;
  /** Writes `value` (text) under `key`; throws with the HTTP status and body on anything but success. */
  put(url: string, key: string, value: string, signal: AbortSignal): Promise<void>;
  /** Linearizable read: the base64 of the stored value; throws when missing or on any error. */
  get(url: string, key: string, signal: AbortSignal): Promise<string>;
  /** WAL fsyncs server i has done so far, when the system exposes the count (etcd's /metrics). */
  walFsyncs?(i: number): Promise<number>;
  /** What each process printed (for error reports). */
  output(): string;
  /** Kills the processes and removes the data dirs. */
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
const dirs = new Set<string>();

/** Synchronously SIGKILLs every process started here and removes every temp dir (signal/exit paths). */
export function killEverythingSync(): void {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  live.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

function track(c: ChildProcess): void {
  live.add(c);
  c.once("exit", () => live.delete(c));
}

function tempDir(root: string, prefix: string): string {
  const d = mkdtempSync(join(root, prefix));
  dirs.add(d);
  return d;
}

function removeDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

/** Rejects as soon as any of `children` exits (a cluster that loses a process while starting fails fast). */
function anyExit(children: readonly ChildProcess[], name: (i: number) => string): Promise<never> {
  const p = new Promise<never>((_, reject) =>
    children.forEach((c, i) => c.once("exit", (code, signal) => reject(new Error(`${name(i)} exited (${signal ?? `code ${code}`}) while starting`)))),
  );
  p.catch(() => {}); // also rejects later, when close() kills the processes
  return p;
}

/** Waits for `p` unless a process exits first (then p's later outcome is ignored). */
function unlessExit<T>(exited: Promise<never>, p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return Promise.race([exited, p]);
}

/** Status probes must not hang a poll loop. */
const PROBE_MS = 3000;
/**
 * Options of status probes: bounded, and on a connection of their own that closes (Bun's fetch honours
 * keepalive: false), so probes leave no idle connection to be mistaken for a client's.
 */
const probe = (init: RequestInit = {}): RequestInit => ({ ...init, keepalive: false, signal: AbortSignal.timeout(PROBE_MS) });

function killAndWait(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    c.once("exit", () => resolve());
    c.kill("SIGKILL");
  });
}

async function failure(r: Response, what: string): Promise<Error> {
  const body = (await r.text().catch(() => "")).trim().slice(0, 120);
  return new Error(`HTTP ${r.status} ${what}${body ? `: ${body}` : " (empty body)"}`);
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

/** The KV calls of a cluster, by API. */
export type KvApi = Pick<KvCluster, "put" | "get">;

/** Consul's KV API as Causeway serves it: PUT /v1/kv/<key> with the raw value (answer `true`), GET ?consistent. */
export const consulKv: KvApi = {
  async put(url, key, value, signal) {
    const r = await fetch(`${url}/v1/kv/${key}`, { method: "PUT", body: value, signal });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`HTTP ${r.status} on PUT /v1/kv${text ? `: ${text.trim().slice(0, 120)}` : " (empty body)"}`);
    if (text.trim() !== "true") throw new Error(`PUT /v1/kv answered ${JSON.stringify(text.slice(0, 60))}, not true`);
  },
  async get(url, key, signal) {
    const r = await fetch(`${url}/v1/kv/${key}?consistent`, { signal });
    if (r.status !== 200) throw await failure(r, r.status === 404 ? "on GET /v1/kv (key missing, or no KV endpoint)" : "on GET /v1/kv");
    const body = (await r.json()) as Array<{ Key?: string; Value?: string | null }>;
    const entry = Array.isArray(body) ? body[0] : undefined;
    if (!entry || entry.Key !== key) throw new Error(`GET /v1/kv/${key}: unexpected body ${JSON.stringify(body).slice(0, 120)}`);
    return entry.Value ?? "";
  },
};

/** etcd's v3 JSON gateway: POST /v3/kv/put and /v3/kv/range with base64 keys and values. */
export const etcdKv: KvApi = {
  async put(url, key, value, signal) {
    const r = await fetch(`${url}/v3/kv/put`, { method: "POST", body: JSON.stringify({ key: b64(key), value: b64(value) }), signal });
    if (r.status !== 200) throw await failure(r, "on /v3/kv/put");
    const body = (await r.json()) as { header?: { revision?: string } };
    if (!body.header?.revision) throw new Error(`/v3/kv/put: unexpected body ${JSON.stringify(body).slice(0, 120)}`);
  },
  async get(url, key, signal) {
    // Linearizable is the default (serializable: false): the member confirms leadership through ReadIndex.
    const r = await fetch(`${url}/v3/kv/range`, { method: "POST", body: JSON.stringify({ key: b64(key) }), signal });
    if (r.status !== 200) throw await failure(r, "on /v3/kv/range");
    const body = (await r.json()) as { kvs?: Array<{ value?: string }> };
    const kv = body.kvs?.[0];
    if (!kv) throw new Error(`/v3/kv/range: key ${key} missing`);
    return kv.value ?? "";
  },
};

// ---------------------------------------------------------------------------------------------------
// Causeway

const cli = fileURLToPath(new URL("../../src/main/cli.ts", import.meta.url));

/** The command that runs src/main/cli.ts on the current runtime. */
function causewayCommand(): [string, string[]] {
  const isDeno = typeof (globalThis as { Deno?: unknown }).Deno !== "undefined";
  return isDeno ? [process.execPath, ["run", "-A", cli]] : [process.execPath, [cli]];
}

/**
 * Starts `servers` Causeway servers (-bootstrap-expect servers, -retry-join to each other) and waits until
 * all of them agree on a leader and the leader sees every peer.
 */
export async function startCauseway(servers: number, tmpRoot: string, timeoutMs: number): Promise<KvCluster> {
  const work = tempDir(tmpRoot, "causeway-bench-kv-");
  const lanPorts = await Promise.all(Array.from({ length: servers }, () => freePort()));
  const [cmd, pre] = causewayCommand();
  const agents: AgentProcess[] = [];
  const close = async () => {
    await Promise.all(agents.map((a) => killAndWait(a.child)));
    removeDir(work);
  };
  try {
    for (let i = 0; i < servers; i++) {
      const args = [
        ...pre, "agent", "-server", "-bootstrap-expect", String(servers), "-node", `s${i}`, "-data-dir", join(work, `s${i}`),
        "-bind", "127.0.0.1", "-client", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0",
        "-serf-lan-port", String(lanPorts[i]), "-serf-wan-port", "-1", "-log-level", "warn",
        ...(servers > 1 ? [...lanPorts.flatMap((p) => ["-retry-join", `127.0.0.1:${p}`]), "-retry-interval", "1s"] : []),
      ];
      const a = await startAgentProcess(cmd, args, { timeoutMs });
      track(a.child);
      agents.push(a);
    }
    const urls = agents.map((a) => a.httpUrl);
    const clusterAddrs = agents.map((a) => /Cluster Addr: (\S+)/.exec(a.output())?.[1] ?? "");
    const leaderAddr = async (url: string): Promise<string> => (await (await fetch(`${url}/v1/status/leader`, probe())).json()) as string;
    const leader = async (): Promise<number> => {
      const addr = await leaderAddr(urls[0]!);
      const i = clusterAddrs.indexOf(addr);
      if (i < 0) throw new Error(`leader ${JSON.stringify(addr)} is none of the servers ${clusterAddrs.join(", ")}`);
      return i;
    };
    const exited = anyExit(agents.map((a) => a.child), (i) => `causeway s${i}`);
    await unlessExit(exited, poll(() => Promise.all(urls.map(leaderAddr)), (ls) => ls[0] !== "" && ls.every((l) => l === ls[0]) && clusterAddrs.includes(ls[0]!), timeoutMs, "all Causeway servers to agree on a leader"));
    const li = await leader();
    await unlessExit(exited, poll(async () => (await (await fetch(`${urls[li]}/v1/status/peers`, probe())).json()) as string[], (p) => Array.isArray(p) && p.length === servers, timeoutMs, `${servers} raft peers`));
    return {
      system: "causeway",
      servers,
      urls,
      ports: urls.map((u) => Number(new URL(u).port)),
      leader,
      ...consulKv,
      output: () => agents.map((a, i) => `--- s${i}\n${a.output()}`).join("\n"),
      close,
    };
  } catch (e) {
    const out = agents.map((a, i) => `--- s${i}\n${a.output().slice(-2000)}`).join("\n");
    await close();
    throw new Error(`${e instanceof Error ? e.message : String(e)}${out ? `\n${out}` : ""}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// etcd

/** `etcd --version` (first lines joined), or null when no etcd is on PATH. */
export function etcdVersion(): string | null {
  try {
    const r = spawnSync("etcd", ["--version"], { encoding: "utf8", timeout: 10_000 });
    if (r.error || r.status !== 0) return null;
    const v = /etcd Version: (\S+)/.exec(r.stdout)?.[1] ?? "?";
    const go = /Go Version: (\S+)/.exec(r.stdout)?.[1];
    return go ? `${v} (${go})` : v;
  } catch {
    return null;
  }
}

interface EtcdStatus { header?: { member_id?: string }; leader?: string }

/**
 * Starts `members` etcd members (static --initial-cluster on 127.0.0.1 free ports, default fsync
 * behaviour) and waits until every member reports the same leader.
 */
export async function startEtcd(members: number, tmpRoot: string, timeoutMs: number): Promise<KvCluster> {
  const work = tempDir(tmpRoot, "etcd-bench-kv-");
  const clientPorts: number[] = [];
  const peerPorts: number[] = [];
  for (let i = 0; i < members; i++) {
    clientPorts.push(await freePort());
    peerPorts.push(await freePort());
  }
  const initialCluster = peerPorts.map((p, i) => `m${i}=http://127.0.0.1:${p}`).join(",");
  const children: ChildProcess[] = [];
  const outputs: string[] = [];
  const close = async () => {
    await Promise.all(children.map(killAndWait));
    removeDir(work);
  };
  try {
    for (let i = 0; i < members; i++) {
      const client = `http://127.0.0.1:${clientPorts[i]}`;
      const peer = `http://127.0.0.1:${peerPorts[i]}`;
      const c = spawn("etcd", [
        "--name", `m${i}`, "--data-dir", join(work, `m${i}`),
        "--listen-client-urls", client, "--advertise-client-urls", client,
        "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
        "--initial-cluster", initialCluster, "--initial-cluster-state", "new", "--initial-cluster-token", `bench-${process.pid}-${members}`,
        "--logger", "zap", "--log-level", "warn",
      ], { stdio: ["ignore", "pipe", "pipe"] });
      track(c);
      children.push(c);
      outputs.push("");
      const append = (d: Buffer) => {
        outputs[i] = (outputs[i]! + d.toString()).slice(-20_000);
      };
      c.stdout!.on("data", append);
      c.stderr!.on("data", append);
    }
    const urls = clientPorts.map((p) => `http://127.0.0.1:${p}`);
    const status = async (url: string): Promise<EtcdStatus> => (await (await fetch(`${url}/v3/maintenance/status`, probe({ method: "POST", body: "{}" }))).json()) as EtcdStatus;
    const leader = async (): Promise<number> => {
      const all = await Promise.all(urls.map(status));
      const id = all[0]?.leader;
      const i = all.findIndex((s) => s.header?.member_id === id);
      if (!id || i < 0) throw new Error(`no etcd leader among the members (${JSON.stringify(all).slice(0, 200)})`);
      return i;
    };
    await unlessExit(
      anyExit(children, (i) => `etcd m${i}`),
      poll(() => Promise.all(urls.map(status)), (all) => all.every((s) => s.leader && s.leader !== "0" && s.leader === all[0]!.leader), timeoutMs, "all etcd members to agree on a leader"),
    );
    return {
      system: "etcd",
      servers: members,
      urls,
      ports: clientPorts,
      leader,
      ...etcdKv,
      async walFsyncs(i) {
        const text = await (await fetch(`${urls[i]}/metrics`, probe())).text();
        const m = /^etcd_disk_wal_fsync_duration_seconds_count (\S+)$/m.exec(text);
        if (!m) throw new Error("no etcd_disk_wal_fsync_duration_seconds_count in /metrics");
        return Number(m[1]);
      },
      output: () => outputs.map((o, i) => `--- m${i}\n${o}`).join("\n"),
      close,
    };
  } catch (e) {
    const out = outputs.map((o, i) => `--- m${i}\n${o.slice(-2000)}`).join("\n");
    await close();
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${out}`);
  }
}
