/**
 * Three datacenters' WAN pools federated through simulated mesh gateways only (wanfed_sim_kit.test.ts):
 * dc1 (primary, 3 servers), dc2 (1), dc3 (3); real gossip pools on the WAN profile wrapped by the
 * wanfed transport, a simulated clock, seeded randomness. Every cross-datacenter packet and stream
 * crosses the caller's gateway and the far one, routed by SNI. Replay one seed with
 * `WANFED_SIM_SEED=<n> bun test src/federation/wanfed_sim`. One more world gives every datacenter the
 * same private addresses: only the member name the gossip core passes with each send tells the
 * datacenters apart (a control without it never converges). `WANFED_SIM_SWEEP=<count>` also runs every
 * scenario over seeds 1..count plus flaps of other lengths, and prints the figures quoted below (slow:
 * about 5 minutes of wall time for 200).
 *
 * Bounds (simulated time), from the WAN timing (probe 5 s, suspicion x6 with 7 members: 30 s at least,
 * 180 s at most, push-pull 60 s) and serf's 30 s reconnect interval. Measured figures are from
 * `WANFED_SIM_SWEEP=200` (seeds 1..200) unless said otherwise.
 * - Join: all 7 alive in every view within 3 push-pull intervals (180 s). Gossip usually does it
 *   (median 1.4 s), but an `alive` broadcast has 4 transmissions and WAN gossip_nodes 4 spends them in
 *   one round, so now and then every copy misses a member and a push-pull has to heal it: 55 of seeds
 *   1..1000 took over 10 s, one (122) took two push-pulls, 118 s.
 * - Loss: 10% and 20% on every gateway's WAN link (each direction of a crossing drawn once, as `tc
 *   netem` on the gateway's egress) for 5 minutes: packet probes do fail, nobody is ever marked failed.
 *   Before stream pings SWIM suspected 0.8 and 7.4 times per run on average and refuted every time; with
 *   them (memberlist's TCP ping, on by default) most failed probes are answered over the stream and raise
 *   no suspicion (seeds 1..3 at 20%: 8-9 probes answered only by the stream ping, 0-1 suspicions). That
 *   is what the WAN profile gives at these rates, not a certainty: without stream pings, with loss on
 *   both gateways of a crossing (36% per packet at 20%), a lone server's refutation went out in one
 *   gossip round as 4 copies, all 4 were lost, and it was declared dead (memberlist would do the same).
 * - Flap: dc3's gateway down for one probe interval (5 s), three times, 25 s apart: never dead (0 of
 *   200; 194 runs had suspicions). A probe gives up only at the end of its interval, so the suspicions
 *   such a flap causes are raised once the gateway is back, and their gossip reaches the suspect.
 *   Longer flaps, though shorter than the earliest possible detection (probe interval + minimum
 *   suspicion = 35 s), can kill: an accusation raised during the outage spends its gossip where the
 *   suspect cannot hear it, Lifeguard's awareness then slows the probes that would carry it to the
 *   suspect, and the suspicion may expire first. Runs with a false death, one flap: 5 s 0, 10 s 0,
 *   15 s 4, 20 s 3, 30 s 48 (of 200). memberlist behaves the same.
 * - Outage: the gateway stays down until both sides see each other failed, within the slowest first
 *   probe (n-1 members at the largest awareness-scaled interval) plus the maximum suspicion: 420 s
 *   (median 144 s, max 292 s), with no failure between servers that can still reach each other. Back,
 *   all 7 alive everywhere within 3 reconnect intervals, 90 s (dc3's servers see more failed members
 *   than alive ones, so serf retries one on every tick; median 14 s, max 63 s). On the way, a server
 *   may be reported failed by its own side when the other side's verdict on it arrives with the heal,
 *   until it refutes (163 of 200 runs); any other failure fails the test.
 */
import { describe, expect, test } from "bun:test";
import { CONSUL_SERF, decodePacket, suspicionTimeoutMs, WAN_PROFILE as W } from "../membership/index.ts";
import { seededRng } from "../platform/index.ts";
import { joinAll, startWanfedSim, type FailedEvent, type SimServer, type WanfedSim, type WanfedSimOptions } from "./wanfed_sim_kit.test.ts";

