import { describe, expect, test } from "bun:test";
import { check, gateway, state } from "../model/federation_state_fixtures.test.ts";
import type { FederationState } from "../model/index.ts";
import { antiEntropyDecision, diffFederationStates, statesToPrune } from "./replication_diff.ts";

/** A stored state of `dc` with raft ModifyIndex `mod` (and PrimaryModifyIndex as a secondary keeps it). */
const st = (dc: string, mod: number, pmi = 0): FederationState => state({ Datacenter: dc, ModifyIndex: mod, CreateIndex: 1, PrimaryModifyIndex: pmi });

interface Row {
  readonly name: string;
  readonly local: readonly FederationState[];
  readonly remote: readonly FederationState[];
  readonly last: number;
  readonly remoteIndex: number;
  readonly deletions: readonly string[];
  /** [datacenter, PrimaryModifyIndex] of each update, in order. */
  readonly updates: readonly [string, number][];
  readonly fullResync?: boolean;
}

const ROWS: readonly Row[] = [
  { name: "both empty: nothing", local: [], remote: [], last: 0, remoteIndex: 1, deletions: [], updates: [] },
  { name: "first round: every remote state is created", local: [], remote: [st("dc2", 12), st("dc1", 10)], last: 0, remoteIndex: 12, deletions: [], updates: [["dc1", 10], ["dc2", 12]] },
  { name: "a local state the primary no longer has is deleted", local: [st("dc1", 3, 10), st("dc9", 4, 7)], remote: [st("dc1", 10)], last: 10, remoteIndex: 15, deletions: ["dc9"], updates: [] },
  { name: "a state on both sides changed after lastRemoteIndex is updated", local: [st("dc1", 3, 10), st("dc2", 4, 11)], remote: [st("dc1", 10), st("dc2", 20)], last: 11, remoteIndex: 20, deletions: [], updates: [["dc2", 20]] },
  { name: "a state on both sides at exactly lastRemoteIndex is not rewritten (strictly greater)", local: [st("dc1", 3, 10)], remote: [st("dc1", 10)], last: 10, remoteIndex: 10, deletions: [], updates: [] },
  {
    name: "interleaved: deletions and creations by datacenter order",
    local: [st("a", 1), st("c", 2), st("e", 3)], remote: [st("b", 5), st("c", 6), st("d", 7), st("f", 8)], last: 5, remoteIndex: 8,
    deletions: ["a", "e"], updates: [["b", 5], ["c", 6], ["d", 7], ["f", 8]],
  },
  {
    name: "remote index went backwards (primary rebuilt): lastRemoteIndex counts as 0, every shared state rewritten",
    local: [st("dc1", 30, 50), st("dc2", 31, 60)], remote: [st("dc1", 4), st("dc2", 5)], last: 60, remoteIndex: 5,
    deletions: [], updates: [["dc1", 4], ["dc2", 5]], fullResync: true,
  },
  {
    name: "after an error the runner passes 0: a full resync of shared states without the backwards flag",
    local: [st("dc1", 30, 10)], remote: [st("dc1", 10)], last: 0, remoteIndex: 10, deletions: [], updates: [["dc1", 10]],
  },
  { name: "unsorted inputs are sorted before the walk", local: [st("dc3", 1), st("dc1", 2)], remote: [st("dc2", 9), st("dc1", 3)], last: 3, remoteIndex: 9, deletions: ["dc3"], updates: [["dc2", 9]] },
];

describe("replication merge-walk", () => {
  for (const row of ROWS) {
    test(row.name, () => {
      const d = diffFederationStates(row.local, row.remote, row.last, row.remoteIndex);
      expect(d.deletions).toEqual(row.deletions);
      expect(d.updates.map((u) => [u.Datacenter, u.PrimaryModifyIndex])).toEqual(row.updates);
      expect(d.nextIndex).toBe(row.remoteIndex);
      expect(d.fullResync).toBe(row.fullResync ?? false);
    });
  }

  test("updates are copies of the remote states, only PrimaryModifyIndex changed; inputs untouched", () => {
    const remote = [st("dc2", 20)];
    const local = [st("dc2", 4, 11)];
    const [u] = diffFederationStates(local, remote, 11, 20).updates;
    expect(u).toEqual({ ...remote[0]!, PrimaryModifyIndex: 20 });
    expect(remote[0]!.PrimaryModifyIndex).toBe(0);
    expect(local.map((s) => s.Datacenter)).toEqual(["dc2"]);
  });
});

describe("anti-entropy decision (FederationState.IsSame)", () => {
  const curr = (more: Partial<FederationState> = {}) => ({ Datacenter: "dc2", MeshGateways: [gateway()], ...more });
  const rows: [string, Parameters<typeof antiEntropyDecision>[0], ReturnType<typeof curr>, "skip" | "upsert"][] = [
    ["no stored state: upsert", undefined, curr(), "upsert"],
    ["same gateways: skip", state(), curr(), "skip"],
    ["UpdatedAt and indexes are ignored: skip", state({ UpdatedAt: "2001-01-01T00:00:00Z", ModifyIndex: 999, PrimaryModifyIndex: 3 }), curr(), "skip"],
    ["gateway Raft indexes are ignored: skip", state({ MeshGateways: [gateway({ ModifyIndex: 77 }, { ModifyIndex: 78 })] }), curr(), "skip"],
    ["a gateway's address changed (#10132): upsert", state(), curr({ MeshGateways: [gateway({}, { Address: "10.0.0.2" })] }), "upsert"],
    ["a gateway added: upsert", state(), curr({ MeshGateways: [gateway(), gateway({ Node: "gw2" })] }), "upsert"],
    ["all gateways gone: upsert", state(), curr({ MeshGateways: [] }), "upsert"],
    ["no gateways on both sides (absent vs empty): skip", state({ MeshGateways: undefined }), curr({ MeshGateways: [] }), "skip"],
    ["a check's status changed: upsert", state(), curr({ MeshGateways: [gateway({}, {}, [check({ Status: "critical" })])] }), "upsert"],
    ["the same gateways in another order (Consul does not sort): upsert", state({ MeshGateways: [gateway({ Node: "a" }), gateway({ Node: "b" })] }), curr({ MeshGateways: [gateway({ Node: "b" }), gateway({ Node: "a" })] }), "upsert"],
    ["node meta changed: upsert", state(), curr({ MeshGateways: [gateway({ Meta: { rack: "b" } })] }), "upsert"],
  ];
  for (const [name, prev, c, want] of rows) test(name, () => expect(antiEntropyDecision(prev, c)).toBe(want));
});

describe("primary prune", () => {
  test("states of datacenters the WAN no longer knows, in stored order", () => {
    expect(statesToPrune([st("dc1", 1), st("dc2", 2), st("gone", 3), st("dc3", 4), st("old", 5)], ["dc1", "dc2", "dc3"], "dc1")).toEqual(["gone", "old"]);
  });
  test("names are exact (router.HasDatacenter is a map lookup)", () => {
    expect(statesToPrune([st("DC2", 1)], ["dc2"], "dc1")).toEqual(["DC2"]);
  });
  test("the primary's own state survives an empty known list", () => {
    expect(statesToPrune([st("dc1", 1), st("dc2", 2)], [], "dc1")).toEqual(["dc2"]);
  });
});
