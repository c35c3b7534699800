/**
 * The xDS benchmark's agent process: `causeway agent ...` from source (src/main/cli.ts runCli, the same
 * code path as `bun src/main/cli.ts agent ...`), plus one probe for the benchmark: on SIGUSR2 it runs a
 * full garbage collection and prints one line
 * `XDSBENCH-STATS {"rss":..,"heapUsed":..,"cpuUs":..,"cpuAfterGcUs":..}` (resident set and JS heap in
 * bytes after the collection; user+system CPU in microseconds since start, read before and after it)
 * to stdout. A window's CPU is the later probe's `cpuUs` minus the earlier one's `cpuAfterGcUs`, so it
 * counts neither probe's own collection.
 *
 * With XDSBENCH_CPU_PROFILE=<dir> in the environment, it also profiles its CPU between probes: each
 * SIGUSR2 ends the running profile (written as `<dir>/agent-<n>.cpuprofile`, n counting probes from 1,
 * so profile n covers the window from probe n-1 to probe n) and starts the next.
 *
 *   bun test/bench/xds_agent.ts agent -dev ...
 */
import { runCli } from "../../src/main/cli.ts";
import { startWindowProfiler } from "./xds_profile.ts";

/** The prefix of the stats line (test/bench/xds.ts looks for it). */
export const STATS_PREFIX = "XDSBENCH-STATS ";

function stats(): string {
  const cpu = process.cpuUsage();
  (globalThis as { Bun?: { gc(force: boolean): void } }).Bun?.gc(true);
  const m = process.memoryUsage();
  const after = process.cpuUsage();
  return `${STATS_PREFIX}${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, cpuUs: cpu.user + cpu.system, cpuAfterGcUs: after.user + after.system })}\n`;
}

if (import.meta.main) {
  const profiler = await startWindowProfiler(process.env.XDSBENCH_CPU_PROFILE, "agent");
  let probes = 0;
  process.on("SIGUSR2", () => {
    const n = ++probes;
    void (async () => {
      await profiler?.cut(String(n));
      process.stdout.write(stats());
    })();
  });
  const code = await runCli(process.argv.slice(2), { out: (t) => void process.stdout.write(t), err: (t) => void process.stderr.write(t) });
  process.exit(code);
}
