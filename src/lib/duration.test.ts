import { describe, expect, test } from "bun:test";
import { formatDuration, parseDuration } from "./duration.ts";

describe("durations", () => {
  test("parse Go durations into milliseconds", () => {
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("1m30s")).toBe(90_000);
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("72h")).toBe(259_200_000);
    expect(parseDuration("1.5h")).toBe(5_400_000);
    expect(parseDuration("0")).toBe(0);
    expect(parseDuration("-2s")).toBe(-2000);
    expect(parseDuration("10us")).toBeCloseTo(0.01);
  });

  test("reject text that is not a duration, naming it", () => {
    for (const bad of ["", "30", "s", "1x", "1s2", "--1s", "1 s"]) expect(() => parseDuration(bad)).toThrow(RangeError);
    expect(() => parseDuration("30")).toThrow('invalid duration "30"');
  });

  test("format like Go", () => {
    expect(formatDuration(90_000)).toBe("1m30s");
    expect(formatDuration(500)).toBe("500ms");
    expect(formatDuration(3_600_000)).toBe("1h0m0s");
    expect(formatDuration(0)).toBe("0s");
  });
});

describe("duration range", () => {
  test("durations beyond Go's int64 nanoseconds are refused, not rounded", () => {
    expect(parseDuration("2562047h")).toBe(2562047 * 3_600_000);
    expect(() => parseDuration("2562048h")).toThrow("out of range");
    expect(() => parseDuration("99999999999999999999s")).toThrow("out of range");
  });
});
