import { describe, expect, test } from "bun:test";
import type { CoordinateEntry } from "../model/index.ts";
import { memoryLogger } from "../platform/index.ts";
import type { StateCommand, StateResult } from "../state/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { createCoordinateBatcher } from "./coordinate_batcher.ts";

const entry = (Node: string, x = 0, Segment = ""): CoordinateEntry => ({ Node, Segment, Coord: { Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 1e-5 } });

function setup(o: { batchSize?: number; maxBatches?: number; result?: StateResult } = {}) {
  const clock = simClock();
  const logger = memoryLogger();
  const proposed: StateCommand[] = [];
  const b = createCoordinateBatcher({
    clock, logger, batchSize: o.batchSize, maxBatches: o.maxBatches,
    propose: async (cmd) => (proposed.push(cmd), o.result ?? { type: "ok" }),
  });
  const nodes = () => proposed.map((c) => (c.type === "coordinate-batch" ? c.updates.map((u) => `${u.Node}:${u.Segment}=${u.Coord.Vec[0]}`) : []));
  return { clock, logger, b, proposed, nodes };
}

describe("coordinate batcher", () => {
  test("keeps the latest update per node and segment and proposes them every period (5 s)", async () => {
    const { clock, b, nodes } = setup();
    b.start();
    b.submit([entry("a", 1), entry("b", 1)]);
    b.submit([entry("a", 2), entry("a", 3, "s1")]);
    expect(b.pending()).toBe(3);
    await runSimTimers(clock, 4_999);
    expect(nodes()).toEqual([]);
    await runSimTimers(clock, 1);
    expect(nodes()).toEqual([["a:=2", "b:=1", "a:s1=3"]]);
    expect(b.pending()).toBe(0);
    await runSimTimers(clock, 5_000);
    expect(nodes()).toHaveLength(1);
    b.stop();
  });

  test("splits into batches of batchSize, at most maxBatches, and discards the rest with a warning", async () => {
    const { b, nodes, logger } = setup({ batchSize: 2, maxBatches: 2 });
    b.submit(["a", "b", "c", "d", "e"].map((n) => entry(n)));
    await b.flush();
    expect(nodes()).toEqual([["a:=0", "b:=0"], ["c:=0", "d:=0"]]);
    expect(logger.lines.join("\n")).toContain("discarded coordinate updates");
    expect(logger.lines.join("\n")).toContain("count=1");
  });

  test("refuses invalid and incompatible coordinates with Consul's text and queues nothing of the call", () => {
    const { b } = setup();
    const nan = { ...entry("x"), Coord: { ...entry("x").Coord, Error: Number.NaN } };
    expect(() => b.submit([entry("ok"), nan])).toThrow("invalid coordinate");
    expect(() => b.submit([{ ...entry("x"), Coord: { ...entry("x").Coord, Vec: [0, 0] } }])).toThrow("incompatible coordinate");
    expect(b.pending()).toBe(0);
  });

  test("a refused batch is logged and the round stops (Consul returns on the first error)", async () => {
    const { b, proposed, logger } = setup({ batchSize: 1, result: { type: "error", error: "No cluster leader" } });
    b.submit([entry("a"), entry("b")]);
    await b.flush();
    expect(proposed).toHaveLength(1);
    expect(logger.lines.join("\n")).toContain("No cluster leader");
  });

  test("stop cancels the timer and drops what is pending", async () => {
    const { clock, b, proposed } = setup();
    b.start();
    b.submit([entry("a")]);
    b.stop();
    await runSimTimers(clock, 10_000);
    expect(proposed).toEqual([]);
    expect(b.pending()).toBe(0);
  });
});