const only = process.env.WANFED_SIM_SEED === undefined ? undefined : Number(process.env.WANFED_SIM_SEED);
const SEEDS = only === undefined ? [1, 2, 3] : [only];
const SWEEP = Number(process.env.WANFED_SIM_SWEEP ?? 0);

const MEMBERS = 7;
const MIN_SUSPICION_MS = suspicionTimeoutMs(W.suspicionMult, MEMBERS, W.probeIntervalMs);
const MAX_SUSPICION_MS = W.suspicionMaxTimeoutMult * MIN_SUSPICION_MS;
const JOIN_BOUND_MS = 3 * W.pushPullIntervalMs;
const LOSS_RUN_MS = 5 * 60_000;
const FLAP_MS = W.probeIntervalMs;
const FLAP_GAP_MS = 5 * W.probeIntervalMs;
const DETECTION_BOUND_MS = (MEMBERS - 1) * W.probeIntervalMs * W.awarenessMaxMultiplier + MAX_SUSPICION_MS;
const RECONVERGE_BOUND_MS = 3 * CONSUL_SERF.reconnectIntervalMs;

/** Runs `fn` on a fresh world for `seed`; a failure names the seed and how to replay it; the pools are stopped either way. */
async function withSim(seed: number, fn: (sim: WanfedSim) => Promise<void>, options: Omit<WanfedSimOptions, "seed"> = {}): Promise<void> {
  const sim = await startWanfedSim({ ...options, seed });
  try {
    await fn(sim);
  } catch (e) {
    throw new Error(`wanfed sim failed with seed ${seed} (replay: WANFED_SIM_SEED=${seed}): ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  } finally {
    await sim.stop();
  }
}

/** Joins as Consul servers do and waits for all 7 alive everywhere; returns the join results and the simulated time it took. */
async function converge(sim: WanfedSim, seed: number): Promise<{ joins: Array<number | string>; ms: number }> {
  const joining = joinAll(sim, seededRng(seed ^ 0x101));
  const start = sim.clock.monotonic();
  expect(await sim.run(JOIN_BOUND_MS, () => sim.allAlive()), `all ${MEMBERS} alive everywhere within ${JOIN_BOUND_MS} ms`).toBe(true);
  return { joins: await joining, ms: sim.clock.monotonic() - start };
}

/** Converges (every join reached one member), then holds for two push-pull intervals: nobody fails, nothing is misrouted. Returns the join time. */
async function convergeAndHold(sim: WanfedSim, seed: number): Promise<number> {
  const { joins, ms } = await converge(sim, seed);
  expect(joins).toEqual([1, 1, 1, 1, 1, 1]);
  const since = sim.clock.monotonic();
  await sim.run(2 * W.pushPullIntervalMs);
  expect(sim.failures(since)).toEqual([]);
  expect(sim.allAlive()).toBe(true);
  expect(sim.misroutes).toEqual([]);
  return ms;
}

/** Probes that gave up (each one raised a suspicion), summed over every server. */
const suspicions = (sim: WanfedSim) => sim.servers.reduce((n, s) => n + s.pool.stats().gossip.memberlist.failed, 0);
/** Probes whose packets got no ack but whose stream ping was answered (no suspicion raised). */
const streamOnlyProbes = (sim: WanfedSim) => sim.servers.reduce((n, s) => n + s.pool.stats().gossip.memberlist.streamAcks, 0);
const seesFailed = (sim: WanfedSim, viewers: readonly SimServer[], members: readonly SimServer[]) =>
  viewers.every((v) => members.every((m) => sim.statusIn(v, m.name) === "failed"));
const behindDc3 = (name: string) => name.endsWith(".dc3");
/** Member-failed events between servers on the same side of dc3's gateway (both in dc3, or neither). */
const sameSide = (failures: readonly FailedEvent[]) => failures.filter((f) => behindDc3(f.viewer) === behindDc3(f.member));

/** Flaps dc3's gateway `flaps` times for `downMs`, `gapMs` apart, then waits out any suspicion; returns failures and suspicions since the first flap. */
async function flap(sim: WanfedSim, seed: number, downMs: number, flaps: number, gapMs: number): Promise<{ failures: FailedEvent[]; suspicions: number }> {
  await sim.run(seededRng(seed ^ 0xf1a9).int(W.pushPullIntervalMs)); // not in step with the join
  const since = sim.clock.monotonic();
  const before = suspicions(sim);
  for (let i = 0; i < flaps; i++) {
    if (i > 0) await sim.run(gapMs);
    sim.setGateway("dc3", false);
    await sim.run(downMs);
    sim.setGateway("dc3", true);
  }
  // Any suspicion raised by now is refuted or expired within the maximum suspicion timeout.
  await sim.run(MAX_SUSPICION_MS + 2 * W.probeIntervalMs);
  return { failures: sim.failures(since), suspicions: suspicions(sim) - before };
}

/** One loss run: `loss` on every gateway link for 5 minutes after converging; asserts nobody failed and the loss was applied. */
async function lossRun(sim: WanfedSim, seed: number, loss: number): Promise<{ lost: number; sent: number; suspicions: number; streamOnly: number }> {
  await converge(sim, seed);
  const since = sim.clock.monotonic();
  const before = suspicions(sim);
  const streamOnlyBefore = streamOnlyProbes(sim);
  sim.setLoss(loss);
  await sim.run(LOSS_RUN_MS);
  expect(sim.failures(since), `${loss * 100}% loss`).toEqual([]);
  expect(sim.allAlive()).toBe(true);
  const gws = [...sim.gateways.values()];
  const lost = gws.reduce((n, g) => n + g.counters.framesLost, 0);
  const sent = lost + gws.reduce((n, g) => n + g.counters.framesRelayed, 0);
  // The loss was really applied: the measured rate is near the configured one, and streams were held up.
  expect(Math.abs(lost / sent - loss)).toBeLessThan(0.05);
  expect(gws.reduce((n, g) => n + g.counters.chunksDelayed, 0)).toBeGreaterThan(0);
  return { lost, sent, suspicions: suspicions(sim) - before, streamOnly: streamOnlyProbes(sim) - streamOnlyBefore };
}

/**
 * dc3's gateway down until both sides see each other failed, then back until all are alive; asserts
 * the bounds and that the result is stable. Servers on the same side never fail each other during the
 * outage; after it, one may be reported failed by its own side only when the other side had declared
 * it dead during the outage (that verdict crosses with the heal and is refuted, as in memberlist).
 * Returns how many such relayed verdicts there were.
 */
async function outage(sim: WanfedSim, seed: number): Promise<{ detectedMs: number; reconvergedMs: number; relayed: number }> {
  await converge(sim, seed);
  await sim.run(seededRng(seed ^ 0x07a9).int(W.pushPullIntervalMs)); // not in step with the join
  const dc3 = sim.servers.filter((s) => s.dc === "dc3");
  const rest = sim.servers.filter((s) => s.dc !== "dc3");
  const since = sim.clock.monotonic();
  sim.setGateway("dc3", false);
  const detected = await sim.run(DETECTION_BOUND_MS, () => seesFailed(sim, rest, dc3) && seesFailed(sim, dc3, rest));
  expect(detected, "both sides see the other failed").toBe(true);
  const detectedMs = sim.clock.monotonic() - since;
  const during = sim.failures(since);
  expect(sameSide(during), "no failure between servers that can still reach each other").toEqual([]);

  sim.setGateway("dc3", true);
  const back = sim.clock.monotonic();
  expect(await sim.run(RECONVERGE_BOUND_MS, () => sim.allAlive()), "reconverged").toBe(true);
  const reconvergedMs = sim.clock.monotonic() - back;
  const settled = sim.clock.monotonic();
  await sim.run(2 * W.pushPullIntervalMs);
  expect(sim.failures(settled), "stable after reconverging").toEqual([]);
  expect(sim.allAlive()).toBe(true);
  const verdicts = new Set(during.filter((f) => behindDc3(f.viewer) !== behindDc3(f.member)).map((f) => `${f.viewer} ${f.member}`));
  const relayed = sameSide(sim.failures(back));
  const otherSide = (f: FailedEvent) => sim.servers.some((s) => behindDc3(s.name) !== behindDc3(f.member) && verdicts.has(`${s.name} ${f.member}`));
  expect(relayed.filter((f) => !otherSide(f)), "same-side failures after the heal are relayed verdicts of the other side").toEqual([]);
  return { detectedMs, reconvergedMs, relayed: relayed.length };
}

describe("three datacenters' WAN pools through simulated mesh gateways only", () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}: dc2 and dc3 join *.dc1/192.0.2.2; every server sees all ${MEMBERS} alive within ${JOIN_BOUND_MS / 1000} s, and stays so`, async () => {
      // What the gateways carry: whole gossip packets, each between two different datacenters.
      const crossings = new Map<string, number>();
      const onPacket = (from: string, to: string, payload: Uint8Array) => {
        const key = `${from}->${to} ${decodePacket(payload).length > 0}`;
        crossings.set(key, (crossings.get(key) ?? 0) + 1);
      };
      await withSim(seed, async (sim) => {
        const ms = await convergeAndHold(sim, seed);
        // Every datacenter talked to the others, and only through the gateways (the network blocks the rest).
        for (const s of sim.servers) {
          const st = s.transport.stats();
          expect(st.gatewayPacketsSent, s.name).toBeGreaterThan(0);
          expect(st.inboundPackets, s.name).toBeGreaterThan(0);
          expect(st.gatewayPacketErrors, s.name).toBe(0);
        }
        for (const gw of sim.gateways.values()) expect(gw.counters.framesRelayed, gw.dc).toBeGreaterThan(0);
        const pairs = ["dc1->dc2", "dc1->dc3", "dc2->dc1", "dc2->dc3", "dc3->dc1", "dc3->dc2"];
        expect([...crossings.keys()].sort()).toEqual(pairs.map((p) => `${p} true`));
        console.log(`wanfed sim seed ${seed}: all ${MEMBERS} alive everywhere after ${ms} ms`);
      }, { onPacket });
    }, 20_000);

    test(`seed ${seed}: 10% and 20% loss on the gateway links for 5 minutes: suspicions are refuted, nobody is marked failed`, async () => {
      const report: string[] = [];
      let failedProbes = 0;
      for (const loss of [0.1, 0.2]) {
        await withSim(seed, async (sim) => {
          const r = await lossRun(sim, seed, loss);
          failedProbes += r.suspicions + r.streamOnly;
          report.push(`${loss * 100}%: ${r.lost}/${r.sent} packets lost, ${r.streamOnly} probes answered only by the stream ping, ${r.suspicions} suspicions, 0 failed`);
        });
      }
      // The loss is enough to fail packet probes (so "never failed" means the stream ping or a refutation saved each).
      expect(failedProbes).toBeGreaterThan(0);
      console.log(`wanfed sim seed ${seed}, loss: ${report.join("; ")}`);
    }, 20_000);

    test(`seed ${seed}: dc3's gateway flaps 3 times for one probe interval (${FLAP_MS / 1000} s): nobody is declared dead`, async () => {
      await withSim(seed, async (sim) => {
        await converge(sim, seed);
        const r = await flap(sim, seed, FLAP_MS, 3, FLAP_GAP_MS);
        expect(r.failures).toEqual([]);
        expect(sim.allAlive()).toBe(true);
        const gw = sim.gateways.get("dc3")!;
        expect(gw.counters.resets + gw.counters.refusedDials, "the flaps cut something").toBeGreaterThan(0);
        console.log(`wanfed sim seed ${seed}, flaps: ${r.suspicions} suspicions, all refuted; dc3 gateway ${JSON.stringify(gw.counters)}`);
      });
    }, 20_000);

    test(`seed ${seed}: dc3's gateway down until dc3 is declared failed (within ${DETECTION_BOUND_MS / 1000} s); back, all alive within ${RECONVERGE_BOUND_MS / 1000} s`, async () => {
      await withSim(seed, async (sim) => {
        const r = await outage(sim, seed);
        console.log(
          `wanfed sim seed ${seed}, outage: both sides saw the other failed after ${r.detectedMs} ms; all alive ${r.reconvergedMs} ms ` +
            `after the gateway returned (${r.relayed} relayed verdicts refuted on the way)`,
        );
      });
    }, 20_000);
  }

  test("the same seed gives the same run", async () => {
    const trace = async () => {
      let out = "";
      await withSim(SEEDS[0]!, async (sim) => {
        await converge(sim, SEEDS[0]!);
        sim.setLoss(0.2);
        await sim.run(60_000);
        out = JSON.stringify([sim.servers.map((s) => [s.events, s.transport.stats()]), [...sim.gateways.values()].map((g) => g.counters)]);
      });
      return out;
    };
    expect(await trace()).toBe(await trace());
  }, 20_000);
});

