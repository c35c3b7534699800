/** The snapshot encoded in slices (snapshotTablesInSlices): the state at the call, whatever is written meanwhile. */
import { describe, expect, test } from "bun:test";
import { concatBytes } from "../lib/index.ts";
import { seededRng } from "../platform/index.ts";
import type { StateCommand } from "./commands.ts";
import { check, harness, register, service, utf8 } from "./fixtures.test.ts";

/** A random write of every kind that touches the pinned or the captured tables. */
function randomWrite(rng: ReturnType<typeof seededRng>, keys: number, idx: number): StateCommand {
  const k = `app/${rng.int(keys * 2).toString().padStart(6, "0")}`;
  switch (rng.int(7)) {
    case 0:
    case 1:
      return { type: "kv", op: "set", entry: { Key: k, Value: utf8(`w${idx}`) } };
    case 2:
      return { type: "kv", op: "delete", entry: { Key: k } };
    case 3:
      return { type: "kv", op: "delete-tree", entry: { Key: k.slice(0, 9) } };
    case 4:
      return { type: "tombstone-reap", reapIndex: idx - rng.int(200) };
    case 5:
      return register(`node${rng.int(20)}`, { Service: service(`s${rng.int(50)}`, "web", { Tags: [`t${idx}`] }), Checks: [check(`c${rng.int(5)}`, "critical")] });
    default:
      return { type: "deregister", req: { Node: `node${rng.int(20)}` } } as StateCommand;
  }
}

describe("snapshot in slices", () => {
  test("the joined parts are the snapshot at the call while keys, tombstones and the catalog change between slices", async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const rng = seededRng(seed);
      const h = harness();
      const keys = 10_000;
      for (let i = 0; i < 20; i++) h.apply(register(`node${i}`, { Service: service(`s${i}`, "web"), Checks: [check("serfHealth", "passing")] }));
      for (let i = 0; i < keys; i++) h.apply({ type: "kv", op: "set", entry: { Key: `app/${(i * 2).toString().padStart(6, "0")}`, Value: utf8("x".repeat(64)) } });
      for (let i = 0; i < 400; i++) h.apply(randomWrite(rng, keys, h.idx + 1));
      const expected = h.store.replicaSnapshot();
      let pauses = 0;
      const parts = await h.store.replicaSnapshotInSlices(async () => {
        pauses++;
        for (let i = 0; i < 300; i++) h.apply(randomWrite(rng, keys, h.idx + 1));
      });
      const got = concatBytes(parts);
      if (got.length !== expected.length || !got.every((b, i) => b === expected[i])) throw new Error(`seed ${seed}: the sliced snapshot differs from the state at its call`);
      expect(pauses).toBeGreaterThanOrEqual(2);
      expect(h.store.replicaSnapshot()).not.toEqual(expected); // the writes did happen
      // The pin was released: writes no longer keep old values for it.
      expect((h.store as unknown as { db: { pins: Set<unknown> } }).db.pins.size).toBe(0);
    }
  });

  test("a pause that throws releases the pin and rejects", async () => {
    const h = harness();
    for (let i = 0; i < 8000; i++) h.apply({ type: "kv", op: "set", entry: { Key: `k${i}`, Value: utf8("x".repeat(64)) } });
    await expect(h.store.snapshotInSlices(() => Promise.reject(new Error("stop")))).rejects.toThrow("stop");
    expect((h.store as unknown as { db: { pins: Set<unknown> } }).db.pins.size).toBe(0);
  });
});
