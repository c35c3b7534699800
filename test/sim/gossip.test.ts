/**
 * Seeded whole-cluster runs of the SWIM core (see gossip_sim.ts). Every failure names its seed;
 * replay one with `GOSSIP_SEED=<n> bun test test/sim/gossip`.
 */
import { describe, expect, test } from "bun:test";
import { seededRng } from "../../src/platform/index.ts";
import { LAN_PROFILE, suspicionTimeoutMs } from "../../src/membership/index.ts";
import { GossipSim, converged, enableReconnect, epidemicRounds } from "./gossip_sim.ts";

const only = process.env.GOSSIP_SEED === undefined ? undefined : Number(process.env.GOSSIP_SEED);
const seeds = (list: number[]) => (only === undefined ? list : [only]);

function withSeed(seed: number, fn: () => void): void {
  try {
    fn();
  } catch (e) {
    throw new Error(`gossip sim failed with seed ${seed} (replay: GOSSIP_SEED=${seed}): ${e instanceof Error ? e.message : String(e)}`);
  }
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `n${String(i).padStart(3, "0")}`);

/** Starts n nodes at t=0; each joins n000 at a random time in the first second. */
/** `streamPings` false: probes use packets only (memberlist DisableTcpPings), as the loss here is on packets only. */
function startCluster(seed: number, n: number, loss = 0, streamPings = true): GossipSim {
  const sim = new GossipSim({ seed, profile: { ...LAN_PROFILE, disableTcpPings: !streamPings }, loss });
  const rng = seededRng(seed ^ 0x5eed);
  const all = names(n);
  for (const name of all) sim.addNode(name);
  for (const name of all.slice(1)) sim.at(rng.int(1000), () => sim.join(name, [all[0]!]));
  return sim;
}

const failedCount = (sim: GossipSim) => sim.log.filter((r) => r.event.type === "failed").length;

describe("gossip simulation: convergence and detection vs the epidemic estimate", () => {
  const rows: string[] = [];
  for (const n of [3, 10, 50, 200]) {
    test(`N=${n}`, () => {
      const seed = only ?? 1000 + n;
      withSeed(seed, () => {
        const k = LAN_PROFILE.gossipNodes, g = LAN_PROFILE.gossipIntervalMs;
        const est = epidemicRounds(n, k);
        const sim = startCluster(seed, n);
        const joined = sim.runUntilTrue(() => converged(sim), 60_000, 20);
        expect(joined, "join convergence").toBeDefined();

        // One broadcast (a metadata update) from a random member: classic epidemic dissemination.
        const src = sim.node(names(n)[n - 1]!);
        const tags = new TextEncoder().encode(`v=${seed}`);
        const t0 = sim.now;
        src.ml.updateMeta(tags, t0);
        const same = (a?: Uint8Array) => a !== undefined && a.length === tags.length && a.every((x, i) => x === tags[i]);
        const spread = sim.runUntilTrue(() => sim.upNodes().every((x) => same(x.ml.member(src.name)?.meta)), 30_000, 10);
        expect(spread, "metadata dissemination").toBeDefined();
        const spreadMs = spread! - t0;

        // Crash one member; time until the first and the last live member declare it failed.
        const victim = names(n)[Math.floor(n / 2)]!;
        const t1 = sim.now;
        sim.crash(victim);
        const minSusp = suspicionTimeoutMs(LAN_PROFILE.suspicionMult, n, LAN_PROFILE.probeIntervalMs);
        const bound = LAN_PROFILE.suspicionMaxTimeoutMult * minSusp + 10 * LAN_PROFILE.probeIntervalMs;
        const detected = sim.runUntilTrue(() => sim.upNodes().every((x) => x.ml.member(victim)?.state === "dead"), bound, 20);
        expect(detected, `failure of ${victim} detected by all within ${bound} ms`).toBeDefined();
        const first = sim.log.find((r) => r.at >= t1 && r.event.type === "failed")!.at - t1;
        expect(failedCount(sim)).toBe(n - 1); // nobody else was declared failed
        rows.push(
          `N=${String(n).padStart(3)} join-converged ${String(joined).padStart(6)} ms | broadcast to all ${String(spreadMs).padStart(5)} ms = ` +
          `${(spreadMs / g).toFixed(1).padStart(5)} gossip rounds (estimate 2ln(N+1)/k = ${est.toFixed(1)}) | failure detected first ` +
          `${first} ms, by all ${detected! - t1} ms (suspicion min ${minSusp} ms, max ${LAN_PROFILE.suspicionMaxTimeoutMult * minSusp} ms)`,
        );
        if (n === 200) console.log(`gossip sim (LAN profile, seed ${seed}, no loss):\n  ${rows.join("\n  ")}`);
      });
    }, 30_000);
  }
});

