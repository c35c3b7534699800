import { describe, expect, test } from "bun:test";
import type { ConsensusNode } from "../consensus/index.ts";
import { silentLogger } from "../platform/index.ts";
import { decodeCommand, encodeCommand, type StateCommand, type StateResult } from "../state/index.ts";
import { flushMacrotask, simClock } from "../../test/harness/sim_clock.ts";
import { createReplicatedState } from "./replicated_state.ts";
import { encodeWire } from "../rpc/index.ts";
import { createLeaderRunner } from "./leader_routines.ts";
import { decodeConfigEntry } from "../connect/index.ts";
import { MetricsRegistry } from "../telemetry/index.ts";

/** A consensus node of one that applies proposals at once, recording them. */
function fakeConsensus(apply: (index: number, bytes: Uint8Array) => StateResult) {
  const proposed: StateCommand[] = [];
  let index = 0;
  const node = {
    propose: async (bytes: Uint8Array) => {
      proposed.push(decodeCommand(bytes));
      return apply(++index, bytes);
    },
    read: async () => {},
    status: () => ({ term: 1, leader: "me" }),
  } as unknown as ConsensusNode<StateResult>;
  return { node, proposed };
}

/** Starts the state's leader routines, as the server does on gaining leadership. */
const becomeLeader = (rs: ReturnType<typeof createReplicatedState>) => createLeaderRunner(rs.leaderRoutines, silentLogger()).setLeader(true);

const register: StateCommand = { type: "register", req: { Node: "n1", Address: "10.0.0.1" } };

describe("replicated state on the leader", () => {
  test("a TTL session created through any server is timed by the leader and destroyed after TTL x 2", async () => {
    const clock = simClock();
    const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: "dc1", nodeName: "me" });
    const { node, proposed } = fakeConsensus((i, b) => rs.stateMachine.apply(i, b));
    rs.attach(node);
    becomeLeader(rs);
    await rs.backend.apply(encodeCommand(register));
    const create: StateCommand = {
      type: "session", op: "create",
      session: { ID: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL: "10s", NodeChecks: [], ServiceChecks: null },
    };
    // As if a follower had proposed it: the leader only applies the entry.
    expect(rs.stateMachine.apply(100, encodeCommand(create))).toEqual({ type: "session", id: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c" });
    clock.advance(19_999);
    expect(proposed.filter((c) => c.type === "session")).toEqual([]);
    clock.advance(1);
    await Promise.resolve();
    expect(proposed.filter((c) => c.type === "session")).toEqual([{ type: "session", op: "destroy", id: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c" }]);
  });

  test("a renewal restarts the timer; a follower keeps no timers", async () => {
    const clock = simClock();
    const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: "dc1", nodeName: "me" });
    const { node, proposed } = fakeConsensus((i, b) => rs.stateMachine.apply(i, b));
    rs.attach(node);
    await rs.backend.apply(encodeCommand(register));
    const id = "1b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c";
    await rs.backend.apply(encodeCommand({ type: "session", op: "create", session: { ID: id, Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL: "10s", NodeChecks: [], ServiceChecks: null } }));
    clock.advance(60_000);
    expect(proposed.filter((c) => c.type === "session" && c.op === "destroy")).toEqual([]); // not the leader
    becomeLeader(rs); // a new leader times every TTL session it finds
    clock.advance(15_000);
    expect(new TextDecoder().decode(await rs.backend.renewSession(id))).toContain(id);
    clock.advance(15_000);
    expect(proposed.filter((c) => c.type === "session" && c.op === "destroy")).toEqual([]);
    expect(await rs.backend.renewSession("nope")).toEqual(encodeWire([]));
  });

  test("a lock under lock-delay is refused without proposing", async () => {
    const clock = simClock();
    const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: "dc1", nodeName: "me" });
    const { node, proposed } = fakeConsensus((i, b) => rs.stateMachine.apply(i, b));
    rs.attach(node);
    await rs.backend.apply(encodeCommand(register));
    const id = "2b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c";
    const session = { ID: id, Name: "", Node: "n1", LockDelay: 15_000_000_000, Behavior: "release" as const, TTL: "", NodeChecks: [], ServiceChecks: null };
    await rs.backend.apply(encodeCommand({ type: "session", op: "create", session }));
    await rs.backend.apply(encodeCommand({ type: "kv", op: "lock", entry: { Key: "k", Session: id } }));
    await rs.backend.apply(encodeCommand({ type: "session", op: "destroy", id }));
    await rs.backend.apply(encodeCommand({ type: "session", op: "create", session: { ...session, ID: "3b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c" } }));
    const before = proposed.length;
    const refused = await rs.backend.apply(encodeCommand({ type: "kv", op: "lock", entry: { Key: "k", Session: "3b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c" } }));
    expect(new TextDecoder().decode(refused)).toBe(JSON.stringify({ type: "kv", ok: false }));
    expect(proposed.length).toBe(before);
  });
});

