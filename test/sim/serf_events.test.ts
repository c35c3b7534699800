/**
 * Seeded simulations of serf user events (serf_sim.ts): gossip, then push-pull anti-entropy of the recent
 * events for the members gossip missed. Every failure names its seed; replay one with
 * `SERF_SEED=<n> bun test test/sim/serf_events`.
 */
import { describe, expect, test } from "bun:test";
import { LAN_PROFILE } from "../../src/membership/index.ts";
import { convergedCluster, seeds, withSeed, type SerfSim } from "./serf_sim.ts";

const text = (s: string) => new TextEncoder().encode(s);
/** How many times `member` delivered user event `name`. */
const delivered = (sim: SerfSim, member: string, name: string) =>
  sim.member(member).events.filter((e) => e.event.type === "user" && e.event.name === name).length;
const lacking = (sim: SerfSim, name: string) => [...sim.members.keys()].filter((m) => delivered(sim, m, name) === 0);
/** Gossip of everything queued is over: every retransmit was spent. */
const gossipDone = (sim: SerfSim) => [...sim.members.values()].every((m) => m.ml.pendingBroadcasts === 0);
const PUSH_PULL_MS = LAN_PROFILE.pushPullIntervalMs;
/**
 * Every member push-pulls with a random other one each interval, so a member that alone lacks an event has it
 * one interval later. When gossip missed two (rare), one may pick the other; two intervals make that negligible.
 */
const PUSH_PULL_BOUND_MS = 2 * PUSH_PULL_MS + 1000;

describe("user events in simulation", () => {
  for (const seed of seeds([61, 62, 63])) {
    test(`seed ${seed}: a member the event's gossip could not reach gets it from a push-pull, once`, () => withSeed(seed, () => {
      const sim = convergedCluster(seed, 8);
      // n4 hears nothing while the event is gossiped (packets and streams both ways are dropped).
      sim.blocked = (a, b) => a === "n4" || b === "n4";
      sim.userEvent("n0", "deploy", text("v2"));
      // Gossip ends (every retransmit spent, n4's wasted) within a few rounds; it may have missed another member too.
      expect(sim.runUntil(() => gossipDone(sim), 3000), "gossip ended").toBeDefined();
      expect(lacking(sim, "deploy")).toContain("n4");
      sim.blocked = () => false; // well before n4 could be declared failed (suspicion takes >= 4 s here)
      const got = sim.runUntil(() => lacking(sim, "deploy").length === 0, PUSH_PULL_BOUND_MS);
      expect(got, "push-pulls brought it to every member that lacked it").toBeDefined();
      sim.runFor(2 * PUSH_PULL_MS);
      for (const m of sim.members.keys()) expect(delivered(sim, m, "deploy"), `${m} delivered it once`).toBe(1);
      const ev = sim.member("n4").events.find((e) => e.event.type === "user")!.event;
      expect(ev).toMatchObject({ type: "user", name: "deploy", payload: text("v2") });
      expect(sim.failures()).toEqual([]);
    }));
  }

  test("every user event reaches every member of a lossless cluster within two push-pull intervals, 100 seeds", () => {
    for (const seed of seeds(Array.from({ length: 100 }, (_, i) => 2000 + i))) {
      withSeed(seed, () => {
        const sim = convergedCluster(seed, 8);
        sim.userEvent("n3", "ev", text("x"));
        sim.runUntil(() => gossipDone(sim), 3000);
        const missedByGossip = lacking(sim, "ev");
        sim.runFor(PUSH_PULL_BOUND_MS);
        expect(lacking(sim, "ev"), `members still lacking it (gossip alone missed ${missedByGossip.join(",") || "none"})`).toEqual([]);
        for (const m of sim.members.keys()) expect(delivered(sim, m, "ev"), `${m} delivered it once`).toBe(1);
      });
    }
  }, 120_000); // about 5 s alone: past bun's 5 s default on a loaded machine

  for (const seed of seeds([81, 82])) {
    test(`seed ${seed}: a member that joins later does not replay older events (serf Join ignoreOld), but gets newer ones`, () => withSeed(seed, () => {
      const sim = convergedCluster(seed, 4);
      sim.userEvent("n1", "old", text("1"));
      sim.runFor(PUSH_PULL_BOUND_MS);
      expect(lacking(sim, "old")).toEqual([]);

      sim.add("late");
      sim.join("late", ["n0"]);
      // Control: one joining as serf's reconnect does (no ignoreOld) gets the events it missed.
      sim.add("replay");
      sim.join("replay", ["n0"], { ignoreOld: false });
      sim.runFor(3 * PUSH_PULL_MS); // several push-pulls, each carrying "old"
      expect(sim.converged()).toBe(true);
      expect(delivered(sim, "late", "old")).toBe(0);
      expect(delivered(sim, "replay", "old")).toBe(1);
      expect(sim.member("late").serf.stats.eventTime).toBeGreaterThan(1); // it did witness the cluster's event clock

      sim.userEvent("n2", "new", text("2"));
      sim.runFor(PUSH_PULL_BOUND_MS);
      expect(lacking(sim, "new")).toEqual([]);
      expect(delivered(sim, "late", "new")).toBe(1);
    }));
  }
});
