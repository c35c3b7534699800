/**
 * Seeded simulations of graceful leaves that gossip missed (serf_sim.ts): serf's push-pull carries its member
 * clock, each member's status Lamport time and the members that left (serf delegate LocalState /
 * MergeRemoteState), so a member that heard none of a leave's gossip still ends with the leaver "left", not
 * "failed"; and a stale push-pull does not mark a member that came back as leaving. Every failure names its
 * seed; replay one with `SERF_SEED=<n> bun test test/sim/serf_leave`.
 */
import { describe, expect, test } from "bun:test";
import { LAN_PROFILE, type PushPullMsg, type SerfEvent } from "../../src/membership/index.ts";
import { carriesLeaveOf, convergedCluster, seeds, withSeed, type SerfSim } from "./serf_sim.ts";

const PUSH_PULL_MS = LAN_PROFILE.pushPullIntervalMs;
/** As in serf_events.test.ts: every member push-pulls each interval; two intervals cover a member that needs a second try. */
const PUSH_PULL_BOUND_MS = 2 * PUSH_PULL_MS + 1000;

const statusOf = (sim: SerfSim, observer: string, member: string) => sim.member(observer).serf.member(member)?.status;
/** `observer:status` of `member` for every up member but `member`. */
const viewsOf = (sim: SerfSim, member: string) =>
  [...sim.members.values()].filter((m) => m.up && m.name !== member).map((m) => `${m.name}:${statusOf(sim, m.name, member)}`);
/** The member events `observer` emitted about `member`, as `type@ms`. */
const eventsAbout = (sim: SerfSim, observer: string, member: string) =>
  sim.member(observer).events.filter((e): e is { at: number; event: Extract<SerfEvent, { member: unknown }> } => e.event.type !== "user" && e.event.member.name === member)
    .map((e) => `${e.event.type}@${e.at}`);

/**
 * `leaver` leaves gracefully while `deaf` hears none of it: every packet to `deaf` carrying the leave intent or
 * the core's leave message is dropped, and its push-pulls fail, until its own failure detection declared the
 * leaver failed. Then the network heals. Returns the 8-member cluster `settleMs` later.
 */
function missedLeave(seed: number, settleMs: number, leaver = "n3", deaf = "n4"): SerfSim {
  const sim = convergedCluster(seed, 8);
  sim.dropPacket = (_from, to, plain) => to === deaf && carriesLeaveOf(plain, leaver);
  sim.streamsBlocked = (a, b) => a === deaf || b === deaf;
  sim.leave(leaver);
  const others = [...sim.members.keys()].filter((n) => n !== leaver && n !== deaf);
  expect(sim.runUntil(() => others.every((o) => statusOf(sim, o, leaver) === "left"), 10_000), "the others saw the leave").toBeDefined();
  expect(sim.runUntil(() => !sim.member(leaver).up, 10_000), "the leaver stopped after its leave").toBeDefined();
  expect(sim.runUntil(() => statusOf(sim, deaf, leaver) === "failed", 60_000), `${deaf} declared ${leaver} failed`).toBeDefined();
  sim.dropPacket = () => false;
  sim.streamsBlocked = () => false;
  sim.runFor(settleMs);
  return sim;
}

describe("graceful leaves in simulation", () => {
  for (const seed of seeds([71, 72, 73])) {
    test(`seed ${seed}: a member that missed every leave message learns from a push-pull that the leaver left, not failed`, () => withSeed(seed, () => {
      const sim = missedLeave(seed, PUSH_PULL_BOUND_MS);
      const seen = eventsAbout(sim, "n4", "n3");
      expect(viewsOf(sim, "n3"), `n4 saw ${seen.join(", ")}`).toEqual(["n0:left", "n1:left", "n2:left", "n4:left", "n5:left", "n6:left", "n7:left"]);
      // serf handleNodeLeaveIntent on a failed member: failed -> left with a member-leave, once.
      expect(seen.map((e) => e.split("@")[0])).toEqual(["member-join", "member-failed", "member-leave"]);
      expect(sim.member("n4").serf.stats.badRemoteStates).toBe(0);
    }));
  }

  test("every member ends with the leaver left, whoever missed the leave, 100 seeds", () => {
    for (const seed of seeds(Array.from({ length: 100 }, (_, i) => 3000 + i))) {
      withSeed(seed, () => {
        const leaver = `n${seed % 8}`, deaf = `n${(seed + 1 + (Math.floor(seed / 8) % 7)) % 8}`;
        const sim = missedLeave(seed, PUSH_PULL_BOUND_MS, leaver, deaf);
        const seen = eventsAbout(sim, deaf, leaver);
        expect(viewsOf(sim, leaver).filter((v) => !v.endsWith(":left")), `${deaf} missed ${leaver}'s leave and saw ${seen.join(", ")}`).toEqual([]);
        expect(seen.filter((e) => e.startsWith("member-leave")).length, "one member-leave").toBe(1);
      });
    }
  }, 120_000); // seconds alone, more on a loaded machine

  for (const seed of seeds([91, 92])) {
    test(`seed ${seed}: a member that left and came back stays alive everywhere, even when an old push-pull is replayed`, () => withSeed(seed, () => {
      const sim = convergedCluster(seed, 8);
      sim.leave("n3");
      expect(sim.runUntil(() => !sim.member("n3").up && viewsOf(sim, "n3").every((v) => v.endsWith(":left")), 20_000), "n3 left").toBeDefined();
      // Keep a push-pull sent while n3 was gone: its records say n3 left.
      let old: { from: string; msg: PushPullMsg } | undefined;
      sim.tapStreams = (from, _to, msg) => void (old ??= { from, msg });
      expect(sim.runUntil(() => old !== undefined, PUSH_PULL_BOUND_MS), "a push-pull was sent").toBeDefined();
      sim.tapStreams = () => {};
      expect(old!.msg.nodes.find((n) => n.name === "n3")?.state).toBe("left");

      const back = sim.now;
      sim.add("n3"); // a restart: fresh state, Lamport clocks from 1
      sim.join("n3", ["n0"]);
      expect(sim.runUntil(() => sim.converged(), 30_000), "n3 is alive everywhere again").toBeDefined();
      for (const name of sim.members.keys()) sim.replayPushPull(old!.from, name, old!.msg);
      expect(viewsOf(sim, "n3").filter((v) => !v.endsWith(":alive")), "right after the replay").toEqual([]);
      sim.runFor(2 * PUSH_PULL_MS);
      expect(viewsOf(sim, "n3").filter((v) => !v.endsWith(":alive"))).toEqual([]);
      expect(sim.member("n3").serf.member("n3")?.status).toBe("alive");
      for (const m of sim.members.values()) {
        const after = m.events.filter((e) => e.at >= back && e.event.type !== "user" && e.event.member.name === "n3").map((e) => e.event.type);
        expect(after, `${m.name}'s events about n3 after it came back`).toEqual(["member-join"]);
      }
    }));
  }
});
