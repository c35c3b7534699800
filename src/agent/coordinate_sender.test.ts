import { describe, expect, test } from "bun:test";
import type { CoordinateEntry } from "../model/index.ts";
import { memoryLogger, seededRng } from "../platform/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { createCoordinateSender, rateScaledIntervalMs } from "./coordinate_sender.ts";

const coord = (x: number) => ({ Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 1, Adjustment: 0, Height: 1e-5 });

describe("rateScaledIntervalMs (Consul's lib.RateScaledInterval)", () => {
  test.each([
    [64, 15_000, 0, 15_000],
    [64, 15_000, 960, 15_000],
    [64, 15_000, 961, 15_015.625],
    [64, 15_000, 6_400, 100_000],
    [1, 0, 3, 3_000],
    [0, 15_000, 3, 15_000],
  ])("rate %d, min %d, %d nodes -> %d ms", (rate, min, n, want) => {
    expect(rateScaledIntervalMs(rate, min, n)).toBe(want);
  });
});

describe("coordinate sender", () => {
  function setup(o: { members?: number; coordinate?: () => ReturnType<typeof coord> | undefined; fail?: boolean; seed?: number } = {}) {
    const seed = o.seed ?? 7;
    const clock = simClock();
    const logger = memoryLogger();
    const sent: { at: number; update: CoordinateEntry }[] = [];
    let x = 0;
    const sender = createCoordinateSender({
      clock, rng: seededRng(seed), logger, nodeName: "n1",
      memberCount: () => o.members ?? 3,
      localCoordinate: o.coordinate ?? (() => coord(++x / 1000)),
      send: async (update) => {
        sent.push({ at: clock.monotonic(), update });
        if (o.fail) throw new Error("No cluster leader");
      },
    });
    return { clock, logger, sender, sent, seed };
  }

  test("sends the current coordinate every interval plus a stagger below one interval (seeded)", async () => {
    const { clock, sender, sent, seed } = setup();
    const t0 = clock.monotonic();
    sender.start();
    await runSimTimers(clock, 15_000);
    expect(sent, `seed ${seed}`).toEqual([]);
    await runSimTimers(clock, 15_000 * 6);
    expect(sent.length, `seed ${seed}`).toBeGreaterThanOrEqual(3);
    let prev = t0;
    for (const s of sent) {
      expect(s.at - prev, `seed ${seed}`).toBeGreaterThanOrEqual(15_000);
      expect(s.at - prev, `seed ${seed}`).toBeLessThan(30_000);
      prev = s.at;
    }
    expect(sent.map((s) => s.update.Coord.Vec[0])).toEqual(sent.map((_, i) => (i + 1) / 1000));
    expect(sent[0]!.update).toMatchObject({ Node: "n1", Segment: "" });
    sender.stop();
    const count = sent.length;
    await runSimTimers(clock, 60_000);
    expect(sent.length).toBe(count);
  });

  test("a large cluster stretches the interval (rate target 64/s)", async () => {
    const { clock, sender, sent } = setup({ members: 6_400 });
    sender.start();
    await runSimTimers(clock, 99_999);
    expect(sent).toEqual([]);
    await runSimTimers(clock, 100_001);
    expect(sent.length).toBe(1);
    sender.stop();
  });

  test("nothing is sent while the coordinate is unknown; failures are logged and the rounds go on", async () => {
    const none = setup({ coordinate: () => undefined });
    none.sender.start();
    await runSimTimers(none.clock, 120_000);
    expect(none.sent).toEqual([]);
    none.sender.stop();
    const failing = setup({ fail: true });
    failing.sender.start();
    await runSimTimers(failing.clock, 120_000);
    expect(failing.sent.length).toBeGreaterThanOrEqual(4);
    expect(failing.logger.lines.join("\n")).toContain("No cluster leader");
    failing.sender.stop();
  });
});
