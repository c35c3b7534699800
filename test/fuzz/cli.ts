/**
 * The long fuzz run: `npx bun run test/fuzz/cli.ts [--seconds 600] [--seed S] [--count N]`. Starts a
 * dev agent, runs seeds S, S+1, ... until the time is up (or one seed with --count), and prints every
 * finding with the seed and probe number that replay it. Exit code 1 when anything was found.
 */
import { startAgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";
import { formatFinding, runFuzz } from "./runner.ts";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const seconds = arg("seconds", 600);
const count = arg("count", 500);
let seed = arg("seed", Date.now() % 100_000);

const agent = await startAgentProcess(process.execPath, [
  CLI, "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
]);
let total = 0, found = 0;
try {
  const until = Date.now() + seconds * 1000;
  const once = process.argv.includes("--count");
  do {
    const run = await runFuzz({
      target: { url: agent.httpUrl, pid: agent.child.pid! }, seed, count,
      onProgress: (done, findings) => done % 1000 === 0 && console.log(`seed ${seed}: ${done} probes, ${findings} findings so far`),
    });
    total += run.probes;
    found += run.findings.length;
    for (const f of run.findings) console.log(formatFinding(f));
    console.log(`seed ${seed}: ${run.probes} probes, ${run.findings.length} findings, RSS ${run.baselineRssKb} -> peak ${run.peakRssKb} KiB, statuses ${JSON.stringify(run.statuses)}`);
    if (run.findings.some((f) => f.problem.startsWith("not serving"))) break;
    seed++;
    if (once) break;
  } while (Date.now() < until);
} finally {
  await agent.stop("SIGKILL").catch(() => {});
}
console.log(`${total} probes, ${found} findings`);
process.exit(found ? 1 : 0);