describe("config entries at apply time", () => {
  test("a write that would form an invalid graph with the stored entries is refused when applied, and writes nothing", async () => {
    const clock = simClock();
    const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: "dc1", nodeName: "me" });
    const { node } = fakeConsensus((i, b) => rs.stateMachine.apply(i, b));
    rs.attach(node);
    const resolver = (name: string, to: string) =>
      decodeConfigEntry({ Kind: "service-resolver", Name: name, Redirect: { Service: to } });
    // Each alone is valid; the second closes a redirect cycle (as two concurrent HTTP writes could).
    const first = new TextDecoder().decode(await rs.backend.apply(encodeCommand({ type: "config-entry", op: "set", entry: resolver("web", "api") })));
    expect(JSON.parse(first)).toEqual({ type: "ok" });
    const second = JSON.parse(new TextDecoder().decode(await rs.backend.apply(encodeCommand({ type: "config-entry", op: "set", entry: resolver("api", "web") }))));
    expect(second.type).toBe("error");
    expect(second.error).toContain("circular");
    const stored = (await rs.backend.query(encodeWire({ type: "config-entry-list" }), { minIndex: 0, maxWaitMs: 0 })).result;
    expect((JSON.parse(new TextDecoder().decode(stored)) as { Name: string }[]).map((e) => e.Name)).toEqual(["web"]);
  });
});

describe("connect disabled", () => {
  test("without connect enabled, leaf signing and CA configuration are refused with Consul's message", async () => {
    const rs = createReplicatedState({ clock: simClock(), logger: silentLogger(), datacenter: "dc1", nodeName: "me" });
    await expect(rs.backend.signLeaf("web", "csr")).rejects.toThrow("Connect must be enabled in order to use this endpoint");
    await expect(rs.backend.setCAConfiguration(encodeWire({}))).rejects.toThrow("Connect must be enabled in order to use this endpoint");
  });
});

describe("write and leader-routine metrics", () => {
  test("each write is timed under its Consul name; session_ttl.active follows the timed sessions; an expiry is timed", async () => {
    const clock = simClock();
    const metrics = new MetricsRegistry({ now: () => clock.now() });
    const rs = createReplicatedState({ clock, logger: silentLogger(), datacenter: "dc1", nodeName: "me", metrics });
    const { node } = fakeConsensus((i, b) => {
      clock.advance(3); // each commit takes 3 ms of simulated time
      return rs.stateMachine.apply(i, b);
    });
    rs.attach(node);
    becomeLeader(rs);
    await rs.backend.apply(encodeCommand(register));
    for (let i = 0; i < 3; i++) await rs.backend.apply(encodeCommand({ type: "kv", op: "set", entry: { Key: `k${i}` } }));
    await rs.backend.apply(encodeCommand({ type: "txn", ops: [] }));
    const id = "2b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c";
    await rs.backend.apply(encodeCommand({ type: "session", op: "create", session: { ID: id, Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL: "10s", NodeChecks: [], ServiceChecks: null } }));
    const sample = (name: string) => metrics.series().find((s) => s.name === `consul.${name}`);
    expect(sample("session_ttl.active")?.value).toBe(1);
    clock.advance(20_000);
    await flushMacrotask();
    expect([sample("catalog.register")?.count, sample("kvs.apply")?.count, sample("txn.apply")?.count, sample("session.apply")?.count]).toEqual([1, 3, 1, 2]);
    expect(sample("kvs.apply")?.total).toBe(9);
    expect(sample("session_ttl.active")?.value).toBe(0);
    expect(sample("session_ttl.invalidate")?.count).toBe(1);
  });
});
