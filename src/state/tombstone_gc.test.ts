import { expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import { createTombstoneGc } from "./tombstone_gc.ts";

test("tombstone GC buckets hints and expires each bucket once with its highest index", () => {
  const clock = simClock(0);
  const reaped: number[] = [];
  const gc = createTombstoneGc({ clock, ttlMs: 1000, granularityMs: 100, onExpire: (i) => reaped.push(i) });
  gc.hint(1);
  expect(gc.pending()).toBe(0);
  gc.setEnabled(true);
  gc.hint(5);
  clock.advance(50);
  gc.hint(7);
  clock.advance(100);
  gc.hint(9);
  expect(gc.pending()).toBe(2);
  clock.advance(949);
  expect(reaped).toEqual([]);
  clock.advance(1);
  expect(reaped).toEqual([7]);
  clock.advance(100);
  expect(reaped).toEqual([7, 9]);
  gc.hint(11);
  gc.setEnabled(false);
  expect([gc.pending(), clock.pending()]).toEqual([0, 0]);
});
