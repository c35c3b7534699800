import { describe, expect, test } from "bun:test";
import type { Session } from "../model/index.ts";
import { silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { createSessionTimers } from "./session_timers.ts";

const session = (ID: string, TTL: string): Session => ({
  ID, Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL, NodeChecks: [], ServiceChecks: null, CreateIndex: 1, ModifyIndex: 1,
});

describe("session TTL timers", () => {
  test("a session expires after TTL x 2 unless renewed; sessions without a TTL are not timed", () => {
    const clock = simClock();
    const expired: string[] = [];
    const timers = createSessionTimers({ clock, logger: silentLogger(), expire: (id) => expired.push(id) });
    timers.reset(session("a", "10s"));
    timers.reset(session("b", ""));
    expect(timers.size()).toBe(1);
    clock.advance(15_000);
    timers.reset(session("a", "10s")); // renewed
    clock.advance(19_999);
    expect(expired).toEqual([]);
    clock.advance(1);
    expect(expired).toEqual(["a"]);
    expect(timers.size()).toBe(0);
  });

  test("clear and clearAll drop timers", () => {
    const clock = simClock();
    const expired: string[] = [];
    const timers = createSessionTimers({ clock, logger: silentLogger(), expire: (id) => expired.push(id) });
    timers.reset(session("a", "10s"));
    timers.reset(session("b", "1m"));
    timers.clear("a");
    timers.clearAll();
    clock.advance(3_600_000);
    expect(expired).toEqual([]);
  });
});
