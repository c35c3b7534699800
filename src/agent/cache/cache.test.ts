import { describe, expect, test } from "bun:test";
import { silentLogger } from "../../platform/index.ts";
import { runSimTimers, simClock, type SimClock } from "../../../test/harness/sim_clock.ts";
import { blockingQueryType, createAgentCache, type CacheResult, type CacheType, type FetchOptions } from "./index.ts";

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A fake server table: blocking reads of a string value per name, changed by the test. */
function fakeServer(clock: SimClock) {
  const values = new Map<string, { value: string; index: number }>();
  const wakers = new Set<() => void>();
  const calls: { name: string; minIndex: number; maxWaitMs: number; at: number }[] = [];
  let failures: Error[] = [];
  const read = (name: string, o: FetchOptions): Promise<CacheResult<string>> => {
    calls.push({ name, minIndex: o.minIndex, maxWaitMs: o.maxWaitMs, at: clock.monotonic() });
    const failure = failures.shift();
    if (failure) return Promise.reject(failure);
    const now = () => values.get(name) ?? { value: "", index: 1 };
    return new Promise((resolve) => {
      if (now().index > o.minIndex) return resolve(now());
      const done = () => {
        cancel();
        wakers.delete(done);
        resolve(now());
      };
      const cancel = clock.setTimer(o.maxWaitMs, done);
      wakers.add(done);
    });
  };
  let index = 1;
  const set = (name: string, value: string) => {
    values.set(name, { value, index: ++index });
    for (const w of [...wakers]) w();
  };
  const failNext = (...errs: Error[]) => void (failures = errs);
  return { read, set, calls, failNext };
}

/** Requests name a value; `tag` is not part of the key, so requests differing only in it share an entry. */
interface Req {
  readonly name: string;
  readonly tag?: string;
}

function setup(o: { refresh?: boolean; lastGetTtlMs?: number } = {}) {
  const clock = simClock();
  const server = fakeServer(clock);
  const cache = createAgentCache({ clock, rng: { next: () => 0 }, logger: silentLogger() });
  const refreshing = blockingQueryType<Req, string>({
    name: "test", key: (r) => r.name, query: (r, opts) => server.read(r.name, opts),
    ...(o.lastGetTtlMs !== undefined ? { lastGetTtlMs: o.lastGetTtlMs } : {}),
  });
  const type: CacheType<Req, string> = o.refresh === false ? { ...refreshing, refresh: false } : refreshing;
  return { clock, server, cache, type };
}

