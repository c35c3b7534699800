/**
 * A Causeway server cluster for the nemesis: each server a real process in its own network namespace
 * (198.18.N.10+i on one bridge, no route out; N from the PID), the test process on the same bridge at
 * 198.18.N.1 as every client's host. Faults act on the real processes and their network:
 *
 * - partitions and one-way cuts: nftables sets of blocked peer addresses in each server's namespace
 *   (the clients' address is never blocked: a partitioned server still answers its clients, as in
 *   Jepsen);
 * - packet loss: nftables `numgen random` on each server's egress (this kernel has no netem);
 * - kill -9 and restart on the same data dir; SIGSTOP and SIGCONT;
 * - a full disk: each data dir is a small tmpfs (disks.ts) that a fault fills.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { NetLab } from "../harness/netns.ts";
import { NemesisDisks } from "./disks.ts";

const CLI = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
/** Every server's config file: Consul's raft_snapshot_* keys, set for a snapshot every few seconds of load. */
const NEMESIS_SERVER_CONFIG = { raft_snapshot_threshold: 256, raft_snapshot_interval: "2s" };
/** This run's /24 in 198.18.0.0/15, from the PID, so runs of different processes can share the machine. */
const SUBNET = `198.18.${2 + (process.pid % 250)}`;
export const CLIENT_ADDR = `${SUBNET}.1`;
export const serverIp = (i: number) => `${SUBNET}.${10 + i}`;

export class NemesisCluster {
  readonly net = NetLab.create("nm");
  readonly agents: (AgentProcess | undefined)[] = [];
  private readonly paused = new Set<number>();
  /** Output of processes that were killed, for a failed run's report. */
  private readonly pastOutput: string[] = [];
  private disks: NemesisDisks | undefined;

  constructor(readonly work: string, readonly size: number) {}

  /** The bridge, one namespace per server, the client's address on the bridge, and each server's disk. */
  build(): void {
    this.disks = new NemesisDisks(this.work);
    for (let i = 0; i < this.size; i++) this.disks.mount(this.dataDir(i));
    const net = this.net;
    net.addHost("net");
    net.ip("net", ["link", "add", "br0", "type", "bridge"]);
    net.ip("net", ["link", "set", "br0", "up"]);
    const [, hostPort] = net.link({ ifname: "", addrs: [`${CLIENT_ADDR}/24`] }, { host: "net", ifname: "pc", addrs: [] });
    net.ip("net", ["link", "set", hostPort, "master", "br0"]);
    for (let i = 0; i < this.size; i++) {
      const host = `s${i}`;
      net.addHost(host);
      net.link({ host, ifname: "eth0", addrs: [`${serverIp(i)}/24`] }, { host: "net", ifname: `p${i}`, addrs: [] });
      net.ip("net", ["link", "set", `p${i}`, "master", "br0"]);
      net.nft(host, `
table inet nemesis {
  set blocked_in { type ipv4_addr; }
  set blocked_out { type ipv4_addr; }
  chain input { type filter hook input priority 0; policy accept;
    ip saddr @blocked_in drop
  }
  chain output { type filter hook output priority 0; policy accept;
    ip daddr @blocked_out drop
  }
  chain loss { type filter hook postrouting priority 10; policy accept; }
}
`);
    }
  }

  /** Server `i`'s data dir: its own small disk. */
  dataDir(i: number): string {
    return join(this.work, `s${i}`, "data");
  }

  /** Fills server `i`'s disk: its next Raft log write fails with ENOSPC. */
  fillDisk(i: number): void {
    this.disks?.fill(this.dataDir(i));
  }

  /** Gives server `i`'s disk its space back. */
  emptyDisk(i: number): void {
    this.disks?.empty(this.dataDir(i));
  }

  /** How often server `i`'s current process has printed `text`. */
  mentions(i: number, text: string): number {
    return (this.agents[i]?.output().split(text).length ?? 1) - 1;
  }

  /** Starts server `i` (again, on its data dir). */
  async start(i: number): Promise<AgentProcess> {
    const dir = join(this.work, `s${i}`);
    mkdirSync(dir, { recursive: true });
    const joins = Array.from({ length: this.size }, (_, j) => j).filter((j) => j !== i).flatMap((j) => ["-retry-join", serverIp(j)]);
    // Raft snapshots every few seconds of the workload (Consul's defaults would take none in a run), so
    // faults meet snapshots being encoded and written, restarts start from them and lagging servers
    // install them.
    const config = join(this.work, `s${i}.json`);
    writeFileSync(config, JSON.stringify(NEMESIS_SERVER_CONFIG));
    const a = await startAgentProcess("ip", ["netns", "exec", this.net.ns(`s${i}`), process.execPath, CLI, "agent", "-server",
      "-bootstrap-expect", String(this.size), "-node", `s${i}`, "-data-dir", this.dataDir(i), "-bind", serverIp(i), "-client", serverIp(i),
      "-retry-interval", "1s", "-log-level", "info", "-config-file", config, ...joins], { timeoutMs: 60_000 });
    this.agents[i] = a;
    return a;
  }

  async startAll(): Promise<void> {
    await Promise.all(Array.from({ length: this.size }, (_, i) => this.start(i)));
  }

