/**
 * Seeded simulations of serf queries and cluster-wide key rotation (serf_sim.ts). Every failure names
 * its seed; replay one with `SERF_SEED=<n> bun test test/sim/serf_query`.
 */
import { describe, expect, test } from "bun:test";
import { seededRng } from "../../src/platform/index.ts";
import { GossipKey, Keyring, LAN_PROFILE, encodeQueryResponse } from "../../src/membership/index.ts";
import { convergedCluster as cluster, replaying, seeds, withSeed, type SerfSim, type SimMember, type SimQuery } from "./serf_sim.ts";

const names = (n: number) => Array.from({ length: n }, (_, i) => `n${i}`);
const text = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array) => new TextDecoder().decode(b);

/** Makes every member answer user queries with `<name>:<payload>`, as a pool subscriber would. */
function autoRespond(sim: SerfSim): () => void {
  const answered = new Map<SimMember, number>();
  return () => {
    for (const m of sim.members.values()) {
      const done = answered.get(m) ?? 0;
      for (const q of m.incoming.slice(done)) if (m.up) sim.respond(m.name, q, text(`${m.name}:${str(q.payload)}`));
      answered.set(m, m.incoming.length);
    }
  };
}

/** Runs until the query closes, answering user queries on the way. */
function runQuery(sim: SerfSim, closed: () => boolean, answer: () => void, maxMs = 30_000): void {
  const end = sim.now + maxMs;
  while (!closed() && sim.now < end) {
    answer();
    sim.runFor(5);
  }
  expect(closed(), "query closed").toBe(true);
}

/** Members that received query `q` (at most once each, checked by the callers). */
const reachedBy = (sim: SerfSim, q: SimQuery) => [...sim.members.values()].filter((m) => m.incoming.some((x) => x.ltime === q.ltime && x.id === q.id)).map((m) => m.name).sort();

