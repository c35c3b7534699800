import { expect, test } from "bun:test";
import { Inflights } from "./inflights.ts";
import { Progress } from "./progress.ts";

test("inflights add / freeLE / full / freeFirstOne", () => {
  const f = new Inflights(3);
  f.add(2); f.add(5); f.add(9);
  expect(f.full()).toBe(true);
  expect(() => f.add(10)).toThrow();
  f.freeLE(4);
  expect(f.count()).toBe(2);
  f.freeLE(1); // stale ack frees nothing
  expect(f.count()).toBe(2);
  f.freeFirstOne();
  expect(f.count()).toBe(1);
  f.freeLE(100);
  expect(f.count()).toBe(0);
});

test("progress: probe pauses after one append, replicate pauses when window full", () => {
  const p = new Progress(5, 2, false);
  expect(p.isPaused()).toBe(false);
  p.probeSent = true;
  expect(p.isPaused()).toBe(true);
  p.maybeUpdate(4);
  expect(p.isPaused()).toBe(false);
  expect(p.next).toBe(5);
  p.becomeReplicate();
  expect(p.next).toBe(5);
  p.optimisticUpdate(6); p.inflights.add(6);
  p.optimisticUpdate(8); p.inflights.add(8);
  expect(p.isPaused()).toBe(true);
  expect(p.next).toBe(9);
});

test("progress: maybeDecrTo in replicate and probe", () => {
  const p = new Progress(10, 4, false);
  p.match = 5;
  p.becomeReplicate();
  expect(p.maybeDecrTo(4, 4)).toBe(false); // stale (<= match)
  expect(p.maybeDecrTo(7, 3)).toBe(true);
  expect(p.next).toBe(6); // back to match+1
  const q = new Progress(10, 4, false);
  expect(q.maybeDecrTo(5, 3)).toBe(false); // not the outstanding probe (next-1 = 9)
  expect(q.maybeDecrTo(9, 3)).toBe(true);
  expect(q.next).toBe(4); // hint+1
  q.match = 6;
  q.next = 10;
  expect(q.maybeDecrTo(9, 2)).toBe(true);
  expect(q.next).toBe(7); // never below match+1
});

test("progress: snapshot state and becomeProbe after it", () => {
  const p = new Progress(3, 4, false);
  p.match = 2;
  p.becomeSnapshot(20);
  expect(p.isPaused()).toBe(true);
  p.becomeProbe();
  expect(p.state).toBe("Probe");
  expect(p.next).toBe(21);
  p.becomeSnapshot(20);
  p.pendingSnapshot = 0; // failure
  p.becomeProbe();
  expect(p.next).toBe(3);
});
