/**
 * The xDS benchmark's agent process: `causeway agent ...` from source (src/main/cli.ts runCli, the same
 * code path as `bun src/main/cli.ts agent ...`), plus one probe for the benchmark: on SIGUSR2 it runs a
 * full garbage collection and prints one line `XDSBENCH-STATS {"rss":..,"heapUsed":..,"cpuUs":..}`
 * (resident set and JS heap in bytes after the collection, user+system CPU in microseconds since
 * start, read before it) to stdout.
 *
 *   bun test/bench/xds_agent.ts agent -dev ...
 */
import { runCli } from "../../src/main/cli.ts";

/** The prefix of the stats line (test/bench/xds.ts looks for it). */
export const STATS_PREFIX = "XDSBENCH-STATS ";

function stats(): string {
  const cpu = process.cpuUsage(); // before the collection, so a window's CPU excludes the probe's own GC
  (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc(true);
  const m = process.memoryUsage();
  return `${STATS_PREFIX}${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, cpuUs: cpu.user + cpu.system })}\n`;
}

if (import.meta.main) {
  process.on("SIGUSR2", () => void process.stdout.write(stats()));
  const code = await runCli(process.argv.slice(2), { out: (t) => void process.stdout.write(t), err: (t) => void process.stderr.write(t) });
  process.exit(code);
}