describe("serf queries in simulation", () => {
  // A query travels by gossip only, as in serf: each member that has it sends it retransmit-limit times
  // (4 * ceil(log10(8 + 1)) = 4 here), each time to a random member, and push-pull carries no queries. So
  // in a lossless 8-member cluster it misses a member in about 5% of runs ((4/7 * 6/7)^7 per member):
  // which members it reaches depends on the random sequence, not whether what it does is right (seed 13
  // below is such a run as the sim is wired now: n4 is never picked by any of the 7 others' 4 sends).
  for (const seed of seeds([11, 12, 13])) {
    test(`seed ${seed}: a query is processed at most once per member; every member it reached acks and answers once`, () => withSeed(seed, () => {
      const sim = cluster(seed, 8);
      const answer = autoRespond(sim);
      const q = sim.query("n3", "ping-app", text("hi"), { requestAck: true });
      const started = sim.now;
      runQuery(sim, () => q.closed, answer);
      const reached = reachedBy(sim, q);
      expect(reached, "the originator processes its own query").toContain("n3");
      for (const m of sim.members.values()) {
        expect(m.incoming.filter((x) => x.ltime === q.ltime && x.id === q.id).length, `${m.name} saw it at most once`).toBeLessThanOrEqual(1);
        expect(m.serf.stats.queries.queries).toBe(reached.includes(m.name) ? 1 : 0);
      }
      expect([...q.acks].sort()).toEqual(reached);
      expect(q.responses.map((r) => str(r.payload)).sort()).toEqual(reached.map((n) => `${n}:hi`));
      // Re-gossip means members heard it several times (each one reached sends it 4 times, losslessly): every copy after the first was dropped.
      const dups = [...sim.members.values()].reduce((s, m) => s + m.serf.stats.queries.duplicateQueries, 0);
      expect(dups).toBeGreaterThan(0);
      // It stays open for the default timeout: 200 ms gossip * 16 * ceil(log10(8 + 1)) = 3200 ms.
      expect(sim.member("n3").serf.defaultQueryTimeoutMs()).toBe(LAN_PROFILE.gossipIntervalMs * 16);
      expect(sim.now - started).toBeGreaterThanOrEqual(3200);
      expect(sim.now - started).toBeLessThan(3300);
    }));
  }

  test("a query reaches every member of a lossless 8-member cluster in nearly every run, and long before its timeout, 200 seeds", () => {
    const seedList = seeds(Array.from({ length: 200 }, (_, i) => 1000 + i));
    const missed: string[] = [];
    for (const seed of seedList) {
      withSeed(seed, () => {
        const sim = cluster(seed, 8);
        const q = sim.query("n3", "spread", text("x"));
        const started = sim.now;
        // Gossip is over (every retransmit spent) within a few rounds, a fraction of the 3200 ms timeout:
        // a longer timeout would not reach more members.
        const quiet = sim.runUntil(() => [...sim.members.values()].every((m) => m.ml.pendingBroadcasts === 0), 3200, 5);
        expect(quiet, "the query's gossip ended before its timeout").toBeDefined();
        expect(quiet! - started).toBeLessThan(1600);
        runQuery(sim, () => q.closed, () => {});
        const reached = reachedBy(sim, q);
        if (reached.length < 8) missed.push(`seed ${seed}: ${names(8).filter((n) => !reached.includes(n)).join(",")}`);
        expect(reached.length, "a member or two missed at most").toBeGreaterThanOrEqual(6);
      });
    }
    // About 5% expected (see above); fail only well beyond that, naming the runs.
    if (!replaying) expect(missed.length, `runs with a member the query missed: ${missed.join("; ")}`).toBeLessThanOrEqual(20);
  });

  test("a repeated response from one member counts once; a response after the deadline is dropped", () => withSeed(21, () => {
    const sim = cluster(21, 3);
    const q = sim.query("n0", "x", text("p"), { timeoutMs: 2000 });
    sim.runUntil(() => sim.member("n2").incoming.length === 1, 1000);
    const incoming = sim.member("n2").incoming[0]!;
    sim.respond("n2", incoming, text("one"));
    expect(() => sim.respond("n2", incoming, text("two"))).toThrow("response already sent");
    // A copy of the same response message arriving again (duplicated by the network) is ignored.
    const n0 = sim.member("n0");
    sim.runUntil(() => q.responses.length === 1, 1000);
    const before = n0.serf.stats.queries.duplicateResponses;
    sim.member("n2").ml.sendUser("n0", "dup", encodeResponseFor(q, "n2")); // leaves with n2's next tick
    sim.runFor(500);
    expect(q.responses.map((r) => r.from)).toEqual(["n2"]);
    expect(n0.serf.stats.queries.duplicateResponses).toBe(before + 1);
    runQuery(sim, () => q.closed, () => {});
    sim.runFor(100); // past n1's own deadline too (it saw the query a few ms after it started)
    const late = sim.member("n1").incoming[0]!;
    expect(() => sim.respond("n1", late, text("late"))).toThrow("response is past the deadline");
  }));

  for (const seed of seeds([31, 32])) {
    test(`seed ${seed}: a dead member does not answer; the query times out with partial results`, () => withSeed(seed, () => {
      const sim = cluster(seed, 6);
      sim.crash("n4");
      const answer = autoRespond(sim);
      const q = sim.query("n0", "who", text("?"), { requestAck: true, timeoutMs: 2000 });
      const t0 = sim.now;
      runQuery(sim, () => q.closed, answer);
      expect(sim.now - t0).toBeGreaterThanOrEqual(2000);
      expect(q.responses.map((r) => r.from).sort()).toEqual(["n0", "n1", "n2", "n3", "n5"]);
      expect([...q.acks].sort()).toEqual(["n0", "n1", "n2", "n3", "n5"]);
    }));
  }

  test("filters: only the named nodes, or nodes whose tag matches, process a query", () => withSeed(41, () => {
    const sim = cluster(41, 5);
    const answer = autoRespond(sim);
    const q = sim.query("n0", "f", text("x"), { filterNodes: ["n1", "n3"] });
    runQuery(sim, () => q.closed, answer);
    expect(q.responses.map((r) => r.from).sort()).toEqual(["n1", "n3"]);
    const t = sim.query("n0", "g", text("x"), { filterTags: { role: "^nod" } });
    runQuery(sim, () => t.closed, answer);
    expect(t.responses.length).toBe(5);
    const none = sim.query("n0", "h", text("x"), { filterTags: { role: "^consul$" } });
    runQuery(sim, () => none.closed, answer);
    expect(none.responses.length).toBe(0);
  }));

  test("with 10% packet loss most members answer (the query is re-gossiped), 20 seeds", () => {
    let answered = 0, total = 0;
    for (const seed of seeds(Array.from({ length: 20 }, (_, i) => 500 + i))) {
      withSeed(seed, () => {
        const sim = cluster(seed, 10, { loss: 0.1 });
        const answer = autoRespond(sim);
        const q = sim.query("n0", "lossy", text("x"));
        runQuery(sim, () => q.closed, answer);
        const reached = [...sim.members.values()].filter((m) => m.incoming.some((x) => x.id === q.id)).length;
        expect(reached, "the query reached every member despite loss").toBe(10);
        expect(q.responses.length, "most answered").toBeGreaterThanOrEqual(7);
        answered += q.responses.length;
        total += 10;
      });
    }
    // A response is one datagram, so about 10% of them are lost (the originator's own never is): a rate over
    // the 20 runs, not a bound for any single one (so not checked when replaying one seed).
    if (!replaying) expect(answered / total).toBeGreaterThan(0.8);
  });
});

