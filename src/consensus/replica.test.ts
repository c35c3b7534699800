import { describe, expect, test } from "bun:test";
import { EMPTY_HARD_STATE, type Entry } from "../raft/index.ts";
import { memoryLogStore } from "../../test/harness/memory_log_store.ts";
import { encodeKvCommand, kvStateMachine } from "../../test/harness/kv_state_machine.ts";
import { bootstrapSnapshot, Replica } from "./replica.ts";

const entry = (index: number, term: number): Entry => ({ type: "Normal", index, term, data: new Uint8Array([index]) });

/** A replica whose state machine holds `key`, snapshotted into a fresh log at index 5, term 2. */
async function withSnapshot() {
  const sm = kvStateMachine();
  sm.apply(5, encodeKvCommand({ op: "put", key: "k", value: "v" }));
  const store = memoryLogStore();
  const meta = { ...bootstrapSnapshot(["b", "a"]), index: 5, term: 2 };
  await store.saveSnapshot(meta, new Replica(store, sm).snapshotBytes());
  return { store, meta };
}

describe("Replica", () => {
  test("load: restores the snapshot's state, appends the entries after it, and commits at least up to it", async () => {
    const { store, meta } = await withSnapshot();
    const sm = kvStateMachine();
    const r = new Replica(store, sm);
    r.load({ hardState: { ...EMPTY_HARD_STATE, term: 2, commit: 3 }, snapshot: meta, entries: [entry(6, 2), entry(7, 2)] });
    expect(sm.get("k")).toBe("v");
    expect([r.applied, r.snapshotIndex, r.confState?.voters]).toEqual([5, 5, ["a", "b"]]);
    expect(r.storage.initialState().hardState.commit).toBe(5);
    expect([r.storage.firstIndex(), r.storage.lastIndex()]).toEqual([6, 7]);
    expect([r.storedTerm(0), r.storedTerm(5), r.storedTerm(7), r.storedTerm(4), r.storedTerm(8)]).toEqual([0, 2, 2, undefined, undefined]);
  });

  test("load: a snapshot the log records without its file is an error", async () => {
    const { meta } = await withSnapshot();
    const r = new Replica(memoryLogStore(), kvStateMachine());
    expect(() => r.load({ hardState: EMPTY_HARD_STATE, snapshot: meta, entries: [] })).toThrow("snapshot 5 is recorded in the log but its file is missing");
  });

  test("adopt: without bytes (a new cluster's first snapshot) the state machine is left alone; reset starts over", async () => {
    const sm = kvStateMachine();
    sm.apply(1, encodeKvCommand({ op: "put", key: "k", value: "kept" }));
    const r = new Replica(memoryLogStore(), sm);
    r.adopt(bootstrapSnapshot(["n1"]));
    expect([r.applied, r.snapshotIndex, sm.get("k")]).toEqual([1, 1, "kept"]);
    const before = r.storage;
    r.reset();
    expect([r.applied, r.snapshotIndex, r.storage === before, r.storage.lastIndex()]).toEqual([0, 0, false, 0]);
  });
});
