import { describe, expect, test } from "bun:test";
import { decideBootstrap, reconcileServers, type AutopilotPolicy, type SeenServer } from "./raft_membership.ts";

const s = (id: string, status: SeenServer["status"] = "alive", expectN = 3): SeenServer => ({ id, name: `n-${id}`, rpcAddr: `10.0.0.${id}:8300`, expect: expectN, status });

describe("decideBootstrap", () => {
  test("waits until the expected number of servers is alive, then bootstraps with all of them", () => {
    expect(decideBootstrap(3, "1", [s("1"), s("2")])).toEqual({ kind: "wait", reason: "2 of 3 expected servers seen" });
    expect(decideBootstrap(3, "1", [s("1"), s("2"), s("3", "failed")]).kind).toBe("wait");
    expect(decideBootstrap(3, "2", [s("3"), s("1"), s("2")])).toEqual({ kind: "bootstrap", voters: ["1", "2", "3"] });
  });

  test("every server decides the same voters from the same view", () => {
    const view = [s("b"), s("a"), s("c")];
    const decisions = ["a", "b", "c"].map((id) => decideBootstrap(3, id, view));
    expect(new Set(decisions.map((d) => JSON.stringify(d))).size).toBe(1);
  });

  test("refuses when servers disagree on bootstrap_expect; waits without it or before seeing itself", () => {
    expect(decideBootstrap(3, "1", [s("1"), s("2", "alive", 5), s("3")])).toMatchObject({ kind: "refuse", reason: expect.stringContaining("n-2 expects 5") });
    expect(decideBootstrap(0, "1", [s("1")]).kind).toBe("wait");
    expect(decideBootstrap(1, "9", [s("1", "alive", 1)]).kind).toBe("wait");
  });
});

describe("reconcileServers", () => {
  test("adds alive servers missing from the configuration", () => {
    expect(reconcileServers(["1", "2", "3"], [], [s("1"), s("2"), s("3"), s("4")], new Map(), 0, 1000)).toEqual([{ kind: "add", id: "4", name: "n-4" }]);
  });

  test("removes a server that left, and a failed one only after the grace period", () => {
    const seen = [s("1"), s("2"), s("3"), s("4", "left"), s("5", "failed")];
    const voters = ["1", "2", "3", "4", "5"];
    expect(reconcileServers(voters, [], seen, new Map([["5", 0]]), 500, 1000)).toEqual([{ kind: "remove", id: "4", name: "n-4", reason: "left the cluster" }]);
    const after = reconcileServers(["1", "2", "3", "5"], [], seen.filter((x) => x.id !== "4"), new Map([["5", 0]]), 1500, 1000);
    expect(after).toEqual([{ kind: "remove", id: "5", name: "n-5", reason: "failed for more than 1000 ms" }]);
    expect(reconcileServers(["1", "2", "3", "5"], [], seen, new Map([["5", 1000]]), 1500, 1000)).toEqual([]);
  });

  test("never removes a voter when the healthy voters left would not be a majority", () => {
    // 3 voters, two of them failed: removing one would leave 1 healthy of 2, not a majority.
    const seen = [s("1"), s("2", "failed"), s("3", "failed")];
    expect(reconcileServers(["1", "2", "3"], [], seen, new Map([["2", 0], ["3", 0]]), 10_000, 1000)).toEqual([]);
    // 5 voters, one failed: removing it leaves 4 healthy of 4.
    const five = [s("1"), s("2"), s("3"), s("4"), s("5", "failed")];
    expect(reconcileServers(["1", "2", "3", "4", "5"], [], five, new Map([["5", 0]]), 10_000, 1000)).toHaveLength(1);
  });
});

describe("reconcileServers, ghosts and learners", () => {
  test("a configured server gossip no longer shows is removed after the grace period (e.g. replaced by a new ID)", () => {
    const seen = [s("1"), s("2"), s("3"), s("4")]; // "9" was wiped and came back as "4"
    const voters = ["1", "2", "3", "9"];
    expect(reconcileServers(voters, [], seen, new Map([["9", 0]]), 500, 1000)).toEqual([{ kind: "add", id: "4", name: "n-4" }]);
    expect(reconcileServers(voters, [], seen, new Map([["9", 0]]), 1500, 1000)).toEqual([
      { kind: "add", id: "4", name: "n-4" },
      { kind: "remove", id: "9", name: "9", reason: "not in the gossip pool for more than 1000 ms" },
    ]);
  });

  test("an alive learner is promoted", () => {
    expect(reconcileServers(["1", "2", "3"], ["4"], [s("1"), s("2"), s("3"), s("4")], new Map(), 0, 1000)).toEqual([{ kind: "promote", id: "4", name: "n-4" }]);
  });
});

describe("reconcileServers under autopilot's configuration", () => {
  const policy = (over: Partial<AutopilotPolicy> = {}): AutopilotPolicy => ({ cleanupDeadServers: true, minQuorum: 0, promotable: () => true, ...over });

  test("CleanupDeadServers=false keeps failed and vanished servers; a server that left is still removed", () => {
    const seen = [s("1"), s("2"), s("3"), s("4"), s("5", "failed")];
    const voters = ["1", "2", "3", "4", "5", "9"];
    const failed = new Map([["5", 0], ["9", 0]]);
    expect(reconcileServers(voters, [], seen, failed, 10_000, 1000, policy({ cleanupDeadServers: false }))).toEqual([]);
    expect(reconcileServers(voters, [], [...seen, s("4", "left")].filter((x, i) => i !== 3), failed, 10_000, 1000, policy({ cleanupDeadServers: false })))
      .toEqual([{ kind: "remove", id: "4", name: "n-4", reason: "left the cluster" }]);
    expect(reconcileServers(voters, [], seen, failed, 10_000, 1000, policy())).toEqual([{ kind: "remove", id: "5", name: "n-5", reason: "failed for more than 1000 ms" }]);
  });

  test("MinQuorum: no cleanup that would leave fewer voters than it (Consul's canRemoveServers)", () => {
    const seen = [s("1"), s("2"), s("3"), s("4"), s("5", "failed")];
    const voters = ["1", "2", "3", "4", "5"];
    expect(reconcileServers(voters, [], seen, new Map([["5", 0]]), 10_000, 1000, policy({ minQuorum: 5 }))).toEqual([]);
    expect(reconcileServers(voters, [], seen, new Map([["5", 0]]), 10_000, 1000, policy({ minQuorum: 4 }))).toHaveLength(1);
  });

  test("dead voters are removed only while they are a minority of the voters", () => {
    // 5 voters, 3 dead: more than (5-1)/2, so none is removed even though the healthy two could be a majority of 2.
    const seen = [s("1"), s("2"), s("3", "failed"), s("4", "failed"), s("5", "failed")];
    const failed = new Map([["3", 0], ["4", 0], ["5", 0]]);
    expect(reconcileServers(["1", "2", "3", "4", "5"], [], seen, failed, 10_000, 1000, policy())).toEqual([]);
  });

  test("a learner is promoted only once autopilot calls it stable", () => {
    const seen = [s("1"), s("2"), s("3"), s("4")];
    expect(reconcileServers(["1", "2", "3"], ["4"], seen, new Map(), 0, 1000, policy({ promotable: () => false }))).toEqual([]);
    expect(reconcileServers(["1", "2", "3"], ["4"], seen, new Map(), 0, 1000, policy({ promotable: (id) => id === "4" }))).toEqual([{ kind: "promote", id: "4", name: "n-4" }]);
  });
});
