import { describe, expect, test } from "bun:test";
import { Awareness } from "./awareness.ts";
import { BroadcastQueue } from "./broadcast_queue.ts";
import { LAN_PROFILE, LOCAL_PROFILE, WAN_PROFILE, memberlistConfig, pushPullScaleMs, retransmitLimit, suspicionTimeoutMs } from "./config.ts";
import { Suspicion, remainingSuspicionTime } from "./suspicion.ts";

const b = (n: number, len = 10) => new Uint8Array(len).fill(n);

describe("broadcast queue", () => {
  test("newer information about a node invalidates older", () => {
    const q = new BroadcastQueue();
    const old = q.queue("n1", b(1));
    q.queue("n2", b(2));
    const newer = q.queue("n1", b(3));
    expect(q.has(old)).toBe(false);
    expect(q.has(newer)).toBe(true);
    expect(q.length).toBe(2);
    expect(q.take(0, 1000, 10)).toEqual([b(3), b(2)]); // newest first among equals
  });

  test("retransmit limit retires a broadcast; fewest transmits go first", () => {
    const q = new BroadcastQueue();
    q.queue("a", b(1));
    for (let i = 0; i < 2; i++) expect(q.take(0, 1000, 3)).toEqual([b(1)]);
    q.queue("b", b(2));
    expect(q.take(0, 1000, 3)).toEqual([b(2), b(1)]);
    expect(q.transmitsOf("a")).toBeUndefined(); // third transmit retired it
    expect(q.transmitsOf("b")).toBe(1);
  });

  test("byte budget and count cap", () => {
    const q = new BroadcastQueue();
    q.queue("a", b(1, 100));
    q.queue("b", b(2, 100));
    q.queue("c", b(3, 10));
    expect(q.take(2, 120, 5)).toEqual([b(3, 10), b(2, 100)]);
    expect(q.take(2, 1000, 5, 1)).toEqual([b(1, 100)]);
  });
});

describe("timing math", () => {
  test("profiles match the issue and memberlist defaults", () => {
    expect([LAN_PROFILE.probeIntervalMs, LAN_PROFILE.probeTimeoutMs, LAN_PROFILE.gossipIntervalMs, LAN_PROFILE.suspicionMult, LAN_PROFILE.pushPullIntervalMs]).toEqual([1000, 500, 200, 4, 30_000]);
    expect([WAN_PROFILE.probeIntervalMs, WAN_PROFILE.probeTimeoutMs, WAN_PROFILE.gossipIntervalMs, WAN_PROFILE.suspicionMult, WAN_PROFILE.pushPullIntervalMs]).toEqual([5000, 3000, 500, 6, 60_000]);
    expect([LAN_PROFILE.gossipNodes, LAN_PROFILE.indirectChecks, LAN_PROFILE.retransmitMult, LAN_PROFILE.gossipToTheDeadTimeMs, LAN_PROFILE.awarenessMaxMultiplier, LAN_PROFILE.suspicionMaxTimeoutMult]).toEqual([3, 3, 4, 30_000, 8, 6]);
    expect([WAN_PROFILE.gossipNodes, WAN_PROFILE.gossipToTheDeadTimeMs]).toEqual([4, 60_000]);
    expect(LOCAL_PROFILE.probeTimeoutMs).toBeLessThan(LAN_PROFILE.probeTimeoutMs);
    expect(() => memberlistConfig("lan", { name: "", addr: "x" })).toThrow(RangeError);
    expect(() => memberlistConfig("lan", { name: "a", addr: "x" }, { probeTimeoutMs: 2000 })).toThrow(/probeTimeoutMs/);
  });

  test("suspicion timeout, retransmit limit and push-pull scale follow memberlist", () => {
    expect(suspicionTimeoutMs(4, 1, 1000)).toBe(4000);
    expect(suspicionTimeoutMs(4, 10, 1000)).toBe(4000);
    expect(suspicionTimeoutMs(4, 100, 1000)).toBe(8000);
    expect(suspicionTimeoutMs(4, 1000, 1000)).toBe(12000);
    expect(retransmitLimit(4, 0)).toBe(0);
    expect(retransmitLimit(4, 9)).toBe(4);
    expect(retransmitLimit(4, 10)).toBe(8);
    expect(retransmitLimit(4, 99)).toBe(8);
    expect(pushPullScaleMs(30_000, 32)).toBe(30_000);
    expect(pushPullScaleMs(30_000, 33)).toBe(60_000);
    expect(pushPullScaleMs(30_000, 64)).toBe(60_000);
    expect(pushPullScaleMs(30_000, 65)).toBe(90_000);
  });
});

describe("suspicion (Lifeguard)", () => {
  test("starts at max, shrinks with each new independent confirmation, reaches min at k", () => {
    const s = new Suspicion("accuser", 3, 2000, 30_000, 100);
    expect(s.deadline).toBe(30_100);
    expect(s.confirm("accuser")).toBe(false); // the first accuser does not count
    expect(s.confirm("b")).toBe(true);
    const d1 = s.deadline;
    expect(d1).toBe(100 + remainingSuspicionTime(1, 3, 2000, 30_000));
    expect(d1).toBeLessThan(30_100);
    expect(s.confirm("b")).toBe(false);
    expect(s.confirm("c")).toBe(true);
    expect(s.deadline).toBeLessThan(d1);
    expect(s.confirm("d")).toBe(true);
    expect(s.deadline).toBe(2100);
    expect(s.confirm("e")).toBe(false); // k reached
  });

  test("k < 1 means the minimum from the start", () => {
    expect(new Suspicion("a", 0, 2000, 12_000, 0).deadline).toBe(2000);
  });
});

describe("awareness", () => {
  test("clamps to [0, max-1] and scales timeouts", () => {
    const a = new Awareness(8);
    a.applyDelta(-1);
    expect(a.getHealthScore()).toBe(0);
    a.applyDelta(3);
    expect(a.scale(1000)).toBe(4000);
    a.applyDelta(100);
    expect(a.getHealthScore()).toBe(7);
    expect(a.scale(500)).toBe(4000);
  });
});
