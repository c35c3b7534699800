import { describe, expect, test } from "bun:test";
import { isDiskFull, reopenDelayMs } from "./storage_outage.ts";

describe("isDiskFull", () => {
  test("a full disk or quota is waited out; any other failure is not", () => {
    const err = (code: unknown) => Object.assign(new Error("write failed"), { code });
    expect(isDiskFull(err("ENOSPC"))).toBe(true);
    expect(isDiskFull(err("EDQUOT"))).toBe(true);
    expect(isDiskFull(err("EIO"))).toBe(false);
    expect(isDiskFull(new Error("ENOSPC in the message only"))).toBe(false);
    expect(isDiskFull(undefined)).toBe(false);
    expect(isDiskFull("ENOSPC")).toBe(false);
  });
});

describe("reopenDelayMs", () => {
  test("doubles from the first wait, up to 30 s", () => {
    expect([0, 1, 2, 3, 4, 5].map((a) => reopenDelayMs(1000, a))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000]);
    expect(reopenDelayMs(200, 40)).toBe(30_000);
  });
});