  url(i: number): string {
    return `http://${serverIp(i)}:8500`;
  }

  /** The leader's index as server `ask` sees it (undefined when it knows none or does not answer). */
  async leader(ask?: number): Promise<number | undefined> {
    const order = ask === undefined ? Array.from({ length: this.size }, (_, i) => i) : [ask];
    for (const i of order) {
      if (!this.agents[i] || this.paused.has(i)) continue;
      try {
        const r = await fetch(`${this.url(i)}/v1/status/leader`, { signal: AbortSignal.timeout(2_000) });
        const addr = (await r.json()) as string;
        const at = Array.from({ length: this.size }, (_, j) => j).find((j) => addr === `${serverIp(j)}:8300`);
        if (at !== undefined) return at;
      } catch {
        // try the next one
      }
    }
    return undefined;
  }

  /** Waits until every running server agrees on one leader. */
  async waitLeader(ms: number): Promise<number> {
    return poll(async () => {
      const seen = await Promise.all(this.agents.map((a, i) => (a && !this.paused.has(i) ? this.leader(i) : Promise.resolve(-1))));
      const live = seen.filter((x) => x !== -1);
      return live.length > 0 && live.every((x) => x !== undefined && x === live[0]) ? live[0]! : undefined;
    }, (l) => l !== undefined, ms, "one leader that every running server agrees on") as Promise<number>;
  }

  /** Only the servers in the same group talk to each other (a node may be in two groups: a bridge). */
  partition(groups: readonly (readonly number[])[]): void {
    for (let i = 0; i < this.size; i++) {
      const peers = new Set(groups.filter((g) => g.includes(i)).flat());
      const blocked = Array.from({ length: this.size }, (_, j) => j).filter((j) => j !== i && !peers.has(j)).map(serverIp);
      this.setBlocked(i, blocked, blocked);
    }
  }

  /** `to` stops hearing `from`. */
  oneWay(from: number, to: number): void {
    this.setBlocked(to, [serverIp(from)], []);
  }

  loss(percent: number): void {
    for (let i = 0; i < this.size; i++) {
      const host = `s${i}`;
      this.net.exec(host, "nft", ["flush", "chain", "inet", "nemesis", "loss"]);
      if (percent > 0) this.net.exec(host, "nft", ["add", "rule", "inet", "nemesis", "loss", "ip", "daddr", "!=", CLIENT_ADDR, "numgen", "random", "mod", "100", "<", String(percent), "drop"]);
    }
  }

  /** Servers whose link is slowed (see `slow`). */
  private readonly slowed = new Set<number>();

  /**
   * Slows server `i`'s link to `kbit` kbit/s (0: back to normal): a token bucket (tc tbf) on its
   * interface, a burst of one full packet, packets waiting up to 500 ms and dropped past that. Its
   * traffic to the clients is slowed too.
   */
  slow(i: number, kbit: number): void {
    const host = `s${i}`;
    if (kbit > 0) {
      this.net.exec(host, "tc", ["qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", `${kbit}kbit`, "burst", "1600", "latency", "500ms"]);
      this.slowed.add(i);
    } else if (this.slowed.delete(i)) {
      this.net.exec(host, "tc", ["qdisc", "del", "dev", "eth0", "root"]);
    }
  }

  /** Every link whole again, no loss. */
  healNetwork(): void {
    for (let i = 0; i < this.size; i++) this.setBlocked(i, [], []);
    this.loss(0);
  }

  async kill(i: number): Promise<void> {
    const a = this.agents[i];
    if (!a) return;
    this.agents[i] = undefined;
    this.paused.delete(i);
    await a.stop("SIGKILL");
    this.pastOutput.push(`==== s${i} (killed)\n${a.output()}`);
  }

  pause(i: number): void {
    const a = this.agents[i];
    if (!a || this.paused.has(i)) return;
    a.child.kill("SIGSTOP");
    this.paused.add(i);
  }

  resume(i: number): void {
    if (!this.paused.delete(i)) return;
    this.agents[i]?.child.kill("SIGCONT");
  }

  isPaused(i: number): boolean {
    return this.paused.has(i);
  }

  /** Everything the servers printed. */
  dump(): string {
    return [...this.pastOutput, ...this.agents.map((a, i) => (a ? `==== s${i}\n${a.output()}` : ""))].join("\n");
  }

  /** Kills every process (by PID and by namespace) and removes the namespaces. */
  async destroy(): Promise<void> {
    for (const i of [...this.paused]) this.resume(i);
    for (const a of this.agents) await a?.stop("SIGKILL").catch(() => undefined);
    this.net.destroy();
    this.disks?.unmountAll();
  }

  private setBlocked(i: number, inbound: readonly string[], outbound: readonly string[]): void {
    const host = `s${i}`;
    const script = ["flush set inet nemesis blocked_in", "flush set inet nemesis blocked_out"];
    if (inbound.length) script.push(`add element inet nemesis blocked_in { ${inbound.join(", ")} }`);
    if (outbound.length) script.push(`add element inet nemesis blocked_out { ${outbound.join(", ")} }`);
    this.net.nft(host, script.join("\n") + "\n");
  }
}
