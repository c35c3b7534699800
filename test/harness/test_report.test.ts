import { describe, expect, test } from "bun:test";
import { failureDetails, formatFailureDetails } from "./test_report.ts";

const RUN = [
  "bun test v1.4.5",
  "",
  "src/a.test.ts:",
  "(pass) a > first [1.00ms]",
  "42 |   expect(x).toBe(1);",
  "error: expect(received).toBe(expected)",
  "Expected: 1",
  "Received: 2",
  "(fail) a > second [2.00ms]",
  "(pass) a > third [1.00ms]",
  "",
  "src/b.test.ts:",
  "error: boom before any test",
  "(fail) b > only [3.00ms]",
  "",
  "2 tests failed:",
  "(fail) a > second [2.00ms]",
  "(fail) b > only [3.00ms]",
  "",
  " 2 pass",
  " 2 fail",
].join("\n");

describe("failure details from bun test output", () => {
  test("each failed test with the lines printed for it; the closing list adds nothing", () => {
    expect(failureDetails(RUN)).toEqual([
      { test: "(fail) a > second [2.00ms]", lines: ["42 |   expect(x).toBe(1);", "error: expect(received).toBe(expected)", "Expected: 1", "Received: 2"], omitted: 0 },
      { test: "(fail) b > only [3.00ms]", lines: ["error: boom before any test"], omitted: 0 },
    ]);
  });

  test("long output keeps its last lines and says how many were left off", () => {
    const long = ["x.test.ts:", ...Array.from({ length: 10 }, (_, i) => `line ${i}`), "(fail) x > y"].join("\n");
    const [d] = failureDetails(long, 3);
    expect(d).toEqual({ test: "(fail) x > y", lines: ["line 7", "line 8", "line 9"], omitted: 7 });
    expect(formatFailureDetails([d!])).toBe("==== 1 failed test, repeated with what was printed for each ====\n(fail) x > y\n  … 7 earlier lines left off\n  line 7\n  line 8\n  line 9");
  });

  test("a clean run has nothing to repeat", () => {
    expect(failureDetails("src/a.test.ts:\n(pass) a [1ms]\n\n 1 pass\n 0 fail")).toEqual([]);
    expect(formatFailureDetails([])).toBe("");
  });
});
