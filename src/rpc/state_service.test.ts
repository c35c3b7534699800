/**
 * Cancelling State service reads (QueryOptions.signal): a local blocking read rejects with an
 * AbortError at the abort and leaves no watch or timer; a read forwarded to another datacenter or to
 * the leader, over a real pool and a real gRPC server on loopback, is cancelled on the wire (the
 * serving server's wait ends too) and the pooled connection serves the next call.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { ConsensusStatus } from "../consensus/index.ts";
import { createGrpcServer, dialTcp, seededRng, silentLogger } from "../platform/index.ts";
import { blockingQuery, createStateStore, kvGet } from "../state/index.ts";
import { simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { AbortError, isAbortError } from "./abort.ts";
import type { RpcContext } from "./forward.ts";
import { createRpcPool, type RpcPool } from "./pool.ts";
import { createServerStateCaller, registerStateService, type StateBackend } from "./state_service.ts";

const utf8 = new TextEncoder();
const text = new TextDecoder();

/**
 * A backend over a real state store on a simulated clock: a query is a KV key, answered by Consul's
 * blocking loop (with the signal passed on unless `ignoreSignal`). `queried()` resolves with the
 * options of the next query to arrive.
 */
function kvBackend(o: { ignoreSignal?: boolean } = {}) {
  const clock = simClock();
  const store = createStateStore({ clock });
  let idx = 0;
  const arrivals: ((options: { signal?: AbortSignal }) => void)[] = [];
  const unused = () => Promise.reject(new Error("unused"));
  const backend: StateBackend = {
    apply: unused, linearizableRead: unused, renewSession: unused, signLeaf: unused, setCAConfiguration: unused, signIntermediate: unused,
    async query(bytes, options) {
      arrivals.shift()?.(options);
      const r = await blockingQuery({
        minIndex: options.minIndex, maxWaitMs: options.maxWaitMs, clock, signal: o.ignoreSignal ? undefined : options.signal,
        run: (ws) => kvGet(store, ws, text.decode(bytes)),
      });
      return { result: utf8.encode(`${r.index}`), index: r.index };
    },
  };
  return {
    clock, store, backend,
    put: (key: string) => store.apply(++idx, { type: "kv", op: "set", entry: { Key: key, Value: utf8.encode(`v${idx}`) } }),
    queried: () => new Promise<{ signal?: AbortSignal }>((resolve) => arrivals.push(resolve)),
    /** Watches and timers left behind. */
    leftovers: () => [store.hub.waiting, clock.pending()],
  };
}

const leaderStatus = (role: "Leader" | "Follower", leader: string) => () => ({ role, leader }) as unknown as ConsensusStatus;

function context(o: { dc: string; pool: RpcPool; role?: "Leader" | "Follower" }): RpcContext {
  return {
    datacenter: o.dc, node: `s-${o.dc}`, pool: o.pool, datacenters: () => ["dc1", "dc2"],
    raft: { status: leaderStatus(o.role ?? "Leader", o.role === "Follower" ? "r-leader" : `s-${o.dc}`), changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: (id) => (id === "r-leader" ? { node: "leader", address: "unused" } : undefined) },
  };
}

const noPool: RpcPool = { transport: () => { throw new Error("no remote calls here"); }, connections: () => 0, targets: () => 0, retire: () => 0, close() {} };
const outcome = (p: Promise<unknown>) => p.then((v) => ({ ok: v }), (e: unknown) => ({ error: isAbortError(e) ? "AbortError" : String(e) }));
const aborted = (signal: AbortSignal | undefined) => new Promise<void>((resolve) => (signal!.aborted ? resolve() : signal!.addEventListener("abort", () => resolve())));

