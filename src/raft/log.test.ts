import { expect, test } from "bun:test";
import { ErrCompacted } from "./errors.ts";
import { NO_LIMIT, RaftLog } from "./log.ts";
import { Unstable } from "./log_unstable.ts";
import { MemoryStorage } from "./storage.ts";
import type { Entry } from "./types.ts";
import { EMPTY_CONF_STATE } from "./types.ts";

const ent = (index: number, term: number): Entry => ({ type: "Normal", index, term, data: new Uint8Array() });
const ents = (first: number, ...ts: number[]) => ts.map((t, i) => ent(first + i, t));
const terms = (es: readonly Entry[]) => es.map((e) => `${e.term}/${e.index}`).join(" ");

function log(...ts: number[]): RaftLog {
  const s = new MemoryStorage();
  s.append(ents(1, ...ts));
  return new RaftLog(s);
}

test("unstable: truncateAndAppend cases", () => {
  const u = new Unstable(5);
  u.truncateAndAppend(ents(5, 1, 1));
  u.truncateAndAppend(ents(7, 2)); // directly after
  expect(terms(u.entries)).toBe("1/5 1/6 2/7");
  u.truncateAndAppend(ents(6, 3)); // truncate in the middle
  expect(terms(u.entries)).toBe("1/5 3/6");
  u.truncateAndAppend(ents(4, 4)); // before offset: replace everything
  expect(u.offset).toBe(4);
  expect(terms(u.entries)).toBe("4/4");
});

test("unstable: stableTo ignores stale (term-mismatched) acks; snapshot terms", () => {
  const u = new Unstable(5);
  u.truncateAndAppend(ents(5, 1, 1, 1));
  u.stableTo(6, 2); // wrong term
  expect(u.offset).toBe(5);
  u.stableTo(6, 1);
  expect(u.offset).toBe(7);
  expect(terms(u.entries)).toBe("1/7");
  u.restore({ index: 10, term: 3, confState: EMPTY_CONF_STATE });
  expect(u.maybeTerm(10)).toBe(3);
  expect(u.maybeTerm(9)).toBeUndefined();
  expect(u.maybeFirstIndex()).toBe(11);
  expect(u.maybeLastIndex()).toBe(10);
});

test("maybeAppend: match, conflict truncation, mismatch, committed conflict", () => {
  const l = log(1, 2, 3);
  l.commitTo(1);
  expect(l.maybeAppend(3, 3, 2, ents(4, 4))).toBe(4); // plain append
  expect(l.committed).toBe(2);
  expect(l.maybeAppend(2, 2, 5, ents(3, 5, 5))).toBe(4); // conflict at 3 truncates
  expect(terms(l.entries(1, NO_LIMIT))).toBe("1/1 2/2 5/3 5/4");
  expect(l.committed).toBe(4); // min(leader commit, last new)
  expect(l.maybeAppend(4, 9, 4, [])).toBeUndefined(); // term mismatch
  expect(l.maybeAppend(9, 5, 4, [])).toBeUndefined(); // beyond our log
  expect(() => l.maybeAppend(1, 1, 4, ents(2, 7))).toThrow(/conflicts with committed/);
});

test("findConflict and findConflictByTerm", () => {
  const l = log(1, 1, 2, 2, 4, 4);
  expect(l.findConflict(ents(1, 1, 1, 2))).toBe(0);
  expect(l.findConflict(ents(3, 2, 3))).toBe(4);
  expect(l.findConflict(ents(6, 4, 4))).toBe(7);
  // Leader says its entry at 6 has term 3: our entries of term 4 cannot match, skip to index 4 (term 2).
  expect(l.findConflictByTerm(6, 3)).toEqual({ index: 4, term: 2 });
  expect(l.findConflictByTerm(6, 4)).toEqual({ index: 6, term: 4 });
  expect(l.findConflictByTerm(6, 0)).toEqual({ index: 0, term: 0 });
});

test("term lookups across storage, unstable and compaction", () => {
  const s = new MemoryStorage();
  s.append(ents(1, 1, 1, 2, 2));
  s.createSnapshot(2);
  s.compact(2);
  const l = new RaftLog(s);
  l.append(ents(5, 3, 3));
  expect(l.firstIndex()).toBe(3);
  expect(l.term(2)).toBe(1); // the snapshot (dummy) index
  expect(() => l.term(1)).toThrow(ErrCompacted);
  expect(l.term(6)).toBe(3);
  expect(l.termOrZero(7)).toBe(0);
  expect(terms(l.slice(3, 7, NO_LIMIT))).toBe("2/3 2/4 3/5 3/6");
  expect(() => l.slice(2, 4, NO_LIMIT)).toThrow(ErrCompacted);
  expect(l.isUpToDate(6, 3)).toBe(true);
  expect(l.isUpToDate(5, 3)).toBe(false);
  expect(l.isUpToDate(1, 4)).toBe(true);
});

test("maybeCommit only commits entries of the given term (Raft §5.4.2)", () => {
  const l = log(1, 1, 2);
  expect(l.maybeCommit(2, 2)).toBe(false);
  expect(l.committed).toBe(0);
  expect(l.maybeCommit(3, 2)).toBe(true);
  expect(l.committed).toBe(3);
});

test("nextEnts / appliedTo and restore", () => {
  const l = log(1, 1, 1);
  l.commitTo(2);
  expect(terms(l.nextEnts())).toBe("1/1 1/2");
  l.appliedTo(2);
  expect(l.hasNextEnts()).toBe(false);
  l.restore({ index: 10, term: 4, confState: EMPTY_CONF_STATE });
  expect(l.committed).toBe(10);
  expect(l.lastIndex()).toBe(10);
  expect(l.hasPendingSnapshot()).toBe(true);
  expect(l.nextEnts()).toEqual([]);
});
