/**
 * Federation states on a server: written through the same State service apply path every other write
 * takes (what FederationState.Apply and the leader routines use), read through runRead.
 */
import { describe, expect, test } from "bun:test";
import type { ConsensusNode } from "../consensus/index.ts";
import type { FederationState, ReadQuery } from "../model/index.ts";
import { gateway, write } from "../model/federation_state_fixtures.test.ts";
import { silentLogger } from "../platform/index.ts";
import { decodeWire, encodeWire } from "../rpc/index.ts";
import { encodeCommand, WatchSet, type StateCommand, type StateResult } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { createReplicatedState } from "./replicated_state.ts";
import { runRead } from "./run_read.ts";

/** A replicated state whose one-node consensus applies every proposal at once, as a leader would. */
function server() {
  const clock = simClock();
  const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: "dc1", nodeName: "s1" });
  let index = 0;
  rs.attach({
    propose: async (bytes: Uint8Array) => rs.stateMachine.apply(++index, bytes),
    read: async () => {},
    status: () => ({ term: 1, leader: "s1" }),
  } as unknown as ConsensusNode<StateResult>);
  const apply = async (cmd: StateCommand) => decodeWire<StateResult>(await rs.backend.apply(encodeCommand(cmd)));
  const read = (q: ReadQuery) => runRead(rs.store, new WatchSet(), q, { term: () => 1, datacenter: "dc1" });
  return { clock, rs, apply, read };
}

const upsert = (dc: string, more: Parameters<typeof write>[0] = {}): StateCommand =>
  ({ type: "federation-state", op: "upsert", state: write({ Datacenter: dc, ...more }) });

describe("federation states through the State service", () => {
  test("an upsert and a delete go through the apply path and are read back", async () => {
    const s = server();
    expect(await s.apply(upsert("dc2", { PrimaryModifyIndex: 0 }))).toEqual({ type: "ok" });
    expect(await s.apply({ type: "federation-state", op: "upsert", state: write({ Datacenter: "dc3" }), cas: 0 })).toEqual({ type: "cas", ok: true });
    expect(await s.apply(upsert("", {}))).toEqual({ type: "error", error: "missing datacenter on federation state" });
    expect(s.read({ type: "federation-state-get", datacenter: "DC2" })).toEqual({
      index: 2, value: { ...write({ Datacenter: "dc2" }), PrimaryModifyIndex: 1, CreateIndex: 1, ModifyIndex: 1 },
    });
    expect(await s.apply({ type: "federation-state", op: "delete", datacenter: "dc2" })).toEqual({ type: "ok" });
    expect(s.read({ type: "federation-state-get", datacenter: "dc2" })).toEqual({ index: 4, value: null });
    expect((s.read({ type: "federation-state-list" }).value as FederationState[]).map((f) => f.Datacenter)).toEqual(["dc3"]);
  });

  test("mesh gateways by datacenter: only states that have gateways", async () => {
    const s = server();
    await s.apply(upsert("dc1", { MeshGateways: undefined }));
    await s.apply(upsert("dc3", { MeshGateways: [gateway({ Node: "gw3" })] }));
    await s.apply(upsert("dc2"));
    const r = s.read({ type: "federation-state-mesh-gateways" });
    expect(r.index).toBe(3);
    const nodes = (r.value as { DatacenterNodes: Record<string, { Node: { Node: string } }[]> }).DatacenterNodes;
    expect(Object.entries(nodes).map(([dc, gws]) => [dc, gws.map((g) => g.Node.Node)])).toEqual([["dc2", ["gw-node"]], ["dc3", ["gw3"]]]);
  });

  test("a blocking list returns when a state is written, with the table's new index", async () => {
    const s = server();
    await s.apply(upsert("dc2"));
    let answered: { index: number; states: FederationState[] } | undefined;
    void s.rs.backend.query(encodeWire({ type: "federation-state-list" } satisfies ReadQuery), { minIndex: 1, maxWaitMs: 60_000 })
      .then((r) => (answered = { index: r.index, states: decodeWire<FederationState[]>(r.result) }));
    await s.apply({ type: "kv", op: "set", entry: { Key: "unrelated" } });
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(answered).toBeUndefined();
    await s.apply(upsert("dc3"));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(answered?.index).toBe(3);
    expect(answered?.states.map((f) => f.Datacenter)).toEqual(["dc2", "dc3"]);
  });
});