describe("key rotation in simulation", () => {
  for (const seed of seeds([71, 72, 73])) {
    test(`seed ${seed}: install K2 on 5 members, use it, remove K1; nobody is ever declared failed; a K1-only member cannot talk`, () => withSeed(seed, () => {
      const k1 = seededKey(seed, 1), k2 = seededKey(seed, 2);
      const sim = cluster(seed, 5, { keyring: () => new Keyring(k1) });
      const all = [...sim.members.values()];

      const installed = sim.keyOperation("n1", "install", k2.toBase64());
      expect(installed).toMatchObject({ numNodes: 5, numResp: 5, numErr: 0 });
      expect(installed.error).toBeUndefined();
      for (const m of all) expect(m.keyring!.exportKeys()).toEqual([k1.toBase64(), k2.toBase64()]);
      sim.runFor(3000);

      const listed = sim.keyOperation("n4", "list");
      expect(listed.keys).toEqual(sortedRecord({ [k1.toBase64()]: 5, [k2.toBase64()]: 5 }));
      expect(listed.primaryKeys).toEqual({ [k1.toBase64()]: 5 });

      expect(sim.keyOperation("n2", "use", k2.toBase64()).error).toBeUndefined();
      for (const m of all) expect(m.keyring!.primary.equals(k2)).toBe(true);
      sim.runFor(3000);
      expect(sim.keyOperation("n0", "remove", k1.toBase64()).error).toBeUndefined();
      for (const m of all) expect(m.keyring!.exportKeys()).toEqual([k2.toBase64()]);
      expect(all.map((m) => m.persisted)).toEqual([3, 3, 3, 3, 3]);

      // Keep running well past several suspicion timeouts: still one healthy cluster.
      sim.runFor(20_000);
      expect(sim.failures()).toEqual([]);
      expect(sim.converged()).toBe(true);
      const after = sim.keyOperation("n3", "list");
      expect(after).toMatchObject({ numNodes: 5, numResp: 5, keys: { [k2.toBase64()]: 5 } });

      // A member that only has K1 cannot join: nobody can read it, and it cannot read them.
      const stale = sim.add("stale", new Keyring(k1));
      sim.join("stale", ["n0"]);
      sim.runFor(10_000);
      expect(stale.serf.members().map((m) => m.name)).toEqual(["stale"]);
      for (const m of all) expect(m.serf.member("stale")).toBeUndefined();
      expect(sim.member("n0").dropped).toBeGreaterThan(0);
    }));
  }
});

function sortedRecord(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** A 32-byte key drawn from the seed (different for each `n`). */
function seededKey(seed: number, n: number): GossipKey {
  return GossipKey.fromBytes(seededRng(seed * 100 + n).bytes(32));
}

/** The response message `from` would send for `q` (to replay a network duplicate). */
function encodeResponseFor(q: SimQuery, from: string): Uint8Array {
  return encodeQueryResponse({ ltime: q.ltime, id: q.id, from, ack: false, payload: text("one") });
}
