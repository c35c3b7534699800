import { expect, test } from "bun:test";
import { ErrCompacted, ErrSnapOutOfDate, ErrUnavailable } from "./errors.ts";
import { MemoryStorage } from "./storage.ts";
import type { Entry } from "./types.ts";
import { EMPTY_CONF_STATE } from "./types.ts";

const ent = (index: number, term: number, data = ""): Entry => ({ type: "Normal", index, term, data: new TextEncoder().encode(data) });
const terms = (es: readonly Entry[]) => es.map((e) => `${e.term}/${e.index}`).join(" ");

function ms(): MemoryStorage {
  const s = new MemoryStorage();
  s.applySnapshot({ index: 3, term: 3, confState: EMPTY_CONF_STATE });
  s.append([ent(4, 4), ent(5, 5)]);
  return s;
}

test("term / entries / bounds", () => {
  const s = ms();
  expect(() => s.term(2)).toThrow(ErrCompacted);
  expect(s.term(3)).toBe(3);
  expect(s.term(5)).toBe(5);
  expect(() => s.term(6)).toThrow(ErrUnavailable);
  expect(() => s.entries(3, 5, 100)).toThrow(ErrCompacted);
  expect(terms(s.entries(4, 6, 100))).toBe("4/4 5/5");
  expect(s.firstIndex()).toBe(4);
  expect(s.lastIndex()).toBe(5);
});

test("entries respects maxSize but returns at least one", () => {
  const s = new MemoryStorage();
  s.append([ent(1, 1, "aaaa"), ent(2, 1, "bbbb"), ent(3, 1, "cc")]);
  expect(terms(s.entries(1, 4, 0))).toBe("1/1");
  expect(terms(s.entries(1, 4, 8))).toBe("1/1 1/2");
  expect(terms(s.entries(1, 4, 10))).toBe("1/1 1/2 1/3");
});

test("append truncates conflicts, ignores compacted prefix, rejects gaps", () => {
  const s = ms();
  s.append([ent(5, 6), ent(6, 6)]);
  expect(terms(s.entries(4, 7, 100))).toBe("4/4 6/5 6/6");
  s.append([ent(2, 2), ent(3, 3), ent(4, 4)]);
  expect(terms(s.entries(4, 5, 100))).toBe("4/4");
  expect(s.lastIndex()).toBe(4);
  expect(() => s.append([ent(7, 7)])).toThrow(/missing log entry/);
});

test("compact, createSnapshot, applySnapshot", () => {
  const s = ms();
  s.append([ent(6, 5), ent(7, 5)]);
  const snap = s.createSnapshot(6, { ...EMPTY_CONF_STATE, voters: ["1"] });
  expect(snap).toEqual({ index: 6, term: 5, confState: { ...EMPTY_CONF_STATE, voters: ["1"] } });
  s.compact(6);
  expect(s.firstIndex()).toBe(7);
  expect(s.term(6)).toBe(5);
  expect(() => s.compact(5)).toThrow(ErrCompacted);
  expect(() => s.createSnapshot(5)).toThrow(ErrSnapOutOfDate);
  expect(() => s.applySnapshot({ index: 6, term: 5, confState: EMPTY_CONF_STATE })).toThrow(ErrSnapOutOfDate);
  s.applySnapshot({ index: 10, term: 9, confState: EMPTY_CONF_STATE });
  expect(s.firstIndex()).toBe(11);
  expect(s.lastIndex()).toBe(10);
  expect(() => s.entries(11, 11, 10)).toThrow(ErrUnavailable);
});
