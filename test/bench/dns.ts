/**
 * DNS benchmark: a real `causeway agent -dev` answering `web.service.consul` (3 healthy instances from
 * its catalog) against dnsmasq (Debian) serving the same three A records from a hosts file, measured in
 * the same run with the same load (dns_load.ts: 64 UDP clients, one query outstanding each):
 *   bun run bench:dns [--quick]
 * Rows: answered queries per second, p50/p99 latency, lost queries. Then the Causeway/dnsmasq ratios.
 * dnsmasq is installed with apt-get when missing (as root); otherwise the bench says so and reports
 * Causeway alone. Both servers run as their own process; the load runs in this one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentCall, freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { ensureDebianCommands, onPath } from "../harness/debian.ts";
import { udpLoad, type LoadResult } from "./dns_load.ts";

const quick = process.argv.includes("--quick");
const CLIENTS = 64;
const MS = quick ? 3_000 : 10_000;
const INSTANCES = ["10.0.0.1", "10.0.0.2", "10.0.0.3"];
const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");

const work = mkdtempSync(join(tmpdir(), "causeway-bench-dns-"));
const children = new Set<ChildProcess>();
let agent: AgentProcess | undefined;
const cleanup = () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  void agent?.stop("SIGKILL");
  rmSync(work, { recursive: true, force: true });
};
process.on("exit", cleanup);
process.on("SIGINT", () => (cleanup(), process.exit(130)));

async function startCauseway(): Promise<number> {
  const port = await freePort();
  agent = await startAgentProcess(process.execPath, [cli, "agent", "-dev", "-log-level", "warn", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", String(port),
    "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"]);
  await poll(() => agentCall(agent!.httpUrl, "GET", "/v1/status/leader"), (r) => r.status === 200 && r.json !== "", 20_000, "a leader");
  for (const [i, address] of INSTANCES.entries()) {
    const r = await agentCall(agent.httpUrl, "PUT", "/v1/catalog/register", undefined, {
      Node: `web${i + 1}`, Address: address, Service: { ID: "web", Service: "web", Port: 80 }, Check: { CheckID: "web", Name: "web", Status: "passing", ServiceID: "web" },
    });
    if (r.json !== true) throw new Error(`registration failed: ${r.text}`);
  }
  return port;
}

async function startDnsmasq(): Promise<{ port: number; version: string } | undefined> {
  try {
    ensureDebianCommands({ dnsmasq: "dnsmasq" }, "the DNS benchmark's peer");
  } catch (err) {
    console.log(`dnsmasq is not available (${(err as Error).message}): reporting Causeway alone.`);
    return undefined;
  }
  const hosts = join(work, "hosts");
  writeFileSync(hosts, INSTANCES.map((a) => `${a} web.service.consul\n`).join(""));
  // dnsmasq drops root for "nobody", which must be able to read the file in the temporary directory.
  chmodSync(work, 0o755);
  chmodSync(hosts, 0o644);
  const port = await freePort();
  const child = spawn("dnsmasq", ["--keep-in-foreground", "--no-resolv", "--no-hosts", `--addn-hosts=${hosts}`, `--port=${port}`, "--listen-address=127.0.0.1",
    "--bind-interfaces", "--cache-size=10000", "--local-ttl=0", "--pid-file=", "--log-facility=-"], { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let version = "";
  for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (d) => (version ||= /started, version (\S+)/.exec(String(d))?.[1] ?? ""));
  // Ready once it answers (within 5 s).
  for (let i = 0; i < 50; i++) {
    if ((await udpLoad({ port, name: "web.service.consul", clients: 1, ms: 100, timeoutMs: 100 })).answered > 0) break;
  }
  return { port, version: version || "?" };
}

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");

async function measure(port: number): Promise<LoadResult> {
  await udpLoad({ port, name: "web.service.consul", clients: CLIENTS, ms: 1_000 }); // warm-up, the same for both
  return udpLoad({ port, name: "web.service.consul", clients: CLIENTS, ms: MS });
}

async function main() {
  const rows = new Map<string, LoadResult>();
  rows.set("Causeway", await measure(await startCauseway()));
  await agent?.stop("SIGKILL");
  agent = undefined;
  const peer = onPath("dnsmasq") || process.getuid?.() === 0 ? await startDnsmasq() : undefined;
  if (peer) rows.set("dnsmasq", await measure(peer.port));
  else if (!onPath("dnsmasq")) console.log("dnsmasq is not installed (Debian: apt-get install dnsmasq): reporting Causeway alone.");

  console.log(`\nDNS over UDP on loopback, ${CLIENTS} clients with one query outstanding each, ${MS / 1000} s; web.service.consul A (3 records)${peer ? `; peer dnsmasq ${peer.version}` : ""}\n`);
  console.log("| server | queries/s | p50 ms | p99 ms | lost | bad replies |");
  console.log("|---|---|---|---|---|---|");
  for (const [name, r] of rows) console.log(`| ${name} | ${fmt(r.qps)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${r.lost} | ${r.badReplies} |`);
  const c = rows.get("Causeway"), d = rows.get("dnsmasq");
  if (c && d) console.log(`\nCauseway/dnsmasq: throughput ${(c.qps / d.qps).toFixed(2)}x, p99 ${(c.p99 / d.p99).toFixed(2)}x`);
}

try {
  await main();
} finally {
  cleanup();
}
process.exit(0);
