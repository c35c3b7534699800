/**
 * Datacenters in network namespaces for the WAN-federation e2e: per datacenter K (1, 2, 3) a server
 * host `dcK` and a gateway host `gwK`, and one `wan` host whose bridge joins the gateway hosts.
 *
 *   root ns ──mgmt 198.19.K.0/30── dcK (servers 198.18.K.10+i) ──LAN 198.18.K.0/24── gwK ──WAN 198.18.0.0/24── wan bridge
 *
 * - Servers bind their own LAN address with Consul's default ports; their only route off the LAN is
 *   198.18.0.0/24 (the gateways' WAN addresses) through gwK, which masquerades it and counts it
 *   (`direct_out`): a server that dials another datacenter's gateway directly shows up there. A
 *   server's WAN address is its LAN address, which no other datacenter has a route to.
 * - gwK accepts only the gateway ports (8443-8449) on its WAN side: servers of different
 *   datacenters cannot reach each other except through mesh gateways.
 * - The test (root namespace) reaches each datacenter's LAN through the mgmt link (dcK forwards),
 *   for the HTTP API and to play a sidecar talking to its local gateway.
 * - `loss(K, percent)` drops that share of every packet leaving gwK on the WAN (both ways when set
 *   on all gateways); nftables `numgen random`, since this kernel has no netem qdisc.
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { poll, startAgentProcess, type AgentProcess } from "../../harness/agent_process.ts";
import { NetLab } from "../../harness/netns.ts";

export const cli = join(import.meta.dir, "..", "..", "..", "src", "main", "cli.ts");
export const GATEWAY_PORT = 8443;

/** A datacenter's shape in the lab. */
export interface DcSpec {
  readonly name: string;
  /** Its number K: addresses 198.18.K.x. */
  readonly k: number;
  readonly servers: number;
}

export const serverAddr = (k: number, i: number) => `198.18.${k}.${10 + i}`;
export const gatewayLan = (k: number, n = 0) => `198.18.${k}.${1 + 2 * n}`;
export const gatewayWan = (k: number, n = 0) => `198.18.0.${10 * k + n}`;
export const nodeName = (dc: string, i: number) => `${dc}-s${i}`;

export interface Gateway {
  readonly dc: string;
  readonly id: string;
  readonly lan: string;
  readonly wan: string;
  readonly admin: string;
  readonly child: ChildProcess;
  output(): string;
}

