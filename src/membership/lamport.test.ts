import { describe, expect, test } from "bun:test";
import { encodeSerfMsg, encodeSerfPushPull } from "./codec.ts";
import { Lamport, MAX_LAMPORT_TIME } from "./lamport.ts";
import { memberIntents } from "./serf_intents.ts";

describe("Lamport clock", () => {
  test("increments from 1 and witnesses past a remote time", () => {
    const c = new Lamport();
    expect([c.increment(), c.increment()]).toEqual([1, 2]);
    c.witness(10);
    expect(c.increment()).toBe(11);
    c.witness(5);
    expect(c.time).toBe(12);
  });

  test("a remote time at the u32 maximum saturates the clock; every time it gives still encodes", () => {
    const c = new Lamport();
    c.witness(MAX_LAMPORT_TIME);
    expect(c.time).toBe(MAX_LAMPORT_TIME);
    expect([c.increment(), c.increment()]).toEqual([MAX_LAMPORT_TIME, MAX_LAMPORT_TIME]);
    expect(() => encodeSerfMsg(1 as never, c.increment(), "e", new Uint8Array())).not.toThrow();
    expect(() => encodeSerfPushPull({ memberLTime: c.time, eventLTime: c.time, queryLTime: c.time, members: [], events: [] })).not.toThrow();
  });
});

test("a left record at the maximum time gives a leave intent at the maximum, not past it", () => {
  expect(memberIntents([{ name: "n1", statusLTime: MAX_LAMPORT_TIME, left: true }]).map((m) => m.ltime)).toEqual([MAX_LAMPORT_TIME]);
});