describe("gossip simulation: 10% packet loss", () => {
  // Stream pings off: the simulated streams never lose anything, so with them on, no probe would ever
  // fail and the refutation this test is about would not be exercised (see the next test).
  test("no live member is ever declared dead (50 seeds, N from 5 to 50), and suspected members refute", () => {
    const sizes = [5, 10, 20, 35, 50];
    let refutations = 0, suspicionsSeen = 0, runs = 0;
    for (const seed of seeds(Array.from({ length: 50 }, (_, i) => i + 1))) {
      withSeed(seed, () => {
        const n = sizes[seed % sizes.length]!;
        const sim = startCluster(seed, n, 0.1, false);
        let suspects = 0;
        const joined = sim.runUntilTrue(() => converged(sim), 60_000, 100);
        expect(joined, "join convergence under loss").toBeDefined();
        const end = sim.now + 30_000;
        while (sim.now < end) {
          sim.runFor(500);
          for (const x of sim.upNodes()) for (const m of x.ml.members()) if (m.state === "suspect") suspects++;
        }
        expect(sim.log.filter((r) => r.event.type === "failed").map((r) => `${r.node} declared ${r.event.type === "failed" ? r.event.member.name : ""} failed at ${r.at}`)).toEqual([]);
        // Suspicions may be in flight at the end, but nobody is dead, left or missing.
        for (const x of sim.upNodes()) expect(x.ml.numLiveMembers(), x.name).toBe(n);
        for (const x of sim.upNodes()) refutations += x.ml.member(x.name)!.incarnation - 1;
        suspicionsSeen += suspects;
        runs++;
      });
    }
    console.log(`10% loss: ${runs} runs, ${suspicionsSeen} suspect observations, ${refutations} refutations, 0 false deaths`);
    if (only === undefined) expect(refutations).toBeGreaterThan(0);
  }, 60_000);

  test("with stream pings (the default) a probe whose packets were lost is answered over a stream: nobody is even suspected (10 seeds)", () => {
    let streamOnly = 0;
    for (const seed of seeds(Array.from({ length: 10 }, (_, i) => i + 1))) {
      withSeed(seed, () => {
        const sim = startCluster(seed, 10, 0.1);
        expect(sim.runUntilTrue(() => converged(sim), 60_000, 100), "join convergence under loss").toBeDefined();
        const end = sim.now + 30_000;
        while (sim.now < end) {
          sim.runFor(500);
          for (const x of sim.upNodes()) expect(x.ml.members().filter((m) => m.state !== "alive").map((m) => m.name), `${x.name} at ${sim.now}`).toEqual([]);
        }
        for (const x of sim.upNodes()) streamOnly += x.ml.stats.streamAcks;
      });
    }
    // The loss did fail packet probes; the stream ping is what kept their targets from suspicion.
    if (only === undefined) expect(streamOnly).toBeGreaterThan(0);
  }, 60_000);
});

describe("gossip simulation: partitions", () => {
  for (const seed of seeds([11, 12, 13])) {
    test(`a partition heals and membership reconverges (seed ${seed})`, () => {
      withSeed(seed, () => {
        const n = 12;
        const sim = startCluster(seed, n);
        expect(sim.runUntilTrue(() => converged(sim), 60_000)).toBeDefined();
        enableReconnect(sim, 10_000, seededRng(seed + 1));
        const left = new Set(names(n).slice(0, n / 2));
        sim.blocked = (a, b) => left.has(a) !== left.has(b);
        const splitAt = sim.now;
        // Each side declares the other failed.
        const split = sim.runUntilTrue(() => sim.upNodes().every((x) => x.ml.numLiveMembers() === n / 2), 60_000, 100);
        expect(split, "each side sees only itself").toBeDefined();
        expect(failedCount(sim)).toBe(n * (n / 2));
        sim.blocked = () => false;
        const healAt = sim.now;
        const healed = sim.runUntilTrue(() => converged(sim), 120_000, 100);
        expect(healed, "reconverged after heal").toBeDefined();
        console.log(`partition (N=${n}, seed ${seed}): each side saw the other failed ${split! - splitAt} ms after the split; reconverged ${healed! - healAt} ms after the heal (reconnect every 10 s)`);
      });
    }, 20_000);
  }
});
