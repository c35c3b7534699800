import { describe, expect, test } from "bun:test";
import type { StateCommand } from "./commands.ts";
import { check, harness, register, service, utf8 } from "./fixtures.test.ts";
import { catalogNodes, catalogServiceNodes } from "./queries_catalog.ts";
import { healthServiceNodes } from "./queries_health.ts";
import { kvGet, kvKeys, kvList, sessionGet } from "./queries_kv.ts";
import { blockingQuery, WAKE_BATCH, waitFor, WatchSet, type WaitOutcome } from "./watch.ts";

const put = (Key: string, v = "v"): StateCommand => ({ type: "kv", op: "set", entry: { Key, Value: utf8(v) } });
/** Drains pending promise callbacks (no timers involved). */
async function tick(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** Starts a wait on what `read` reads; returns a probe of its outcome (undefined while pending). */
function watch(h: ReturnType<typeof harness>, read: (ws: WatchSet) => unknown, timeoutMs = 60_000) {
  const ws = new WatchSet();
  read(ws);
  let outcome: WaitOutcome | undefined;
  void waitFor(ws, { clock: h.clock, timeoutMs }).then((o) => (outcome = o));
  return async () => {
    await tick();
    return outcome;
  };
}

describe("watch precision", () => {
  test("a key read wakes on that key only", async () => {
    const h = harness();
    h.apply(put("a"));
    const probe = watch(h, (ws) => kvGet(h.store, ws, "a"));
    h.apply(put("b"));
    h.apply(put("ab"));
    h.apply({ type: "kv", op: "delete", entry: { Key: "zz" } });
    expect(await probe()).toBeUndefined();
    h.apply(put("a", "new"));
    expect(await probe()).toBe("changed");
    expect(h.store.hub.waiting).toBe(0);
    expect(h.clock.pending()).toBe(0);
  });

  test("a missing key wakes when it is created; an unchanged set wakes nobody", async () => {
    const h = harness();
    h.apply(put("x", "same"));
    const missing = watch(h, (ws) => kvGet(h.store, ws, "later"));
    const same = watch(h, (ws) => kvGet(h.store, ws, "x"));
    h.apply(put("x", "same"));
    expect(await same()).toBeUndefined();
    h.apply(put("later"));
    expect(await missing()).toBe("changed");
  });

  test("a prefix read wakes on writes under the prefix, including tree deletes", async () => {
    const h = harness();
    h.apply(put("app/a"));
    const list = watch(h, (ws) => kvList(h.store, ws, "app/"));
    const keys = watch(h, (ws) => kvKeys(h.store, ws, "other/", "/"));
    h.apply(put("apx"));
    h.apply(put("ap"));
    expect(await list()).toBeUndefined();
    h.apply({ type: "kv", op: "delete-tree", entry: { Key: "a" } });
    expect(await list()).toBe("changed");
    expect(await keys()).toBeUndefined();
    h.apply(put("other/x/y"));
    expect(await keys()).toBe("changed");
  });

  test("a service read wakes on its instances, their checks and nodes, not on other services", async () => {
    const h = harness();
    h.apply(register("n1", { Service: service("web") }));
    h.apply(register("n2", { Service: service("db") }));
    const read = (ws: WatchSet) => healthServiceNodes(h.store, ws, "web");
    let probe = watch(h, read);
    h.apply(register("n2", { Service: service("db", "db", { Port: 5 }), Checks: [check("c", "passing", { ServiceID: "db" })] }));
    h.apply(register("n3", { Service: service("cache") }));
    expect(await probe()).toBeUndefined();
    h.apply(register("n1", { Checks: [check("node", "critical")] }));
    expect(await probe()).toBe("changed");
    probe = watch(h, read);
    h.apply(register("n1", { Address: "10.1.1.1" }));
    expect(await probe()).toBe("changed");
    probe = watch(h, (ws) => catalogServiceNodes(h.store, ws, "absent"));
    h.apply(register("n1", { Service: service("absent") }));
    expect(await probe()).toBe("changed");
  });

  test("a session read wakes when that session goes", async () => {
    const h = harness();
    h.apply(register("n1"));
    h.apply({ type: "session", op: "create", session: { ID: "s1", Node: "n1" } as never });
    h.apply({ type: "session", op: "create", session: { ID: "s2", Node: "n1" } as never });
    const probe = watch(h, (ws) => sessionGet(h.store, ws, "s1"));
    h.apply({ type: "session", op: "destroy", id: "s2" });
    expect(await probe()).toBeUndefined();
    h.apply({ type: "session", op: "destroy", id: "s1" });
    expect(await probe()).toBe("changed");
  });

  test("a rejected command wakes nobody", async () => {
    const h = harness();
    const probe = watch(h, (ws) => catalogNodes(h.store, ws));
    h.apply(register("n1", { Check: check("c", "passing", { ServiceID: "missing" }) }));
    expect(await probe()).toBeUndefined();
  });

  test("timeout and abort release every registration and timer", async () => {
    const h = harness();
    const probe = watch(h, (ws) => kvGet(h.store, ws, "k"), 500);
    expect(h.store.hub.waiting).toBe(1);
    h.clock.advance(499);
    expect(await probe()).toBeUndefined();
    h.clock.advance(1);
    expect(await probe()).toBe("timeout");
    expect(h.store.hub.waiting).toBe(0);
    const ws = new WatchSet();
    kvGet(h.store, ws, "k");
    const ac = new AbortController();
    const p = waitFor(ws, { clock: h.clock, timeoutMs: 1000, signal: ac.signal });
    ac.abort();
    expect(await p).toBe("aborted");
    expect([h.store.hub.waiting, h.clock.pending()]).toEqual([0, 0]);
  });

  test("restore wakes everyone", async () => {
    const h = harness();
    const snap = h.store.snapshot();
    const probe = watch(h, (ws) => kvGet(h.store, ws, "k"));
    h.store.restore(snap);
    expect(await probe()).toBe("changed");
  });
});

describe("waking many waiters", () => {
  test("one write wakes WAKE_BATCH waiters at once and the rest in later turns of the clock", async () => {
    const h = harness();
    const probes = Array.from({ length: 2 * WAKE_BATCH + 10 }, () => watch(h, (ws) => kvGet(h.store, ws, "hot")));
    const woken = async () => (await Promise.all(probes.map((p) => p()))).filter((o) => o === "changed").length;
    h.apply(put("hot"));
    expect(await woken()).toBe(WAKE_BATCH);
    h.clock.runNext();
    expect(await woken()).toBe(2 * WAKE_BATCH);
    h.clock.runNext();
    expect(await woken()).toBe(2 * WAKE_BATCH + 10);
    expect(h.store.hub.waiting).toBe(0);
  });

  test("the batch counts every write applied together: many writes each waking a few still wake WAKE_BATCH per turn", async () => {
    const h = harness();
    const keys = 40;
    const per = 20; // 800 waiters, 20 on each key: every write wakes fewer than WAKE_BATCH
    const probes = Array.from({ length: keys * per }, (_, i) => watch(h, (ws) => kvGet(h.store, ws, `k${i % keys}`)));
    const woken = async () => (await Promise.all(probes.map((p) => p()))).filter((o) => o === "changed").length;
    for (let k = 0; k < keys; k++) h.apply(put(`k${k}`));
    for (let k = 0; k < keys; k++) h.apply(put(`k${k}`, "again")); // hits queued waiters again: no duplicates
    const counts = [await woken()];
    while (counts.at(-1)! < keys * per) {
      h.clock.runNext();
      counts.push(await woken());
    }
    expect(counts).toEqual([WAKE_BATCH, 2 * WAKE_BATCH, 3 * WAKE_BATCH, keys * per]);
    expect([h.store.hub.waiting, h.clock.pending()]).toEqual([0, 0]);
  });
});

describe("blockingQuery", () => {
  test("returns at once without minIndex, and never with index 0", async () => {
    const h = harness();
    const r = await blockingQuery({ minIndex: 0, maxWaitMs: 1000, clock: h.clock, run: (ws) => kvGet(h.store, ws, "k") });
    expect(r).toEqual({ index: 1, value: null });
  });

  test("blocks until something it read changes, then returns the new result", async () => {
    const h = harness();
    h.apply(put("k", "1"));
    let done: { index: number } | undefined;
    void blockingQuery({ minIndex: 1, maxWaitMs: 60_000, clock: h.clock, run: (ws) => kvGet(h.store, ws, "k") }).then((r) => (done = r));
    await tick();
    h.apply(put("other"));
    await tick();
    expect(done).toBeUndefined();
    h.apply(put("k", "2"));
    await tick();
    expect(done).toMatchObject({ index: 3 });
    expect(h.store.hub.waiting).toBe(0);
  });

  test("re-runs and keeps waiting when a watched change leaves the index where it was", async () => {
    const h = harness();
    h.apply(register("n1"));
    let runs = 0;
    let done: { index: number } | undefined;
    void blockingQuery({
      minIndex: 5, maxWaitMs: 10_000, clock: h.clock,
      run: (ws) => (runs++, catalogNodes(h.store, ws)),
    }).then((r) => (done = r));
    await tick();
    h.apply(register("n2"));
    await tick();
    expect([runs, done]).toEqual([2, undefined]);
    h.clock.advance(10_000);
    await tick();
    expect(done).toEqual({ index: 2, value: expect.any(Array) });
    expect([h.store.hub.waiting, h.clock.pending()]).toEqual([0, 0]);
  });
});
