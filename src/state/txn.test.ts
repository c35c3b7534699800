import { describe, expect, test } from "bun:test";
import type { TxnKVOp } from "../model/index.ts";
import type { StateCommand } from "./commands.ts";
import { check, harness, register, text, utf8, ws } from "./fixtures.test.ts";
import { kvGet, kvReadTxn } from "./queries_kv.ts";
import { WatchSet, waitFor } from "./watch.ts";

const txn = (...ops: TxnKVOp[]): StateCommand => ({ type: "txn", ops: ops.map((KV) => ({ KV })) });
const set = (Key: string, v: string): TxnKVOp => ({ Verb: "set", Key, Value: utf8(v) });

describe("txn", () => {
  test("applies all ops at one index; write results have no value, reads keep theirs", () => {
    const h = harness();
    h.apply(txn(set("a", "1")));
    const r = h.apply(txn(set("b", "2"), { Verb: "get", Key: "a" }, { Verb: "cas", Key: "a", Value: utf8("3"), Index: 1 }, { Verb: "get-tree", Key: "" }, { Verb: "delete", Key: "b" }));
    if (r.type !== "txn") throw new Error(r.type);
    expect(r.Errors).toBeNull();
    expect(r.Results!.map((x) => [x.KV!.Key, text(x.KV!.Value), x.KV!.ModifyIndex])).toEqual([
      ["b", null, 2],
      ["a", "1", 1],
      ["a", null, 2],
      ["a", "3", 2],
      ["b", "2", 2],
    ]);
    expect(kvGet(h.store, ws(), "b").value).toBeNull();
  });

  test("an unchanged set reports the entry's existing ModifyIndex (Consul #7832)", () => {
    const h = harness();
    h.apply(txn(set("a", "1")));
    const r = h.apply(txn(set("a", "1")));
    expect(r).toMatchObject({ type: "txn", Results: [{ KV: { Key: "a", ModifyIndex: 1, Value: null } }] });
  });

  test("a failing op rolls everything back and reports every error with its position", () => {
    const h = harness();
    h.apply(register("n1", { Checks: [check("serfHealth", "passing")] }));
    h.apply({ type: "session", op: "create", session: { ID: "s", Node: "n1" } as never });
    h.apply(txn(set("keep", "old")));
    const w = new WatchSet();
    kvGet(h.store, w, "keep");
    let woke = false;
    void waitFor(w, { clock: h.clock, timeoutMs: 1000 }).then((o) => (woke = o === "changed"));
    const before = h.store.snapshot();
    const r = h.apply(txn(
      set("keep", "new"),
      { Verb: "delete-tree", Key: "" },
      { Verb: "lock", Key: "l", Session: "s" },
      { Verb: "check-index", Key: "keep", Index: 99 },
      { Verb: "get", Key: "nope" },
      { Verb: "cas", Key: "x", Index: 5 },
      { Verb: "delete-cas", Key: "keep", Index: 1 }, // "keep" is gone by now: Consul answers true
      { Verb: "unlock", Key: "u", Session: "s" },
      { Verb: "check-session", Key: "keep", Session: "s" },
      { Verb: "check-not-exists", Key: "l" },
      { Verb: "lock", Key: "m", Session: "ghost" },
      { Verb: "frob" as never, Key: "k" },
    ));
    expect(r).toEqual({
      type: "txn",
      Results: null,
      Errors: [
        { OpIndex: 3, What: 'failed to check index, key "keep" doesn\'t exist' },
        { OpIndex: 4, What: 'key "nope" doesn\'t exist' },
        { OpIndex: 5, What: 'failed to set key "x", index is stale' },
        { OpIndex: 7, What: 'failed to unlock key "u", lock isn\'t held, or is held by another session' },
        { OpIndex: 8, What: 'failed to check session, key "keep" doesn\'t exist' },
        { OpIndex: 9, What: 'key "l" exists' },
        { OpIndex: 10, What: 'invalid session "ghost"' },
        { OpIndex: 11, What: 'unknown KV verb "frob"' },
      ],
    });
    expect(text(kvGet(h.store, ws(), "keep").value!.Value)).toBe("old");
    expect(tables(h.store.snapshot())).toEqual(tables(before));
    expectStillWaiting(h);
    expect(woke).toBe(false);
  });

  test("check-session and check-index errors quote both sides", () => {
    const h = harness();
    h.apply(txn(set("k", "v")));
    const r = h.apply(txn({ Verb: "check-session", Key: "k", Session: "s" }, { Verb: "check-index", Key: "k", Index: 7 }));
    expect(r).toMatchObject({
      Errors: [
        { OpIndex: 0, What: 'failed session check for key "k", current session "" != "s"' },
        { OpIndex: 1, What: 'failed index check for key "k", current modify index 1 != 7' },
      ],
    });
  });

  test("read-only transactions run locally and refuse write verbs", () => {
    const h = harness();
    h.apply(txn(set("a", "1"), set("b", "2")));
    expect(kvReadTxn(h.store, [{ KV: { Verb: "get", Key: "a" } }, { KV: { Verb: "check-index", Key: "b", Index: 1 } }])).toMatchObject({
      index: 1, Errors: null, Results: [{ KV: { Key: "a" } }, { KV: { Key: "b", Value: null } }],
    });
    expect(kvReadTxn(h.store, [{ KV: { Verb: "set", Key: "a" } }])).toEqual({ index: 1, Results: null, Errors: [{ OpIndex: 0, What: '"set" is not a read operation' }] });
  });
});

/** A snapshot without its lastIndex (a rejected command still counts as applied). */
function tables(snap: Uint8Array): unknown {
  const doc = JSON.parse(new TextDecoder().decode(snap));
  delete doc.lastIndex;
  return doc;
}

/** The wait registered above is still pending: nothing it watched fired. */
function expectStillWaiting(h: ReturnType<typeof harness>): void {
  expect(h.store.hub.waiting).toBe(1);
}
