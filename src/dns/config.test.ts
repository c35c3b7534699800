import { expect, test } from "bun:test";
import { serviceTtlFor } from "./config.ts";

test("serviceTtlFor: exact name, then the longest matching prefix*, then *, then 0", () => {
  const ttls = { web: 5, "we*": 7, "w*": 9, "*": 11 };
  expect(["web", "west", "www", "db"].map((s) => serviceTtlFor(ttls, s))).toEqual([5, 7, 9, 11]);
  expect(serviceTtlFor({}, "web")).toBe(0);
});

test("serviceTtlFor: services named like Object.prototype members get the configured TTLs, not its functions", () => {
  for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    expect(serviceTtlFor({}, name)).toBe(0);
    expect(serviceTtlFor({ "*": 3 }, name)).toBe(3);
    expect(serviceTtlFor(Object.fromEntries([[name, 4]]), name)).toBe(4);
  }
});
