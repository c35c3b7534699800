/**
 * Gateway data-plane benchmark: Causeway's built-in mesh gateway data plane against nginx (stream module,
 * `ssl_preread`, routing by `$ssl_preread_server_name`), each in front of the same TLS backends on
 * loopback, measured in the same run:
 *   bun run bench:gateway [--quick]
 * Rows: bulk download throughput with 1 and 64 concurrent connections, connection setup rate (16
 * concurrent handshake loops), TLS handshake latency p50/p99 through the proxy minus the same measured
 * straight to a backend (the latency the proxy adds), and the proxy's peak RSS. Then Causeway/nginx
 * ratios. Targets (issue 15): >= 1.0x nginx throughput and setup rate, setup p99 <= 1.2x nginx's.
 * Both proxies run as one process with one worker/thread; the client and the backends run in this
 * process. When nginx is missing the benchmark says so and reports Causeway alone.
 */
import { readFileSync } from "node:fs";
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { testPki } from "../harness/tls_fixtures.ts";
import { freePort } from "../harness/agent_process.ts";
import { handshakeLatency, setupRate, startBackends, throughput } from "./gateway_load.ts";
import { nginxBinary, startNginx } from "./gateway_nginx.ts";

const quick = process.argv.includes("--quick");
const SNIS = ["a.dc1.internal.bench.consul", "b.dc1.internal.bench.consul"];
const MB = 1024 * 1024;

interface Row {
  throughput1: number;
  throughput64: number;
  setupRate: number;
  addedP50: number;
  addedP99: number;
  rssMb: number;
}

const children = new Set<ChildProcess>();
const cleanup: (() => void)[] = [];
const killAll = () => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  for (const f of cleanup) f();
};
process.on("exit", killAll);
process.on("SIGINT", () => (killAll(), process.exit(130)));

/** Peak RSS (VmHWM) of a process in MB. */
function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Starts the Causeway data plane (./gateway_proc.ts) as its own process routing SNIS to the backends. */
async function startCauseway(port: number, backendPorts: readonly number[]): Promise<{ pid: number; stop(): void }> {
  const routes = Object.fromEntries(SNIS.map((sni, i) => [sni, backendPorts[i % backendPorts.length]]));
  const child = spawn(process.execPath, [join(import.meta.dir, "gateway_proc.ts"), JSON.stringify({ port, routes })], { stdio: ["ignore", "pipe", "inherit"] });
  children.add(child);
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += String(d);
      if (out.includes("READY")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`gateway_proc exited ${code}`)));
  });
  return { pid: child.pid!, stop: () => child.kill("SIGKILL") };
}

async function measure(port: number, pid: number, baseline: { p50: number; p99: number }): Promise<Row> {
  // Warm-up (JIT and buffers) before anything is measured, the same for both proxies.
  await throughput(port, SNIS, 4, 16 * MB);
  await setupRate(port, SNIS, 16, 1);
  const t1 = await throughput(port, SNIS, 1, (quick ? 64 : 256) * MB);
  const t64 = await throughput(port, SNIS, 64, (quick ? 2 : 8) * MB);
  const rate = await setupRate(port, SNIS, 16, quick ? 2 : 5);
  const lat = await handshakeLatency(port, SNIS, quick ? 200 : 1000);
  return { throughput1: t1, throughput64: t64, setupRate: rate, addedP50: lat.p50 - baseline.p50, addedP99: lat.p99 - baseline.p99, rssMb: peakRssMb(pid) };
}

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "n/a");

async function main() {
  const pki = testPki();
  const backends = await startBackends(2, pki.server);
  cleanup.push(() => void backends.close());
  // The handshake latency straight to a backend: what both proxies' numbers are measured against.
  const baseline = await handshakeLatency(backends.ports[0]!, SNIS, quick ? 200 : 1000);
  const rows = new Map<string, Row>();

  const cwPort = await freePort();
  const cw = await startCauseway(cwPort, backends.ports);
  try {
    rows.set("Causeway", await measure(cwPort, cw.pid, baseline));
  } finally {
    cw.stop();
  }

  const nginx = nginxBinary();
  let nginxVersion = "";
  if (!nginx) {
    console.log("nginx is not installed (Debian: apt-get install nginx libnginx-mod-stream): reporting Causeway alone.");
  } else {
    const ngPort = await freePort();
    const ng = await startNginx(nginx, ngPort, new Map(SNIS.map((s, i) => [s, backends.ports[i % backends.ports.length]!])));
    cleanup.push(() => ng.stop());
    nginxVersion = ng.version;
    try {
      rows.set("nginx", await measure(ngPort, ng.pid, baseline));
    } finally {
      ng.stop();
    }
  }
  await backends.close();

  console.log(`\nGateway data plane, loopback, TLS passthrough by SNI${nginxVersion ? ` (peer: ${nginxVersion})` : ""}; direct handshake p50 ${fmt(baseline.p50, 2)} ms, p99 ${fmt(baseline.p99, 2)} ms\n`);
  console.log("| proxy | MB/s, 1 conn | MB/s, 64 conns | setups/s (16 loops) | added setup p50 ms | added setup p99 ms | peak RSS MB |");
  console.log("|---|---|---|---|---|---|---|");
  for (const [name, r] of rows) {
    console.log(`| ${name} | ${fmt(r.throughput1)} | ${fmt(r.throughput64)} | ${fmt(r.setupRate, 0)} | ${fmt(r.addedP50, 2)} | ${fmt(r.addedP99, 2)} | ${fmt(r.rssMb)} |`);
  }
  const c = rows.get("Causeway");
  const n = rows.get("nginx");
  if (c && n) {
    // The proxies' own setup cost: the full handshake latency through each (baseline + added).
    const p99 = (r: Row) => baseline.p99 + r.addedP99;
    console.log(`\nCauseway/nginx: throughput 1 conn ${fmt(c.throughput1 / n.throughput1, 2)}x, 64 conns ${fmt(c.throughput64 / n.throughput64, 2)}x, ` +
      `setup rate ${fmt(c.setupRate / n.setupRate, 2)}x, setup p99 ${fmt(p99(c) / p99(n), 2)}x (targets: >= 1.0x, >= 1.0x, >= 1.0x, <= 1.2x)`);
  }
}

await main().finally(killAll);
