import { describe, expect, test } from "bun:test";
import type { KVWrite, KVWriteVerb } from "../model/index.ts";
import type { StateCommand } from "./commands.ts";
import { harness, text, utf8, ws } from "./fixtures.test.ts";
import { kvGet, kvKeys, kvList } from "./queries_kv.ts";

const kv = (op: KVWriteVerb, Key: string, more: Partial<KVWrite> = {}): StateCommand => ({ type: "kv", op, entry: { Key, ...more } });
const put = (Key: string, v: string, more: Partial<KVWrite> = {}) => kv("set", Key, { Value: utf8(v), ...more });

describe("kv writes", () => {
  test("set creates then updates, keeping CreateIndex; get reports the entry's ModifyIndex", () => {
    const h = harness();
    expect(h.apply(put("a", "1", { Flags: 7 }))).toEqual({ type: "kv", ok: true });
    h.apply(put("b", "x"));
    h.apply(put("a", "2"));
    const r = kvGet(h.store, ws(), "a");
    expect(r.index).toBe(3);
    expect({ ...r.value!, Value: text(r.value!.Value) }).toEqual({ LockIndex: 0, Key: "a", Flags: 0, Value: "2", CreateIndex: 1, ModifyIndex: 3 });
    expect(kvGet(h.store, ws(), "missing")).toEqual({ index: 3, value: null });
  });

  test("setting the same value again writes nothing", () => {
    const h = harness();
    h.apply(put("a", "1"));
    h.apply(put("a", "1"));
    expect(kvGet(h.store, ws(), "a").value!.ModifyIndex).toBe(1);
    expect(h.store.db.indexes.get("kvs")).toBe(1);
  });

  test.each([
    ["cas 0 on a missing key", [], kv("cas", "k", { Value: utf8("v"), ModifyIndex: 0 }), true],
    ["cas 0 on an existing key", [put("k", "v")], kv("cas", "k", { Value: utf8("w"), ModifyIndex: 0 }), false],
    ["cas with the current index", [put("k", "v")], kv("cas", "k", { Value: utf8("w"), ModifyIndex: 1 }), true],
    ["cas with a stale index", [put("k", "v"), put("k", "w")], kv("cas", "k", { Value: utf8("x"), ModifyIndex: 1 }), false],
    ["cas on a missing key with an index", [], kv("cas", "k", { Value: utf8("x"), ModifyIndex: 5 }), false],
    ["delete-cas with the current index", [put("k", "v")], kv("delete-cas", "k", { ModifyIndex: 1 }), true],
    ["delete-cas with a stale index", [put("k", "v")], kv("delete-cas", "k", { ModifyIndex: 9 }), false],
    ["delete-cas on a missing key (Consul answers true)", [], kv("delete-cas", "k", { ModifyIndex: 9 }), true],
  ] as const)("%s", (_: string, setup: readonly StateCommand[], cmd: StateCommand, want: boolean) => {
    const h = harness();
    for (const c of setup) h.apply(c);
    expect(h.apply(cmd)).toEqual({ type: "kv", ok: want });
  });

  test("delete leaves a tombstone so the list index of the prefix moves forward", () => {
    const h = harness();
    h.apply(put("foo/a", "1"));
    h.apply(put("foo/b", "2"));
    h.apply(put("bar", "3"));
    expect(kvList(h.store, ws(), "foo/").index).toBe(2);
    h.apply(kv("delete", "foo/b"));
    const r = kvList(h.store, ws(), "foo/");
    expect(r.value.map((e) => e.Key)).toEqual(["foo/a"]);
    expect(r.index).toBe(4);
    expect(h.store.db.tombstones.get("foo/b")).toBe(4);
    h.apply(kv("delete", "foo/nope"));
    expect(h.store.db.indexes.get("kvs")).toBe(4);
  });

  test("delete-tree removes a subtree with one tombstone at the prefix; the whole store leaves none", () => {
    const h = harness();
    for (const k of ["a/1", "a/2", "a/b/3", "ab", "b"]) h.apply(put(k, k));
    h.apply(kv("delete-tree", "a/"));
    expect(kvKeys(h.store, ws(), "").value).toEqual(["ab", "b"]);
    expect([...h.store.db.tombstones]).toEqual([["a/", 6]]);
    expect(kvList(h.store, ws(), "a/")).toEqual({ index: 6, value: [] });
    h.apply(kv("delete-tree", ""));
    expect(h.store.db.kvs.size).toBe(0);
    expect([...h.store.db.tombstones.keys()]).toEqual(["a/"]);
    expect(kvList(h.store, ws(), "")).toEqual({ index: 7, value: [] });
  });

  test("tombstone-reap drops tombstones up to the index without touching the index table", () => {
    const h = harness();
    h.apply(put("x", "1"));
    h.apply(put("y", "1"));
    h.apply(kv("delete", "x"));
    h.apply(kv("delete", "y"));
    h.apply({ type: "tombstone-reap", reapIndex: 3 });
    expect([...h.store.db.tombstones]).toEqual([["y", 4]]);
    expect(h.store.db.indexes.get("tombstones")).toBe(4);
  });

  test("tombstones hint the GC hook after commit", () => {
    const hints: number[] = [];
    const h = harness({ onTombstone: (i) => hints.push(i) });
    h.apply(put("x", "1"));
    h.apply(kv("delete", "x"));
    h.apply(kv("delete", "x"));
    expect(hints).toEqual([2]);
  });
});

describe("kv reads", () => {
  test("list in key order with the highest ModifyIndex under the prefix", () => {
    const h = harness();
    for (const k of ["b", "a/2", "a/1", "a", "c"]) h.apply(put(k, k));
    const r = kvList(h.store, ws(), "a");
    expect(r.value.map((e) => e.Key)).toEqual(["a", "a/1", "a/2"]);
    expect(r.index).toBe(4);
    expect(kvList(h.store, ws(), "").index).toBe(5);
  });

  test("keys with a separator cut at the first separator after the prefix, deduplicated", () => {
    const h = harness();
    for (const k of ["web/a", "web/b/c", "web/b/d", "web/e/", "webx", "web/"]) h.apply(put(k, "v"));
    expect(kvKeys(h.store, ws(), "web/", "/").value).toEqual(["web/", "web/a", "web/b/", "web/e/"]);
    expect(kvKeys(h.store, ws(), "", "/").value).toEqual(["web/", "webx"]);
    expect(kvKeys(h.store, ws(), "web").value).toEqual(["web/", "web/a", "web/b/c", "web/b/d", "web/e/", "webx"]);
  });
});
