/**
 * Federation-state routines of two datacenters over real replicated states and the real State service
 * path between them (createServerStateCaller, routed to the other datacenter over an in-process
 * transport): a secondary's gateways reach the primary by anti-entropy and come back by replication.
 */
import { describe, expect, test } from "bun:test";
import { createRouterTransport } from "@connectrpc/connect";
import type { ConsensusNode, ConsensusStatus } from "../consensus/index.ts";
import type { FederationState, NodeService, Unindexed } from "../model/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { createServerStateCaller, decodeWire, registerStateService, type RpcContext, type RpcPool } from "../rpc/index.ts";
import { encodeCommand, federationStateList, WatchSet, type StateResult } from "../state/index.ts";
import { flushMacrotask, runSimTimers, simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { federationRoutines } from "./leader_federation.ts";
import { createReplicatedState } from "./replicated_state.ts";

type Caller = ReturnType<typeof createServerStateCaller>;

const status = (): ConsensusStatus => ({
  id: "s", leader: "s", role: "Leader", term: 1, commit: 0, applied: 0, lastIndex: 0, lastLogTerm: 1,
  config: { voters: ["s"], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false }, lastLeaderContactMs: 0,
});

/** One datacenter of one server whose consensus applies each proposal at once; calls to other datacenters go to `peers`. */
function datacenter(dc: string, primary: string, clock: SimClock, peers: Map<string, Caller>) {
  const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: dc, nodeName: `s-${dc}` });
  let index = 0;
  rs.attach({ propose: async (bytes: Uint8Array) => rs.stateMachine.apply(++index, bytes), read: async () => {}, status } as unknown as ConsensusNode<StateResult>);
  const pool: RpcPool = {
    transport: (t) => createRouterTransport((r) => registerStateService(r, peers.get(t.datacenter)!)),
    connections: () => 0,
    retire: () => 0,
    targets: () => 0,
    close() {},
  };
  const ctx: RpcContext = {
    datacenter: dc, node: `s-${dc}`, pool, servers: { lookup: () => undefined }, datacenters: () => [...peers.keys()],
    raft: { status, changeMembership: () => Promise.reject(new Error("not here")) },
  };
  // Every query this server serves, with the signal it was given.
  const served: { readonly signal?: AbortSignal | undefined }[] = [];
  const caller = createServerStateCaller(ctx, { ...rs.backend, query: (q, options) => (served.push(options), rs.backend.query(q, options)) });
  peers.set(dc, caller);
  const results: boolean[] = [];
  const federation = federationRoutines({
    localDc: dc, primaryDc: primary, store: rs.store, barrier: async () => {}, state: () => caller,
    servers: () => [{ status: "alive", features: { fs: 1 } }], knownDatacenters: () => [...peers.keys()],
    onReplicationResult: (ok) => results.push(ok), clock, rng: seededRng(1), logger: silentLogger(),
  });
  const registerGateway = async (node: string, address: string) => {
    const service: Unindexed<NodeService> = {
      ...({ ID: "mesh-gateway", Service: "mesh-gateway" } as Unindexed<NodeService>), Kind: "mesh-gateway", Port: 443, Meta: { "consul-wan-federation": "1" },
    };
    const r = decodeWire<StateResult>(await caller.apply(encodeCommand({ type: "register", req: { Node: node, Address: address, Service: service } })));
    expect(r).toEqual({ type: "ok" });
  };
  const states = () => federationStateList(rs.store, new WatchSet()).value;
  return { rs, federation, results, registerGateway, states, served };
}

/** Promise hops of an in-process RPC between timers. */
const flush = async () => {
  for (let i = 0; i < 10; i++) await flushMacrotask();
};
const gatewaysOf = (states: readonly FederationState[], dc: string) => states.find((s) => s.Datacenter === dc)?.MeshGateways?.map((g) => g.Node.Address);

describe("federation-state routines across two datacenters", () => {
  test("anti-entropy carries each datacenter's gateways to the primary; replication brings them to the secondary", async () => {
    const clock = simClock();
    const peers = new Map<string, Caller>();
    const dc1 = datacenter("dc1", "dc1", clock, peers);
    const dc2 = datacenter("dc2", "dc1", clock, peers);
    expect(dc1.federation.routines.map((r) => r.name)).toEqual(["federation state anti-entropy", "federation state pruning"]);
    expect(dc2.federation.routines.map((r) => r.name)).toEqual(["federation state replication", "federation state anti-entropy"]);
    await dc1.registerGateway("gw1", "10.1.0.1");
    await dc2.registerGateway("gw2", "10.2.0.1");
    for (const r of [...dc1.federation.routines, ...dc2.federation.routines]) r.start();

    const converged = (a: string, b: string) => () =>
      [dc1.states(), dc2.states()].every((s) => gatewaysOf(s, "dc1")?.join() === a && gatewaysOf(s, "dc2")?.join() === b);
    expect(await runSimTimers(clock, 30_000, converged("10.1.0.1", "10.2.0.1"), flush)).toBe(true);
    // The secondary's copies carry the primary's ModifyIndex as PrimaryModifyIndex.
    for (const s of dc2.states()) {
      const inPrimary = dc1.states().find((p) => p.Datacenter === s.Datacenter)!;
      expect(s.PrimaryModifyIndex).toBe(inPrimary.ModifyIndex);
      expect(s.UpdatedAt).toBe(inPrimary.UpdatedAt);
    }
    expect(dc2.results.length).toBeGreaterThan(0);
    expect(dc2.results.every((ok) => ok)).toBe(true);

    // A gateway's new address in the secondary reaches the primary and comes back.
    await dc2.registerGateway("gw2", "10.2.0.2");
    expect(await runSimTimers(clock, 30_000, converged("10.1.0.1", "10.2.0.2"), flush)).toBe(true);

    // The secondary's next replication read blocks in the primary: stopping cancels it there too.
    const blocking = () => dc1.served.at(-1)?.signal?.aborted === false;
    expect(await runSimTimers(clock, 5_000, blocking, flush)).toBe(true);
    const inPrimary = dc1.served.at(-1)!;
    for (const r of [...dc1.federation.routines, ...dc2.federation.routines]) r.stop();
    await flush();
    expect(inPrimary.signal?.aborted).toBe(true);
    expect([clock.pending(), dc1.rs.store.hub.waiting]).toEqual([0, 0]);
    // Nothing is written after stop, even once every wait has run out.
    const writes = [dc1.rs.store.lastIndex(), dc2.rs.store.lastIndex()];
    await runSimTimers(clock, 400_000, undefined, flush);
    expect([dc1.rs.store.lastIndex(), dc2.rs.store.lastIndex()]).toEqual(writes);
    expect(clock.pending()).toBe(0);
  });
});
