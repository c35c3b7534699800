import { describe, expect, test } from "bun:test";
import { CA_CHANGE_JITTER_WINDOW_MS, leafRenewalWindow, shouldRotateLeaf } from "./index.ts";

const H = 3_600_000;
const T0 = Date.UTC(2024, 0, 1);
/** An rng that returns the given values in turn. */
const seq = (...v: number[]) => ({ next: () => v.shift() ?? 0 });

describe("leafRenewalWindow (calculateSoftExpiry)", () => {
  test.each([
    ["fresh 72h leaf: 60%..90%", 0, T0 + 43.2 * H, T0 + 64.8 * H],
    ["inside the soft band: now..90%", 50 * H, T0 + 50 * H, T0 + 64.8 * H],
    ["exactly at 90%: still the band", 64.8 * H, T0 + 64.8 * H, T0 + 64.8 * H],
    ["past 90%: now", 70 * H, T0 + 70 * H, T0 + 70 * H],
    ["expired: now", 100 * H, T0 + 100 * H, T0 + 100 * H],
  ])("%s", (_name, age, earliest, latest) => {
    expect(leafRenewalWindow(T0, T0 + 72 * H, T0 + age)).toEqual({ earliest, latest });
  });

  test("a lifetime under 10 minutes renews now", () => {
    expect(leafRenewalWindow(T0, T0 + 9 * 60_000, T0 + 1)).toEqual({ earliest: T0 + 1, latest: T0 + 1 });
  });
});

describe("shouldRotateLeaf", () => {
  const leaf = { validAfter: T0, validBefore: T0 + 72 * H, signingKeyId: "aa:bb", activeSigningKeyId: "aa:bb" };

  test.each([
    ["fresh leaf, rng 0 -> at 60%", 1 * H, [0], false, T0 + 43.2 * H, "expiry"],
    ["fresh leaf, rng 0.5 -> at 75%", 1 * H, [0.5], false, T0 + 54 * H, "expiry"],
    ["fresh leaf, rng ~1 -> just before 90%", 1 * H, [0.999999999], false, T0 + 64.8 * H - 1, "expiry"],
    ["in the band, rng 0 -> now", 50 * H, [0], true, T0 + 50 * H, "expiry"],
    ["past 90% -> now", 66 * H, [0.7], true, T0 + 66 * H, "expiry"],
    ["expired -> now", 80 * H, [0.7], true, T0 + 80 * H, "expiry"],
  ])("%s", (_n, age, draws, rotate, renewAt, reason) => {
    expect(shouldRotateLeaf({ ...leaf, now: T0 + age, rng: seq(...draws) })).toEqual({ rotate, renewAt, reason: reason as "expiry" });
  });

  test("root changed: renew within the 30 s jitter window from now", () => {
    const now = T0 + H;
    expect(shouldRotateLeaf({ ...leaf, activeSigningKeyId: "cc:dd", now, rng: seq(0.5, 0) })).toEqual({ rotate: true, renewAt: now, reason: "root-changed" });
    const later = shouldRotateLeaf({ ...leaf, activeSigningKeyId: "cc:dd", now, rng: seq(0.5, 0.5) });
    expect(later).toEqual({ rotate: false, renewAt: now + CA_CHANGE_JITTER_WINDOW_MS / 2, reason: "root-changed" });
  });

  test("root changed but expiry comes first: expiry wins", () => {
    const now = T0 + 66 * H;
    expect(shouldRotateLeaf({ ...leaf, activeSigningKeyId: "cc:dd", now, rng: seq(0, 0.5) })).toEqual({ rotate: true, renewAt: now, reason: "expiry" });
  });

  test("key IDs compare case-insensitively; an unknown active key is no change", () => {
    expect(shouldRotateLeaf({ ...leaf, activeSigningKeyId: "AA:BB", now: T0 + H, rng: seq(0, 0) }).reason).toBe("expiry");
    expect(shouldRotateLeaf({ ...leaf, activeSigningKeyId: "", now: T0 + H, rng: seq(0, 0) }).rotate).toBe(false);
  });

  test("a forced renewal time (earlier root change) is kept", () => {
    const now = T0 + H;
    expect(shouldRotateLeaf({ ...leaf, now, rng: seq(0.5), forceRenewAt: now + 10_000 })).toEqual({ rotate: false, renewAt: now + 10_000, reason: "root-changed" });
    expect(shouldRotateLeaf({ ...leaf, now: now + 10_000, rng: seq(0.5), forceRenewAt: now + 10_000 }).rotate).toBe(true);
  });
});