describe("a local blocking read with a signal", () => {
  test("rejects with an AbortError at the abort, leaving no watch or timer behind", async () => {
    const b = kvBackend();
    b.put("k");
    const caller = createServerStateCaller(context({ dc: "dc1", pool: noPool }), b.backend);
    const ac = new AbortController();
    const arrived = b.queried();
    const read = outcome(caller.query(utf8.encode("k"), { consistency: "stale", minIndex: 1, maxWaitMs: 300_000, signal: ac.signal }));
    expect((await arrived).signal).toBe(ac.signal);
    expect(b.leftovers()).toEqual([1, 1]);
    ac.abort();
    expect(await read).toEqual({ error: "AbortError" });
    expect(b.leftovers()).toEqual([0, 0]);
    // Without an abort the same read is answered by a change, as before.
    const again = outcome(caller.query(utf8.encode("k"), { minIndex: 1, maxWaitMs: 300_000, signal: new AbortController().signal }));
    await Promise.resolve();
    b.put("k");
    expect(await again).toMatchObject({ ok: { index: 2 } });
    expect(b.leftovers()).toEqual([0, 0]);
  });

  test("an already aborted signal rejects before anything is read", async () => {
    const b = kvBackend();
    const arrived: unknown[] = [];
    void b.queried().then((x) => arrived.push(x));
    const caller = createServerStateCaller(context({ dc: "dc1", pool: noPool }), b.backend);
    const err = await caller.query(utf8.encode("k"), { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AbortError);
    expect((err as Error).name).toBe("AbortError");
    await Promise.resolve();
    expect(arrived).toEqual([]);
    expect(b.leftovers()).toEqual([0, 0]);
  });

  test("a backend that does not stop waiting still cannot hold the caller past the abort", async () => {
    const b = kvBackend({ ignoreSignal: true });
    const caller = createServerStateCaller(context({ dc: "dc1", pool: noPool }), b.backend);
    const ac = new AbortController();
    const read = outcome(caller.query(utf8.encode("k"), { minIndex: 1, maxWaitMs: 300_000, signal: ac.signal }));
    await Promise.resolve();
    ac.abort();
    expect(await read).toEqual({ error: "AbortError" });
  });
});

describe("a forwarded blocking read with a signal", async () => {
  // The serving server: its State service on a real gRPC server on loopback.
  const served = kvBackend();
  served.put("k");
  let servedDc = "dc2";
  const servedContext = { ...context({ dc: "dc2", pool: noPool }), get datacenter() { return servedDc; } };
  const grpc = createGrpcServer({ routes: (r) => registerStateService(r, createServerStateCaller(servedContext, served.backend)), logger: silentLogger() });
  const { port } = await grpc.listen({ host: "127.0.0.1", port: 0 });
  let dials = 0;
  let gate: Promise<void> = Promise.resolve();
  const pool = createRpcPool({ dial: async () => (dials++, await gate, dialTcp({ host: "127.0.0.1", port })), clock: simClock(), rng: seededRng(1), logger: silentLogger() });
  afterAll(async () => {
    pool.close();
    await grpc.close();
  });

  const cases = [
    { name: "to another datacenter", servedDc: "dc2", caller: createServerStateCaller(context({ dc: "dc1", pool }), kvBackend().backend), options: { datacenter: "dc2", consistency: "stale" as const } },
    { name: "to the leader", servedDc: "dc1", caller: createServerStateCaller(context({ dc: "dc1", pool, role: "Follower" }), kvBackend().backend), options: {} },
  ];
  for (const c of cases) {
    test(`${c.name}: the call is cancelled, the serving server stops waiting, and the pooled connection serves the next call`, async () => {
      servedDc = c.servedDc;
      const [dialsBefore, connectionsBefore] = [dials, pool.connections()];
      const ac = new AbortController();
      const arrived = served.queried();
      const read = outcome(c.caller.query(utf8.encode("k"), { ...c.options, minIndex: served.store.lastIndex(), maxWaitMs: 300_000, signal: ac.signal }));
      const there = await arrived;
      expect(served.leftovers()).toEqual([1, 1]);
      ac.abort();
      expect(await read).toEqual({ error: "AbortError" });
      // The RST_STREAM reaches the serving server: its handler's signal aborts and its wait is released.
      await aborted(there.signal);
      expect(served.leftovers()).toEqual([0, 0]);
      expect(pool.connections()).toBe(connectionsBefore + 1);
      // A blocking read on the same connection is not cancelled by anything but its own signal.
      const next = served.queried();
      const answered = outcome(c.caller.query(utf8.encode("k"), { ...c.options, minIndex: served.store.lastIndex(), maxWaitMs: 300_000, signal: new AbortController().signal }));
      await next;
      served.put("k");
      expect(await answered).toMatchObject({ ok: { index: served.store.lastIndex() } });
      expect([dials - dialsBefore, pool.connections()]).toEqual([1, connectionsBefore + 1]);
    });
  }

  test("a call aborted while the pool is still dialling fails at once; the connection, once up, is used by the next call", async () => {
    const fresh = createRpcPool({ dial: async () => (dials++, await gate, dialTcp({ host: "127.0.0.1", port })), clock: simClock(), rng: seededRng(2), logger: silentLogger() });
    const caller = createServerStateCaller(context({ dc: "dc1", pool: fresh }), kvBackend().backend);
    servedDc = "dc2";
    let open!: () => void;
    gate = new Promise<void>((resolve) => (open = resolve));
    const before = dials;
    const ac = new AbortController();
    const read = outcome(caller.query(utf8.encode("k"), { datacenter: "dc2", minIndex: 1, maxWaitMs: 300_000, signal: ac.signal }));
    await Promise.resolve();
    ac.abort();
    expect(await read).toEqual({ error: "AbortError" });
    open();
    gate = Promise.resolve();
    expect(await outcome(caller.query(utf8.encode("k"), { datacenter: "dc2" }))).toMatchObject({ ok: { index: served.store.lastIndex() } });
    expect([dials - before, fresh.connections(), served.leftovers()]).toEqual([1, 1, [0, 0]]);
    fresh.close();
  });
});
