import { describe, expect, test } from "bun:test";
import { serverStats } from "./stats.ts";

const status = (over: object = {}) => ({
  id: "a", leader: "a", role: "Leader" as const, term: 3, commit: 40, applied: 39, lastIndex: 41,
  config: { voters: ["a", "b", "c"], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false }, lastLeaderContactMs: 0, ...over,
});

describe("server stats", () => {
  test("a leader reports itself as leader, its peers and Raft positions as strings", () => {
    expect(serverStats({ status: status() as never, leaderAddr: "10.0.0.1:8300", bootstrap: false, knownDatacenters: 2 })).toEqual({
      consul: { acl: "disabled", bootstrap: "false", known_datacenters: "2", leader: "true", leader_addr: "10.0.0.1:8300", server: "true" },
      raft: { applied_index: "39", commit_index: "40", last_contact: "0", last_log_index: "41", num_peers: "2", protocol_version: "3", state: "Leader", term: "3" },
    });
  });

  test("a follower reports its last contact, or never", () => {
    const f = serverStats({ status: status({ role: "Follower", leader: "b", lastLeaderContactMs: 12 }) as never, leaderAddr: "10.0.0.2:8300", bootstrap: true, knownDatacenters: 1 });
    expect([f.consul!.leader, f.raft!.state, f.raft!.last_contact, f.consul!.bootstrap]).toEqual(["false", "Follower", "12ms", "true"]);
    expect(serverStats({ status: status({ role: "Follower", lastLeaderContactMs: undefined }) as never, leaderAddr: "", bootstrap: false, knownDatacenters: 1 }).raft!.last_contact).toBe("never");
  });
});