describe("agent cache", () => {
  test("a blocking get waits for a newer index, or answers with the current value after maxWaitMs", async () => {
    const { clock, server, cache, type } = setup();
    server.set("a", "one");
    const first = await cache.get(type, { name: "a" });
    expect(first).toEqual({ value: "one", index: 2 });
    const timedOut = cache.get(type, { name: "a" }, { minIndex: 2, maxWaitMs: 1000 });
    clock.advance(1000);
    expect(await timedOut).toEqual(first);
    const blocked = cache.get(type, { name: "a" }, { minIndex: 2, maxWaitMs: 60_000 });
    await flush();
    server.set("a", "two");
    expect(await blocked).toEqual({ value: "two", index: 3 });
    cache.close();
  });

  test("two requests with the same key share one entry and one fetch", async () => {
    const { server, cache, type } = setup();
    server.set("a", "one");
    const [x, y] = await Promise.all([cache.get(type, { name: "a", tag: "x" }), cache.get(type, { name: "a", tag: "y" })]);
    expect(x).toEqual(y);
    expect(server.calls.filter((c) => c.minIndex === 0)).toHaveLength(1);
    await cache.get(type, { name: "b" });
    expect(server.calls.filter((c) => c.minIndex === 0).map((c) => c.name)).toEqual(["a", "b"]);
    cache.close();
  });

  test("a refresh type keeps a blocking fetch open in the background; values arrive without a get", async () => {
    const { server, cache, type } = setup();
    server.set("a", "one");
    await cache.get(type, { name: "a" });
    await flush();
    expect(server.calls.at(-1)).toMatchObject({ name: "a", minIndex: 2, maxWaitMs: 10 * 60_000 });
    server.set("a", "two");
    await flush();
    const fetches = server.calls.length;
    expect(await cache.get(type, { name: "a" })).toEqual({ value: "two", index: 3 });
    expect(server.calls).toHaveLength(fetches);
    expect(server.calls.at(-1)).toMatchObject({ name: "a", minIndex: 3, maxWaitMs: 10 * 60_000 });
    cache.close();
  });

  test("a type without refresh fetches only when a get needs a newer value", async () => {
    const { clock, server, cache, type } = setup({ refresh: false });
    server.set("a", "one");
    await cache.get(type, { name: "a" });
    await flush();
    expect(server.calls).toHaveLength(1);
    server.set("a", "two");
    expect((await cache.get(type, { name: "a" })).value).toBe("one");
    const p = cache.get(type, { name: "a" }, { minIndex: 2, maxWaitMs: 1000 });
    clock.advance(1);
    expect(await p).toEqual({ value: "two", index: 3 });
    expect(server.calls.map((c) => c.minIndex)).toEqual([0, 2]);
    cache.close();
  });

  test("a failed first fetch rejects the get and is not cached; failed refreshes back off and keep the value", async () => {
    const { clock, server, cache, type } = setup();
    server.failNext(new Error("No cluster leader"));
    await expect(cache.get(type, { name: "a" })).rejects.toThrow("No cluster leader");
    server.set("a", "one");
    expect((await cache.get(type, { name: "a" })).value).toBe("one");
    await flush();
    // The blocking fetch wakes on a change; the next 5 fetches fail: 3 retries at once, then 2 s, then 4 s.
    server.failNext(...Array.from({ length: 5 }, () => new Error("rpc error")));
    server.set("a", "two");
    const before = server.calls.length;
    await runSimTimers(clock, 10_000, undefined, flush);
    const times = server.calls.slice(before).map((c) => c.at);
    expect(times).toEqual([0, 0, 0, 0, 2000, 6000]);
    expect(await cache.get(type, { name: "a" })).toEqual({ value: "two", index: 3 });
    cache.close();
  });

  test("an entry unused for its TTL is dropped: its refresh stops and the next get fetches afresh", async () => {
    const { clock, server, cache, type } = setup({ lastGetTtlMs: 60_000 });
    server.set("a", "one");
    await cache.get(type, { name: "a" });
    clock.advance(30_000);
    await cache.get(type, { name: "a" });
    clock.advance(59_999);
    await flush();
    const fetches = server.calls.length;
    clock.advance(1);
    await flush();
    server.set("a", "two");
    await flush();
    expect(server.calls).toHaveLength(fetches);
    expect((await cache.get(type, { name: "a" })).value).toBe("two");
    // A new entry: a fresh fetch (minIndex 0), then its background refresh.
    expect(server.calls.slice(fetches).map((c) => c.minIndex)).toEqual([0, 3]);
    cache.close();
  });

  test("a watch gets the current value and each change, keeps the entry in use, and stops when cancelled", async () => {
    const { clock, server, cache, type } = setup({ lastGetTtlMs: 60_000 });
    server.set("a", "one");
    const seen: string[] = [];
    const cancel = cache.watch(type, { name: "a" }, { onUpdate: (r) => seen.push(`${r.value}@${r.index}`) });
    await flush();
    server.set("a", "two");
    await flush();
    clock.advance(120_000);
    await flush();
    server.set("a", "three");
    await flush();
    expect(seen).toEqual(["one@2", "two@3", "three@4"]);
    cancel();
    server.set("a", "four");
    await flush();
    expect(seen).toHaveLength(3);
    // Unwatched, the entry lives one more TTL from the cancel, then it is dropped.
    clock.advance(60_000);
    await flush();
    const fetches = server.calls.length;
    server.set("a", "five");
    await flush();
    expect(server.calls).toHaveLength(fetches);
    cache.close();
  });

  test("close answers pending blocking gets with what they have and ends refreshes", async () => {
    const { server, cache, type } = setup();
    server.set("a", "one");
    const first = await cache.get(type, { name: "a" });
    const blocked = cache.get(type, { name: "a" }, { minIndex: first.index, maxWaitMs: 60_000 });
    cache.close();
    expect(await blocked).toEqual(first);
    await expect(cache.get(type, { name: "a" })).rejects.toThrow("closed");
  });
});