/** Runs the causeway CLI (from source) in the root namespace; throws with its output on failure. */
export function causeway(args: readonly string[], cwd: string): string {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`causeway ${args.join(" ")} exited with ${r.status}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

export class FederationLab {
  readonly net: NetLab;
  readonly servers = new Map<string, (AgentProcess | undefined)[]>();
  readonly gateways: Gateway[] = [];
  /** Output of servers stopped earlier, for `dump()`. */
  private readonly stoppedOutput: string[] = [];
  private gatewaysStarted = 0;

  /**
   * `acl`: every server runs with ACLs (default deny; the primary's master token, and the agent and
   * replication tokens everywhere, are `rootToken`; tokens replicate), and the lab's HTTP calls and
   * gateways use that token. `prefix` names the namespaces (one lab per prefix at a time).
   */
  constructor(
    readonly work: string,
    readonly dcs: readonly DcSpec[],
    readonly primary = dcs[0]!.name,
    readonly options: { readonly acl?: { readonly rootToken: string }; readonly prefix?: string } = {},
  ) {
    this.net = NetLab.create(options.prefix ?? "cwf");
  }

  spec(dc: string): DcSpec {
    return this.dcs.find((d) => d.name === dc)!;
  }

  /** The namespaces, links, routes and firewall of every datacenter. */
  buildNetwork(): void {
    const net = this.net;
    net.addHost("wan");
    net.ip("wan", ["link", "add", "br0", "type", "bridge"]);
    net.ip("wan", ["link", "set", "br0", "up"]);
    for (const { k } of this.dcs) {
      const dc = `dc${k}`;
      const gw = `gw${k}`;
      net.addHost(dc);
      net.addHost(gw);
      // Gateway addresses for this and two rotations: LAN .1/.3/.5, WAN .K0/.K1/.K2.
      net.link({ host: gw, ifname: "wan0", addrs: [0, 1, 2].map((n) => `${gatewayWan(k, n)}/24`) }, { host: "wan", ifname: `p${k}`, addrs: [] });
      net.ip("wan", ["link", "set", `p${k}`, "master", "br0"]);
      const spec = this.dcs.find((d) => d.k === k)!;
      const serverAddrs = Array.from({ length: spec.servers }, (_, i) => `${serverAddr(k, i)}/24`);
      net.link({ host: dc, ifname: "lan0", addrs: [`198.18.${k}.2/24`, ...serverAddrs] }, { host: gw, ifname: "lan0", addrs: [0, 1, 2].map((n) => `${gatewayLan(k, n)}/24`) });
      const [hostEnd] = net.link({ ifname: "", addrs: [`198.19.${k}.1/30`] }, { host: dc, ifname: "mgmt0", addrs: [`198.19.${k}.2/30`] });
      net.ip(undefined, ["route", "add", `198.18.${k}.0/24`, "via", `198.19.${k}.2`, "dev", hostEnd]);
      net.ip(dc, ["route", "add", "198.18.0.0/24", "via", gatewayLan(k)]);
      net.ip(gw, ["route", "add", `198.19.${k}.0/30`, "via", `198.18.${k}.2`]);
      net.sysctl(dc, "net.ipv4.ip_forward", "1");
      net.sysctl(gw, "net.ipv4.ip_forward", "1");
      net.nft(gw, `
table inet cwf {
  counter direct_out { }
  chain forward { type filter hook forward priority 0; policy accept;
    iifname "lan0" oifname "wan0" counter name "direct_out"
  }
  chain input { type filter hook input priority 0; policy accept;
    iifname "wan0" ct state established,related accept
    iifname "wan0" tcp dport 8443-8449 accept
    iifname "wan0" drop
  }
  chain loss { type filter hook postrouting priority 10; policy accept; }
}
table ip nat {
  chain post { type nat hook postrouting priority 100;
    oifname "wan0" masquerade
  }
}
`);
    }
  }

  /** Packets this datacenter's servers sent straight onto the WAN (not through a gateway process) since the last reset. */
  directPackets(dc: string, reset = false): number {
    const gw = `gw${this.spec(dc).k}`;
    const out = this.net.exec(gw, "nft", [reset ? "reset" : "list", "counter", "inet", "cwf", "direct_out"]);
    return Number(/packets (\d+)/.exec(out)?.[1] ?? "NaN");
  }

  /** Drops `percent`% of the packets leaving datacenter `dc`'s gateway host on the WAN (0: none). */
  loss(dc: string, percent: number): void {
    const gw = `gw${this.spec(dc).k}`;
    this.net.exec(gw, "nft", ["flush", "chain", "inet", "cwf", "loss"]);
    if (percent > 0) this.net.exec(gw, "nft", ["add", "rule", "inet", "cwf", "loss", "oifname", "wan0", "numgen", "random", "mod", "100", "<", String(percent), "drop"]);
  }

  /** A CA and one server certificate per server (naming `<node>.server.<dc>.consul` and its address), made with `causeway tls`. */
  makeCertificates(): void {
    mkdirSync(this.work, { recursive: true });
    causeway(["tls", "ca", "create"], this.work);
    for (const { name, k, servers } of this.dcs) {
      for (let i = 0; i < servers; i++) {
        const dir = join(this.work, name, `s${i}`);
        mkdirSync(dir, { recursive: true });
        causeway(["tls", "cert", "create", "-server", "-dc", name, "-node", nodeName(name, i), "-additional-ipaddress", serverAddr(k, i),
          "-ca", join(this.work, "consul-agent-ca.pem"), "-key", join(this.work, "consul-agent-ca-key.pem")], dir);
      }
    }
  }

  /** The config file of server `i` of `dc`; `primaryGateways` for a secondary. */
  writeServerConfig(dc: string, i: number, primaryGateways: readonly string[]): string {
    const dir = join(this.work, dc, `s${i}`);
    const file = join(dir, "config.json");
    writeFileSync(file, JSON.stringify({
      ca_file: join(this.work, "consul-agent-ca.pem"), cert_file: join(dir, `${dc}-server-consul-0.pem`), key_file: join(dir, `${dc}-server-consul-0-key.pem`),
      verify_incoming_rpc: true, verify_outgoing: true, verify_server_hostname: true,
      primary_datacenter: this.primary,
      connect: { enabled: true, enable_mesh_gateway_wan_federation: true },
      ...(dc === this.primary ? {} : { primary_gateways: primaryGateways, primary_gateways_interval: "2s" }),
      retry_interval_wan: "2s",
      ...(this.options.acl ? {
        acl: {
          enabled: true, default_policy: "deny", enable_token_replication: true,
          tokens: { ...(dc === this.primary ? { master: this.options.acl.rootToken } : {}), agent: this.options.acl.rootToken, replication: this.options.acl.rootToken },
        },
      } : {}),
    }));
    return file;
  }

  /** Starts server `i` of `dc` in its namespace (its data dir survives a restart). */
  async startServer(dc: string, i: number, primaryGateways: readonly string[] = [`${gatewayWan(1)}:${GATEWAY_PORT}`]): Promise<AgentProcess> {
    const { k, servers } = this.spec(dc);
    const addr = serverAddr(k, i);
    const config = this.writeServerConfig(dc, i, primaryGateways);
    const joins = Array.from({ length: servers }, (_, j) => j).filter((j) => j !== i).flatMap((j) => ["-retry-join", serverAddr(k, j)]);
    const agent = await startAgentProcess("ip", ["netns", "exec", this.net.ns(`dc${k}`), process.execPath, cli, "agent", "-server", "-bootstrap-expect", String(servers),
      "-datacenter", dc, "-node", nodeName(dc, i), "-data-dir", join(this.work, dc, `s${i}`, "data"), "-config-file", config,
      "-bind", addr, "-client", addr, "-grpc-port", "8502", "-retry-interval", "1s", ...joins], { timeoutMs: 90_000 });
    const list = this.servers.get(dc) ?? [];
    list[i] = agent;
    this.servers.set(dc, list);
    return agent;
  }

  /** Starts every server of `dc` at once. */
  async startDc(dc: string, primaryGateways?: readonly string[]): Promise<void> {
    await Promise.all(Array.from({ length: this.spec(dc).servers }, (_, i) => this.startServer(dc, i, primaryGateways)));
  }

  /** Index of `dc`'s leader among its servers (by the leader's server-port address). */
  async leaderIndex(dc: string, askIndex = this.running(dc)): Promise<number> {
    const leader = await this.json<string>(dc, "/v1/status/leader", askIndex);
    const { k, servers } = this.spec(dc);
    const i = Array.from({ length: servers }, (_, j) => j).find((j) => leader === `${serverAddr(k, j)}:8300`);
    if (i === undefined) throw new Error(`no known leader in ${dc}: ${JSON.stringify(leader)}`);
    return i;
  }

  /** Stops server `i` of `dc` (SIGKILL by default) and forgets it. */
  async stopServer(dc: string, i: number, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const a = this.servers.get(dc)?.[i];
    if (!a) return;
    this.servers.get(dc)![i] = undefined;
    await a.stop(signal);
    this.stoppedOutput.push(`==== ${dc} server ${i} (stopped with ${signal})\n${a.output()}`);
  }

  /** Index of the first running server of `dc` (0 when none runs). */
  running(dc: string): number {
    const i = (this.servers.get(dc) ?? []).findIndex((a) => a !== undefined);
    return i < 0 ? 0 : i;
  }

  /** `fetch` of server `i`'s HTTP API (reached through the mgmt link); by default a running server's. */
  http(dc: string, path: string, init?: RequestInit, i = this.running(dc)): Promise<Response> {
    const headers = new Headers(init?.headers);
    if (this.options.acl && !headers.has("X-Consul-Token")) headers.set("X-Consul-Token", this.options.acl.rootToken);
    return fetch(`${this.httpUrl(dc, i)}${path}`, { ...init, headers, signal: AbortSignal.timeout(15_000) });
  }

  /** The HTTP API of `dc`'s server `i` (a running one by default), e.g. "http://198.18.1.10:8500". */
  httpUrl(dc: string, i = this.running(dc)): string {
    return `http://${serverAddr(this.spec(dc).k, i)}:8500`;
  }

  /**
   * Brings the lab up: network, certificates, the primary (until it has a leader and a CA) and its
   * gateway, then every other datacenter with its gateway.
   */
  async start(): Promise<void> {
    this.buildNetwork();
    this.makeCertificates();
    await this.startDc(this.primary);
    await this.waitLeader(this.primary);
    await poll(() => this.json<{ TrustDomain?: string }>(this.primary, "/v1/connect/ca/roots"), (r) => !!r.TrustDomain, 60_000, `${this.primary}'s CA (bound 60 s)`);
    this.startGateway(this.primary);
    for (const d of this.dcs.filter((x) => x.name !== this.primary)) {
      await this.startDc(d.name);
      this.startGateway(d.name);
    }
  }

  async json<T = unknown>(dc: string, path: string, i = this.running(dc)): Promise<T> {
    const r = await this.http(dc, path, undefined, i);
    if (!r.ok) throw new Error(`GET ${path} on ${dc}/${i}: ${r.status} ${await r.text()}`);
    return (await r.json()) as T;
  }

  /**
   * Starts a `causeway gateway mesh -register -expose-servers` in gwK, registered with server `via`
   * of `dc`; rotation `n` picks its addresses (LAN 198.18.K.{1,3,5}, WAN 198.18.0.K{0,1,2}) and port 8443+n.
   */
  startGateway(dc: string, n = 0, o: { via?: number; id?: string } = {}): Gateway {
    const k = this.spec(dc).k;
    const port = GATEWAY_PORT + n;
    const lan = `${gatewayLan(k, n)}:${port}`;
    const wan = `${gatewayWan(k, n)}:${port}`;
    const id = o.id ?? (n === 0 ? "mesh-gateway" : `mesh-gateway-${n}`);
    const via = o.via ?? 0;
    const admin = `127.0.0.1:${19000 + this.gatewaysStarted++}`;
    const server = serverAddr(k, via);
    const child = this.net.spawn(`gw${k}`, process.execPath, [cli, "gateway", "mesh", "-register", "-expose-servers", "-proxy-id", id,
      "-address", lan, "-wan-address", wan, "-http-addr", `${server}:8500`, "-grpc-addr", `https://${server}:8502`,
      "-ca-file", join(this.work, "consul-agent-ca.pem"), "-admin-bind", admin, ...(this.options.acl ? ["-token", this.options.acl.rootToken] : [])]);
    let out = "";
    child.stdout!.on("data", (d) => (out += String(d)));
    child.stderr!.on("data", (d) => (out += String(d)));
    const g = { dc, id, lan, wan, admin, child, output: () => out };
    this.gateways.push(g);
    return g;
  }

  /** Stops gateway `g` (SIGKILL: as a host dying) and, with `deregister`, removes its registration as an operator would. */
  async stopGateway(g: Gateway, deregister: boolean): Promise<void> {
    g.child.kill("SIGKILL");
    if (deregister) {
      for (let i = 0; i < this.spec(g.dc).servers; i++) {
        await this.http(g.dc, `/v1/agent/service/deregister/${g.id}`, { method: "PUT" }, i).catch(() => undefined);
      }
    }
  }

  /** The gateway's admin endpoint, read inside its namespace. */
  admin(g: Gateway, path: string): string {
    return this.net.exec(`gw${this.spec(g.dc).k}`, "curl", ["-s", "--max-time", "5", `http://${g.admin}${path}`]);
  }

  /** Names of the WAN members that server `i` of `dc` sees alive (Status 1), sorted. */
  async wanAlive(dc: string, i = this.running(dc)): Promise<string[]> {
    const members = await this.json<{ Name: string; Status: number }[]>(dc, "/v1/agent/members?wan=1", i);
    return members.filter((m) => m.Status === 1).map((m) => m.Name).sort();
  }

  /** Every server's WAN name, `<node>.<dc>`, sorted. */
  allWanNames(): string[] {
    return this.dcs.flatMap((d) => Array.from({ length: d.servers }, (_, i) => `${nodeName(d.name, i)}.${d.name}`)).sort();
  }

  /** Waits until `dc` has a leader (seen by server 0). */
  waitLeader(dc: string, ms = 60_000): Promise<string> {
    return poll(() => this.json<string>(dc, "/v1/status/leader"), (l) => typeof l === "string" && l !== "", ms, `a leader in ${dc}`);
  }

  /** Everything the processes printed, for a failed run. */
  dump(): string {
    const parts = [...this.stoppedOutput];
    for (const [dc, list] of this.servers) list.forEach((a, i) => a && parts.push(`==== ${dc} server ${i}\n${a.output()}`));
    for (const g of this.gateways) parts.push(`==== gateway ${g.dc}/${g.id}\n${g.output()}`);
    return parts.join("\n");
  }

  /**
   * Every running server's WAN gossip log lines (`agent.serf-wan`: suspicions, refutations, failures,
   * dropped streams), each prefixed with its server, in time order: what a failed WAN assertion prints.
   */
  wanLog(): string {
    const lines: string[] = [];
    for (const [dc, list] of this.servers) {
      list.forEach((a, i) => {
        for (const l of a?.output().split("\n") ?? []) if (l.includes("agent.serf-wan:")) lines.push(`${l.slice(0, 24)} ${dc}/${i} ${l.slice(25)}`);
      });
    }
    return lines.sort().join("\n");
  }

  /**
   * afterAll's work: prints every process's output when `printOutput` (a failed run, or
   * E2E_AGENT_OUTPUT), then destroys the lab and removes its work directory.
   */
  async close(printOutput: boolean): Promise<void> {
    if (printOutput || process.env.E2E_AGENT_OUTPUT) console.log(this.dump());
    await this.destroy();
    rmSync(this.work, { recursive: true, force: true });
  }

  /** Kills every process and removes every namespace (by PID and by name). */
  async destroy(): Promise<void> {
    for (const list of this.servers.values()) for (const a of list) await a?.stop("SIGKILL").catch(() => undefined);
    this.net.destroy();
  }
}
