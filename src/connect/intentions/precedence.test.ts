/** Precedence (UpdatePrecedence / countExact) and the IntentionPrecedenceSorter order, as tables. */
import { describe, expect, test } from "bun:test";
import { compareIntentions, countExact, intentionPrecedence, intentionString, sortIntentions, type IntentionTuple } from "./index.ts";
import { compareGoStrings } from "./precedence.ts";

const tuple = (src: string, dst: string): IntentionTuple => {
  const [SourceNS, SourceName] = src.split("/") as [string, string];
  const [DestinationNS, DestinationName] = dst.split("/") as [string, string];
  return { SourceNS, SourceName, DestinationNS, DestinationName };
};

/** Every valid exact/wildcard combination: source down, destination across. */
const TABLE: readonly (readonly [string, string, number])[] = [
  ["default/web", "default/db", 9],
  ["default/*", "default/db", 8],
  ["*/*", "default/db", 7],
  ["default/web", "default/*", 6],
  ["default/*", "default/*", 5],
  ["*/*", "default/*", 4],
  ["default/web", "*/*", 3],
  ["default/*", "*/*", 2],
  ["*/*", "*/*", 1],
];

describe("intentionPrecedence", () => {
  test.each(TABLE)("%s => %s has precedence %i", (src, dst, want) => {
    expect(intentionPrecedence(tuple(src, dst))).toBe(want);
  });

  test("an exact destination beats every wildcard destination, whatever the source", () => {
    const minExactDst = Math.min(...TABLE.filter(([, d]) => d === "default/db").map(([, , p]) => p));
    const maxWildDst = Math.max(...TABLE.filter(([, d]) => d !== "default/db").map(([, , p]) => p));
    expect(minExactDst).toBeGreaterThan(maxWildDst);
  });

  test("countExact: a wildcard namespace counts 0 even with an exact name (an invalid combination)", () => {
    expect(countExact("default", "web")).toBe(2);
    expect(countExact("default", "*")).toBe(1);
    expect(countExact("*", "*")).toBe(0);
    expect(countExact("*", "web")).toBe(0);
    expect(intentionPrecedence(tuple("*/web", "*/db"))).toBe(1);
  });
});

describe("ordering", () => {
  const withPrec = (src: string, dst: string) => ({ ...tuple(src, dst), Precedence: intentionPrecedence(tuple(src, dst)) });

  test("sorts the whole table highest precedence first, from any starting order", () => {
    const all = TABLE.map(([s, d]) => withPrec(s, d));
    for (const start of [all, [...all].reverse(), [all[4]!, all[0]!, all[8]!, all[2]!, all[6]!, all[1]!, all[7]!, all[3]!, all[5]!]]) {
      expect(sortIntentions(start).map((x) => x.Precedence)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1]);
    }
  });

  test("ties break on SourceNS, SourceName, DestinationNS, DestinationName, case-sensitively", () => {
    const list = [
      withPrec("default/web", "default/db"),
      withPrec("default/api", "default/db"),
      withPrec("default/api", "default/cache"),
      withPrec("a/web", "default/db"),
      withPrec("default/Web", "default/db"),
      withPrec("default/api", "b/db"),
    ];
    expect(sortIntentions(list).map((x) => `${x.SourceNS}/${x.SourceName}=>${x.DestinationNS}/${x.DestinationName}`)).toEqual([
      "a/web=>default/db",
      "default/Web=>default/db",
      "default/api=>b/db",
      "default/api=>default/cache",
      "default/api=>default/db",
      "default/web=>default/db",
    ]);
  });

  test("sortIntentions does not mutate its input", () => {
    const list = [withPrec("*/*", "*/*"), withPrec("default/web", "default/db")];
    sortIntentions(list);
    expect(list[0]!.Precedence).toBe(1);
    expect(compareIntentions(list[1]!, list[0]!)).toBeLessThan(0);
  });

  test("strings compare in Go's byte order (code points), not UTF-16 units", () => {
    expect(compareGoStrings("\uffff", "\u{1f600}")).toBe(-1);
    expect("\uffff" < "\u{1f600}").toBe(false);
    expect(compareGoStrings("ab", "abc")).toBe(-1);
    expect(compareGoStrings("b", "abc")).toBe(1);
    expect(compareGoStrings("x", "x")).toBe(0);
  });
});

test("intentionString is Consul 1.8's String()", () => {
  const x = { ...tuple("default/*", "default/db"), Action: "deny", ID: "abc", Precedence: 8 };
  expect(intentionString(x)).toBe("DENY default/* => default/db (ID: abc, Precedence: 8)");
});
