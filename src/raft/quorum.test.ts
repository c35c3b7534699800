import { describe, expect, test } from "bun:test";
import type { VoteResult } from "./quorum.ts";
import { jointCommittedIndex, jointVoteResult, majorityCommittedIndex, majorityVoteResult } from "./quorum.ts";

const set = (s: string) => new Set(s.split(" ").filter((x) => x));
const acked = (m: Record<string, number>) => (id: string) => m[id];
const votes = (m: Record<string, boolean>) => new Map(Object.entries(m));

describe("majority committed index", () => {
  const cases: [string, Record<string, number>, number][] = [
    ["", {}, Infinity],
    ["1", { "1": 5 }, 5],
    ["1", {}, 0],
    ["1 2", { "1": 5, "2": 3 }, 3],
    ["1 2 3", { "1": 5, "2": 3 }, 3],
    ["1 2 3", { "1": 5 }, 0],
    ["1 2 3", { "1": 5, "2": 5, "3": 1 }, 5],
    ["1 2 3 4", { "1": 9, "2": 8, "3": 7, "4": 6 }, 7],
    ["1 2 3 4 5", { "1": 9, "2": 8, "3": 7, "4": 6, "5": 1 }, 7],
    ["1 2 3 4 5", { "1": 9, "2": 8 }, 0],
    ["1 2 3", { "1": 5, "9": 100, "8": 100 }, 0], // non-voters don't count
  ];
  for (const [cfg, a, want] of cases) {
    test(`(${cfg}) ${JSON.stringify(a)} -> ${want}`, () => expect(majorityCommittedIndex(set(cfg), acked(a))).toBe(want));
  }
});

describe("majority vote result", () => {
  const cases: [string, Record<string, boolean>, VoteResult][] = [
    ["", {}, "VoteWon"],
    ["1", {}, "VotePending"],
    ["1", { "1": true }, "VoteWon"],
    ["1", { "1": false }, "VoteLost"],
    ["1 2", { "1": true }, "VotePending"],
    ["1 2", { "1": true, "2": false }, "VoteLost"],
    ["1 2 3", { "1": true, "2": true }, "VoteWon"],
    ["1 2 3", { "1": true, "2": false }, "VotePending"],
    ["1 2 3", { "1": false, "2": false }, "VoteLost"],
    ["1 2 3 4", { "1": true, "2": true }, "VotePending"],
    ["1 2 3 4", { "1": true, "2": true, "3": false, "4": false }, "VoteLost"],
    ["1 2 3 4 5", { "1": true, "2": true, "3": true }, "VoteWon"],
    ["1 2 3", { "7": true, "8": true }, "VotePending"],
  ];
  for (const [cfg, v, want] of cases) {
    test(`(${cfg}) ${JSON.stringify(v)} -> ${want}`, () => expect(majorityVoteResult(set(cfg), votes(v))).toBe(want));
  }
});

describe("joint quorum", () => {
  const cases: [string, string, Record<string, number>, number][] = [
    ["1 2 3", "", { "1": 5, "2": 4, "3": 3 }, 4],
    ["1 2 3", "1 2 3", { "1": 5, "2": 4, "3": 3 }, 4],
    ["1 2 3", "4 5 6", { "1": 5, "2": 4, "3": 3, "4": 1, "5": 2, "6": 3 }, 2],
    ["1 2 3", "3 4 5", { "1": 9, "2": 9, "3": 9 }, 0],
    ["1 2 3", "3 4 5", { "1": 9, "2": 9, "3": 9, "4": 7 }, 7],
    ["1", "1 2 3", { "1": 9, "2": 1 }, 1],
  ];
  for (const [a, b, ack, want] of cases) {
    test(`committed (${a})&&(${b}) -> ${want}`, () => expect(jointCommittedIndex([set(a), set(b)], acked(ack))).toBe(want));
  }
  const vcases: [string, string, Record<string, boolean>, VoteResult][] = [
    ["1 2 3", "", { "1": true, "2": true }, "VoteWon"],
    ["1 2 3", "3 4 5", { "1": true, "2": true }, "VotePending"],
    ["1 2 3", "3 4 5", { "1": true, "2": true, "3": true, "4": true }, "VoteWon"],
    ["1 2 3", "3 4 5", { "1": true, "2": true, "4": false, "5": false }, "VoteLost"],
    ["1 2 3", "3 4 5", { "1": false, "2": false, "4": true, "5": true }, "VoteLost"],
    ["1 2 3", "3 4 5", { "1": false, "3": true, "4": true }, "VotePending"],
  ];
  for (const [a, b, v, want] of vcases) {
    test(`vote (${a})&&(${b}) ${JSON.stringify(v)} -> ${want}`, () => expect(jointVoteResult([set(a), set(b)], votes(v))).toBe(want));
  }
});
