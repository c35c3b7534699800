/**
 * Bounded evaluation: filterListAsync yields at deterministic points (counted in work units, no clock), the
 * budget stops a filter that costs too much in total or on one item, and all evaluators agree.
 */
import { describe, expect, test } from "bun:test";
import {
  compileFilter,
  filterList,
  filterListAsync,
  filterRecord,
  filterRecordAsync,
  FilterTooExpensiveError,
  NODE_SCHEMA,
  WorkMeter,
  type Filter,
} from "./index.ts";

const NODES = Array.from({ length: 100 }, (_, i) => ({ Node: `node-${i}`, Address: `10.0.0.${i}`, Meta: { rack: `r${i % 3}` } }));

/** `filter`, counting calls to `evaluate` in `calls.n`. */
function counting(filter: Filter, calls: { n: number }): Filter {
  return { ...filter, evaluate: (v, m) => (calls.n++, filter.evaluate(v, m)) };
}

describe("filterListAsync", () => {
  test("yields after every slice of work units, at the same items every run", async () => {
    // `Meta.rack == r1` costs 5 units per item: 1 for the item, 2 for each of the two selector steps.
    const filter = compileFilter("Meta.rack == r1", NODE_SCHEMA);
    const meter = new WorkMeter();
    meter.startItem();
    filter.evaluate(NODES[0], meter);
    expect(meter.used).toBe(5);

    for (let run = 0; run < 2; run++) {
      const calls = { n: 0 };
      const yieldsAt: number[] = [];
      const out = await filterListAsync(NODES, counting(filter, calls), {
        sliceUnits: 50,
        yield: async () => void yieldsAt.push(calls.n),
      });
      expect(out).toEqual(NODES.filter((n) => n.Meta.rack === "r1"));
      expect(yieldsAt).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90]); // 50 units = 10 items; none after the last
    }
  });

  test("waits for the yield to resolve before going on", async () => {
    const calls = { n: 0 };
    let release!: () => void;
    let pending = 0;
    const done = filterListAsync(NODES, counting(compileFilter("Node matches `-1`", NODE_SCHEMA), calls), {
      sliceUnits: 1,
      yield: () => {
        pending++;
        return new Promise<void>((r) => (release = r));
      },
    });
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect([calls.n, pending]).toEqual([1, 1]);
    for (let i = 1; i < NODES.length; i++) {
      release();
      for (let k = 0; k < 3 && pending === i; k++) await Promise.resolve();
      expect([calls.n, pending]).toEqual([i + 1, Math.min(i + 1, NODES.length - 1)]); // no yield after the last item
    }
    expect((await done).map((n) => n.Node)).toEqual(NODES.filter((n) => n.Node.includes("-1")).map((n) => n.Node));
  });

  test("an absent filter returns a copy without yielding; the empty expression keeps everything", async () => {
    let yields = 0;
    const yieldFn = async () => void yields++;
    const all = await filterListAsync(NODES, undefined, { yield: yieldFn, sliceUnits: 1 });
    expect(all).toEqual(NODES);
    expect(all).not.toBe(NODES);
    expect(yields).toBe(0);
    expect(await filterListAsync(NODES, compileFilter("", NODE_SCHEMA), { yield: yieldFn, sliceUnits: 10 })).toEqual(NODES);
    expect(yields).toBe(9); // one unit per item even for a filter that tests nothing
  });

  test("stops with the signal's reason after a yield once aborted", async () => {
    const abort = new AbortController();
    const calls = { n: 0 };
    const run = filterListAsync(NODES, counting(compileFilter("Node != x", NODE_SCHEMA), calls), {
      sliceUnits: 30,
      yield: async () => abort.abort(new Error("client went away")),
      signal: abort.signal,
    });
    await expect(run).rejects.toThrow("client went away");
    expect(calls.n).toBe(10);
  });

  test("filterRecordAsync filters by value like filterRecord", async () => {
    const record = Object.fromEntries(NODES.map((n) => [n.Node, n]));
    const filter = compileFilter("Meta.rack == r2 and Node matches `[05]$`", NODE_SCHEMA);
    const got = await filterRecordAsync(record, filter, { yield: async () => {}, sliceUnits: 7 });
    expect(got).toEqual(filterRecord(record, filter));
    expect(Object.keys(got)).toEqual(["node-5", "node-20", "node-35", "node-50", "node-65", "node-80", "node-95"]);
  });
});

describe("budget", () => {
  const LONG = [{ Node: "a".repeat(4096) }];
  const PATHOLOGICAL = "Node matches `(?:a?){500}a{500}z`"; // ~1,500 NFA states, most of them live on every "a"

  test("the total budget stops a filter across items, sync and async", async () => {
    const filter = compileFilter("Meta.rack == r1", NODE_SCHEMA);
    const message = "filter too expensive: evaluating it needs more than 200 work units";
    expect(() => filterList(NODES, filter, { maxUnits: 200 })).toThrow(message);
    expect(() => filterList(NODES, filter, { maxUnits: 500 })).not.toThrow(); // 100 items x 5 units
    const run = filterListAsync(NODES, filter, { maxUnits: 200, yield: async () => {} });
    await expect(run).rejects.toBeInstanceOf(FilterTooExpensiveError);
    await expect(filterListAsync(NODES, filter, { maxUnits: 200, yield: async () => {} })).rejects.toThrow(message);
  });

  test("one item's cost is bounded: a regexp run stops part-way once the item limit is passed", () => {
    const filter = compileFilter(PATHOLOGICAL, NODE_SCHEMA);
    const meter = new WorkMeter({ maxItemUnits: 100_000 });
    meter.startItem();
    expect(() => filter.evaluate(LONG[0], meter)).toThrow("filter too expensive: one item needs more than 100000 work units");
    // It stopped within one input character of the limit (at most one step per state, plus the character).
    expect(meter.used).toBeGreaterThan(100_000);
    expect(meter.used).toBeLessThan(100_000 + 2 * 1_502);
    expect(() => filterList(LONG, filter)).toThrow(FilterTooExpensiveError); // the default item limit
    expect(filterList([{ Node: "a".repeat(600) }], filter, { maxItemUnits: Infinity })).toEqual([]); // unbounded, it finishes
  });

  test("the item limit counts from each item's start, not from the start of the list", () => {
    const filter = compileFilter("Node matches `z`", NODE_SCHEMA);
    const items = Array.from({ length: 50 }, () => ({ Node: "a".repeat(100) }));
    const meter = new WorkMeter();
    meter.startItem();
    filter.evaluate(items[0], meter);
    const perItem = meter.used;
    expect(perItem).toBeGreaterThan(100); // at least a unit per character
    expect(filterList(items, filter, { maxItemUnits: perItem })).toEqual([]);
    expect(() => filterList(items, filter, { maxItemUnits: perItem - 1 })).toThrow(`one item needs more than ${perItem - 1}`);
  });

  test("plain matches is never metered", () => {
    expect(compileFilter(PATHOLOGICAL, NODE_SCHEMA).matches({ Node: "a".repeat(600) })).toBe(false);
  });
});
