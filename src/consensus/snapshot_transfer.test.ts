import { describe, expect, test } from "bun:test";
import { snapshotNames } from "./snapshot_transfer.ts";

describe("snapshotNames", () => {
  const cs = { voters: ["a"], learners: ["b"], votersOutgoing: ["c"], learnersNext: ["d"], autoLeave: false };

  test("a voter, a learner or an outgoing voter of the snapshot can install it", () => {
    expect(["a", "b", "c"].map((id) => snapshotNames(cs, id))).toEqual([true, true, true]);
  });

  test("a server added after it cannot (nor one only in learnersNext, which is an outgoing voter too)", () => {
    expect(snapshotNames(cs, "e")).toBe(false);
    expect(snapshotNames(cs, "d")).toBe(false);
  });
});
