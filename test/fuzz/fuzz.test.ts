/**
 * The fuzz suite's CI run: a fixed set of seeds against a real `agent -dev`, bounded in count. Any
 * finding fails the test and prints the seed and probe number that replay it
 * (`npx bun run test/fuzz/cli.ts --seed S --count N`).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { seededRng } from "../../src/platform/index.ts";
import { startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI } from "../harness/server_cluster.ts";
import { parseGoJson } from "../../src/lib/index.ts";
import { mutateBody, render, toTree } from "./mutate.ts";
import { nextProbe, WRITE_ENDPOINTS } from "./probes.ts";
import { formatFinding, runFuzz } from "./runner.ts";

describe("fuzz probes (pure)", () => {
  test("the same seed gives the same probes", () => {
    const a = seededRng(7), b = seededRng(7);
    for (let i = 0; i < 200; i++) {
      const x = nextProbe(a, new Uint8Array([1, 2, 3])), y = nextProbe(b, new Uint8Array([1, 2, 3]));
      expect(`${x.method} ${x.path} ${x.what} ${x.body?.length}`).toBe(`${y.method} ${y.path} ${y.what} ${y.body?.length}`);
    }
  });

  test("unmutated seed bodies render as the JSON they are; mutations keep exact literals and raw bytes", () => {
    for (const ep of WRITE_ENDPOINTS) {
      if (typeof ep.body === "string") continue;
      expect(JSON.parse(new TextDecoder().decode(render(toTree(ep.body))))).toEqual(ep.body);
    }
    expect(new TextDecoder().decode(render({ obj: [["Flags", { num: "18446744073709551616" }], ["Deep", { nest: 3, inner: null, arrays: true }]] })))
      .toBe('{"Flags":18446744073709551616,"Deep":[[[null]]]}');
    const rng = seededRng(3);
    let kinds = new Set<string>();
    for (let i = 0; i < 500; i++) kinds.add(mutateBody(WRITE_ENDPOINTS[0]!.body, rng, { maxString: 64, maxArray: 8, maxDepth: 8, maxBody: 1 << 20 }).what.split(" ")[0]!);
    expect([...kinds].sort()).toEqual(["add", "drop", "duplicate", "empty", "grow", "nest", "number", "raw", "replace"]);
    // Compounding mutations never build a body past maxBody (the fuzzer once ran itself out of memory).
    const big = seededRng(4);
    for (let i = 0; i < 300; i++) expect(mutateBody(WRITE_ENDPOINTS[0]!.body, big, { maxString: 1 << 16, maxArray: 2000, maxDepth: 100, maxBody: 1 << 20 }).body.length).toBeLessThanOrEqual(1 << 20);
    // A body the decoder reads at all is valid JSON text except where raw bytes or truncation were asked for.
    expect(() => parseGoJson(new TextDecoder().decode(render(toTree(WRITE_ENDPOINTS[0]!.body))))).not.toThrow();
  });
});

describe("fuzz suite against a real agent", () => {
  let agent: AgentProcess | undefined;
  beforeAll(async () => {
    agent = await startAgentProcess(process.execPath, [
      CLI, "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
    ]);
  });
  afterAll(async () => {
    await agent?.stop("SIGKILL").catch(() => {});
  });

  test("seeded probes: no 500, no hang, alive, memory near baseline, sentinel intact", async () => {
    const seeds = [1, 2];
    const findings: string[] = [];
    for (const seed of seeds) {
      const run = await runFuzz({ target: { url: agent!.httpUrl, pid: agent!.child.pid! }, seed, count: 1000 });
      findings.push(...run.findings.map(formatFinding));
      console.log(`fuzz seed ${seed}: ${run.probes} probes, ${run.findings.length} findings, RSS ${run.baselineRssKb} -> peak ${run.peakRssKb} KiB, statuses ${JSON.stringify(run.statuses)}`);
    }
    expect(findings).toEqual([]);
  }, 240_000);
});