/** Messages dropped because they were meant for another member (a ping naming someone else), summed over every server. */
const misdelivered = (sim: WanfedSim) => sim.servers.reduce((n, s) => n + s.pool.stats().gossip.memberlist.rejectedMessages, 0);

describe("datacenters that use the same private addresses (server i of each at 10.0.0.<i>:8302)", () => {
  for (const seed of SEEDS) {
    test(`seed ${seed}: the member name routes every packet to the right datacenter; all ${MEMBERS} alive and stay so`, async () => {
      await withSim(seed, async (sim) => {
        await convergeAndHold(sim, seed);
        expect(misdelivered(sim)).toBe(0);
        for (const s of sim.servers) expect(s.transport.stats().gatewayPacketsSent, s.name).toBeGreaterThan(0);
      }, { sharedAddresses: true });
    }, 20_000);
  }

  test("control: routed by address alone, servers of other datacenters are mistaken for local ones and never all seen alive", async () => {
    await withSim(SEEDS[0]!, async (sim) => {
      void joinAll(sim, seededRng(SEEDS[0]! ^ 0x101));
      expect(await sim.run(JOIN_BOUND_MS, () => sim.allAlive())).toBe(false);
      expect(misdelivered(sim)).toBeGreaterThan(0);
    }, { sharedAddresses: true, dropNames: true });
  }, 20_000);
});

