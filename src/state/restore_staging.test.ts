import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { decodeCommand, encodeCommand } from "./codec.ts";
import type { StateCommand } from "./commands.ts";
import { harness, ok, register, utf8, ws } from "./fixtures.test.ts";
import { catalogNodes } from "./queries_catalog.ts";
import { kvGet } from "./queries_kv.ts";
import { createStateMachine } from "./state_machine.ts";

/** A user snapshot holding key `k` = `value` and node `node`. */
function snapshotWith(value: string, node = "restored"): Uint8Array {
  const h = harness();
  h.apply(register(node));
  h.apply({ type: "kv", op: "set", entry: { Key: "k", Value: utf8(value) } });
  return h.store.snapshot();
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** The restore-stage commands of `data` in chunks of `chunk` bytes (without the commit). */
function staged(id: string, data: Uint8Array, chunk: number): StateCommand[] {
  const n = Math.max(1, Math.ceil(data.length / chunk));
  return [
    { type: "restore-stage", op: "begin", id, chunks: n, size: data.length, sha256: sha(data) },
    ...Array.from({ length: n }, (_, seq): StateCommand => ({ type: "restore-stage", op: "chunk", id, seq, data: data.subarray(seq * chunk, (seq + 1) * chunk) })),
  ];
}

const commit = (id: string): StateCommand => ({ type: "restore-stage", op: "commit", id });
const value = (h: ReturnType<typeof harness>) => new TextDecoder().decode(kvGet(h.store, ws(), "k").value?.Value ?? new Uint8Array());

describe("restore in chunks", () => {
  test("chunks change nothing until the commit, which replaces the whole state at its index", () => {
    const h = harness();
    h.apply(register("old"));
    h.apply({ type: "kv", op: "set", entry: { Key: "k", Value: utf8("before") } });
    const snap = snapshotWith("after");
    for (const c of staged("r1", snap, 100)) expect(h.apply(c)).toEqual(ok);
    expect(value(h)).toBe("before");
    expect(h.store.stagedRestore()).toMatchObject({ id: "r1", chunks: Math.ceil(snap.length / 100), received: Math.ceil(snap.length / 100) });
    expect(h.apply(commit("r1"))).toEqual(ok);
    expect(value(h)).toBe("after");
    expect(catalogNodes(h.store, ws()).value.map((n) => n.Node)).toEqual(["restored"]);
    expect(h.store.lastIndex()).toBe(h.idx);
    expect(h.store.stagedRestore()).toBeUndefined();
  });

  test("a commit with a missing chunk, a wrong size or a wrong checksum fails and changes nothing", () => {
    const snap = snapshotWith("after");
    const cases: [string, (cs: StateCommand[]) => StateCommand[], RegExp][] = [
      ["missing chunk", (cs) => cs.filter((c) => !(c.type === "restore-stage" && c.op === "chunk" && c.seq === 1)), /missing chunk 1 of/],
      ["wrong size", (cs) => cs.map((c) => (c.type === "restore-stage" && c.op === "begin" ? { ...c, size: c.size + 1 } : c)), /bytes, not the .* announced/],
      ["wrong checksum", (cs) => cs.map((c) => (c.type === "restore-stage" && c.op === "begin" ? { ...c, sha256: "0".repeat(64) } : c)), /does not match its SHA-256/],
    ];
    for (const [name, mangle, error] of cases) {
      const h = harness();
      h.apply({ type: "kv", op: "set", entry: { Key: "k", Value: utf8("before") } });
      const before = h.store.snapshot();
      for (const c of mangle(staged("r1", snap, 100))) h.apply(c);
      const r = h.apply(commit("r1"));
      expect([name, r.type, r.type === "error" && error.test(r.error)]).toEqual([name, "error", true]);
      expect(value(h)).toBe("before");
      expect(JSON.parse(new TextDecoder().decode(h.store.snapshot())).kvs).toEqual(JSON.parse(new TextDecoder().decode(before)).kvs);
      expect(h.store.stagedRestore()).toBeUndefined();
    }
  });

  test("a commit of bytes that are not a snapshot fails and changes nothing", () => {
    const h = harness();
    h.apply({ type: "kv", op: "set", entry: { Key: "k", Value: utf8("before") } });
    for (const c of staged("r1", utf8("not json"), 3)) h.apply(c);
    expect(h.apply(commit("r1"))).toEqual({ type: "error", error: "invalid state snapshot: not JSON" });
    expect(value(h)).toBe("before");
  });

  test("a newer begin replaces an abandoned restore; abort drops it; chunks of a replaced restore are refused", () => {
    const h = harness();
    const snap = snapshotWith("after");
    const [begin1, chunk1] = staged("r1", snap, snap.length);
    h.apply(begin1!);
    for (const c of staged("r2", snap, 50)) h.apply(c);
    const late = h.apply(chunk1!);
    expect(late).toEqual({ type: "error", error: "restore r1 is not staged (a newer restore replaced it, or it was aborted)" });
    expect(h.apply(commit("r1")).type).toBe("error");
    expect(h.apply({ type: "restore-stage", op: "abort", id: "r2" })).toEqual(ok);
    expect(h.store.stagedRestore()).toBeUndefined();
    expect(h.apply(commit("r2")).type).toBe("error");
  });

  test("out-of-range chunks and more bytes than announced are refused; a chunk sent twice counts once", () => {
    const h = harness();
    h.apply({ type: "restore-stage", op: "begin", id: "r", chunks: 2, size: 4, sha256: sha(utf8("abcd")) });
    expect(h.apply({ type: "restore-stage", op: "chunk", id: "r", seq: 2, data: utf8("x") })).toEqual({ type: "error", error: "chunk 2 is out of range: restore r has 2 chunks" });
    expect(h.apply({ type: "restore-stage", op: "chunk", id: "r", seq: 0, data: utf8("abcde") }).type).toBe("error");
    expect(h.apply({ type: "restore-stage", op: "chunk", id: "r", seq: 0, data: utf8("ab") })).toEqual(ok);
    expect(h.apply({ type: "restore-stage", op: "chunk", id: "r", seq: 0, data: utf8("ab") })).toEqual(ok);
    expect(h.store.stagedRestore()?.received).toBe(1);
    expect(h.apply({ type: "restore-stage", op: "begin", id: "q", chunks: 0, size: 0, sha256: sha(utf8("")) }).type).toBe("error");
  });

  test("staged chunks travel in the replica snapshot (a server restarting mid-restore keeps them), not in the user's", () => {
    const src = harness();
    const sm = createStateMachine(src.store);
    const snap = snapshotWith("after");
    const cmds = staged("r1", snap, 64);
    const half = Math.ceil(cmds.length / 2);
    let i = 0;
    for (; i < half; i++) sm.apply(i + 1, encodeCommand(cmds[i]!));
    expect(JSON.parse(new TextDecoder().decode(src.store.snapshot())).restoreStaging).toBeUndefined();

    // A follower installs the Raft snapshot taken half-way, then applies the rest of the log.
    const follower = harness();
    const fsm = createStateMachine(follower.store);
    fsm.restore(sm.snapshot());
    expect(follower.store.stagedRestore()).toEqual(src.store.stagedRestore());
    for (; i < cmds.length; i++) {
      sm.apply(i + 1, encodeCommand(cmds[i]!));
      fsm.apply(i + 1, encodeCommand(cmds[i]!));
    }
    const c = encodeCommand(commit("r1"));
    expect([sm.apply(i + 1, c), fsm.apply(i + 1, c)]).toEqual([ok, ok]);
    expect(follower.store.snapshot()).toEqual(src.store.snapshot());
    expect(value(follower)).toBe("after");
  });

  test("the commands round-trip through the log codec", () => {
    for (const c of [...staged("r1", utf8("hello world"), 4), commit("r1"), { type: "restore-stage", op: "abort", id: "r1" } as StateCommand]) {
      expect(decodeCommand(encodeCommand(c))).toEqual(c);
    }
    expect(() => decodeCommand(utf8(JSON.stringify({ type: "restore-stage", op: "begin", id: "r", chunks: 1, size: 1, sha256: "xyz" })))).toThrow("sha256 must be 64 lowercase hex digits");
    expect(() => decodeCommand(utf8(JSON.stringify({ type: "restore-stage", op: "chunk", id: "r", seq: -1, data: "" })))).toThrow("seq must be a non-negative integer");
    expect(() => decodeCommand(utf8(JSON.stringify({ type: "restore-stage", op: "merge", id: "r" })))).toThrow("op must be begin, chunk, commit or abort");
  });
});
