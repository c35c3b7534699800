import { describe, expect, test } from "bun:test";
import type { KvPair } from "./api.ts";
import {
  acquireWaitMs, cleanPath, defaultSessionName, durToMsec, exitErrorText, joinPath, LOCK_FLAG_VALUE, lockDestroyStep, lockReadStep, lockStillHeld, refusedAcquireStep,
} from "./core.ts";

const pair = (o: Partial<KvPair> = {}): KvPair => ({ Key: "p/.lock", Flags: LOCK_FLAG_VALUE, Value: null, Session: "", ModifyIndex: 7n, ...o });

describe("Go's path.Join and path.Clean", () => {
  test.each([
    [["svc/leader", ".lock"], "svc/leader/.lock"],
    [["svc/leader/", ".lock"], "svc/leader/.lock"],
    [["a//b/./c", ".lock"], "a/b/c/.lock"],
    [["", ".lock"], ".lock"],
    [["a/..", ".lock"], ".lock"],
    [["../x", ".lock"], "../x/.lock"],
    [["/", "s1"], "/s1"],
    [["", ""], ""],
  ] as Array<[string[], string]>)("join(%p) = %p", (elems: string[], want: string) => {
    expect(joinPath(...elems)).toBe(want);
  });

  test("clean", () => {
    expect(["", "/", "a/b/", "/../a", "a/../../b", "./"].map(cleanPath)).toEqual([".", "/", "a/b", "/a", "../b", "."]);
  });
});

describe("the lock-mode decisions of api.Lock", () => {
  test("reading the key while acquiring", () => {
    expect(lockReadStep(undefined, "s1")).toBe("acquire");
    expect(lockReadStep(pair(), "s1")).toBe("acquire");
    expect(lockReadStep(pair({ Session: "s1" }), "s1")).toBe("held");
    expect(lockReadStep(pair({ Session: "s2" }), "s1")).toBe("wait");
    expect(lockReadStep(pair({ Flags: 0n }), "s1")).toBe("conflict");
    expect(lockReadStep(pair({ Flags: 0xe0f69a2baa414de0n, Session: "s1" }), "s1")).toBe("conflict");
  });

  test("after a refused acquire: wait on a holder, else a lock-delay pause", () => {
    expect(refusedAcquireStep(pair({ Session: "s2" }))).toBe("wait");
    expect(refusedAcquireStep(pair())).toBe("retry-later");
    expect(refusedAcquireStep(undefined)).toBe("retry-later");
  });

  test("monitoring: held only while our session holds the key", () => {
    expect([lockStillHeld(pair({ Session: "s1" }), "s1"), lockStillHeld(pair({ Session: "s2" }), "s1"), lockStillHeld(pair(), "s1"), lockStillHeld(undefined, "s1")]).toEqual([true, false, false, false]);
  });

  test("destroy: absent, conflict, in use, or delete at the key's index", () => {
    expect(lockDestroyStep(undefined)).toEqual({ kind: "absent" });
    expect(lockDestroyStep(pair({ Flags: 1n }))).toEqual({ kind: "conflict" });
    expect(lockDestroyStep(pair({ Session: "s2" }))).toEqual({ kind: "in-use" });
    expect(lockDestroyStep(pair())).toEqual({ kind: "delete", index: 7n });
  });
});

describe("waits and wording", () => {
  test("acquireWaitMs: the full wait without -timeout; the rest of the budget with it; nothing once it is spent", () => {
    expect(acquireWaitMs({ tryOnce: false, waitMs: 15_000, attempts: 9, elapsedMs: 1e9 })).toBe(15_000);
    expect(acquireWaitMs({ tryOnce: true, waitMs: 2_000, attempts: 0, elapsedMs: 0 })).toBe(2_000);
    expect(acquireWaitMs({ tryOnce: true, waitMs: 2_000, attempts: 1, elapsedMs: 500 })).toBe(1_500);
    expect(acquireWaitMs({ tryOnce: true, waitMs: 2_000, attempts: 1, elapsedMs: 2_000 })).toBeUndefined();
  });

  test("durToMsec truncates to whole ms, at least 1ms when positive", () => {
    expect([15_000, 1_500.9, 0.2, 0].map(durToMsec)).toEqual(["15000ms", "1500ms", "1ms", "0ms"]);
  });

  test("the default session name names the child and the prefix", () => {
    expect(defaultSessionName(["echo", "a b"], "svc")).toBe("Consul lock for 'echo a b' at 'svc'");
  });

  test("exitErrorText: Go's exec.ExitError texts", () => {
    expect(exitErrorText({ code: 0, signal: null })).toBeUndefined();
    expect(exitErrorText({ code: 3, signal: null })).toBe("exit status 3");
    expect(exitErrorText({ code: null, signal: "SIGTERM" })).toBe("signal: terminated");
    expect(exitErrorText({ code: null, signal: "SIGKILL" })).toBe("signal: killed");
    expect(exitErrorText({ code: null, signal: "SIGINT" })).toBe("signal: interrupt");
    expect(exitErrorText({ code: null, signal: "SIGWINCH" })).toBe("signal: SIGWINCH");
  });
});