const quantiles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${at(1)} ms`;
};

describe.if(SWEEP > 0)(`sweep over seeds 1..${SWEEP} (WANFED_SIM_SWEEP)`, () => {
  const seeds = Array.from({ length: SWEEP }, (_, i) => i + 1);
  const each = async (fn: (sim: WanfedSim, seed: number) => Promise<void>) => {
    for (const seed of seeds) await withSim(seed, (sim) => fn(sim, seed));
  };

  test("join, loss, outage: the bounds hold on every seed", async () => {
    const joins: number[] = [], detected: number[] = [], reconverged: number[] = [];
    let relayed = 0, withRelayed = 0;
    const raised = { 0.1: 0, 0.2: 0 };
    await each(async (sim, seed) => void joins.push((await converge(sim, seed)).ms));
    for (const loss of [0.1, 0.2] as const) await each(async (sim, seed) => void (raised[loss] += (await lossRun(sim, seed, loss)).suspicions));
    await each(async (sim, seed) => {
      const r = await outage(sim, seed);
      detected.push(r.detectedMs);
      reconverged.push(r.reconvergedMs);
      relayed += r.relayed;
      if (r.relayed > 0) withRelayed++;
    });
    console.log(`wanfed sweep, ${SWEEP} seeds:\n  join: ${quantiles(joins)}\n  loss: 10% ${raised[0.1]} suspicions, 20% ${raised[0.2]}, no failure` +
      `\n  outage: detected ${quantiles(detected)}; reconverged ${quantiles(reconverged)}; ${relayed} relayed verdicts in ${withRelayed} runs`);
  }, 3_600_000);

  test("flaps: runs with a false death per flap length; none for one probe interval", async () => {
    const rows: string[] = [];
    const shapes = [[FLAP_MS, 3], [FLAP_MS, 1], [2 * FLAP_MS, 1], [3 * FLAP_MS, 1], [4 * FLAP_MS, 1], [6 * FLAP_MS, 1]] as const;
    for (const [downMs, flaps] of shapes) {
      let deaths = 0, suspected = 0;
      await each(async (sim, seed) => {
        await converge(sim, seed);
        const r = await flap(sim, seed, downMs, flaps, FLAP_GAP_MS);
        if (downMs === FLAP_MS) expect(r.failures).toEqual([]);
        if (r.failures.length > 0) deaths++;
        if (r.suspicions > 0) suspected++;
      });
      rows.push(`${flaps} x ${downMs / 1000} s down: ${deaths} runs with a false death, ${suspected} with suspicions`);
    }
    console.log(`wanfed flap sweep, ${SWEEP} seeds:\n  ${rows.join("\n  ")}`);
  }, 3_600_000);
});
