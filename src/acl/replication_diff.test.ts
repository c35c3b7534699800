import { describe, expect, test } from "bun:test";
import { diffReplicated } from "./replication_diff.ts";

const p = (ID: string, Hash: string) => ({ ID, Hash });
const diff = (local: { ID: string; Hash: string }[], remote: { ID: string; Hash: string }[]) => diffReplicated(local, remote, (x) => x.ID, (x) => x.Hash);

describe("ACL replication diff", () => {
  test("deletes what the primary dropped, writes what is new or changed, leaves equal hashes alone; sorted by ID", () => {
    expect(diff([p("b", "1"), p("a", "1"), p("c", "1")], [p("d", "1"), p("c", "2"), p("a", "1")])).toEqual({ deletions: ["b"], updates: [p("c", "2"), p("d", "1")] });
    expect(diff([], [p("x", "h")])).toEqual({ deletions: [], updates: [p("x", "h")] });
    expect(diff([p("x", "h")], [])).toEqual({ deletions: ["x"], updates: [] });
    expect(diff([p("x", "h")], [p("x", "h")])).toEqual({ deletions: [], updates: [] });
  });
});
