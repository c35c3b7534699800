import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import { createUpdateLimiter, DEFAULT_UPDATES_PER_SECOND } from "./rate_limit.ts";

describe("update limiter (token bucket, burst 1)", () => {
  test("Consul's default is 250 updates per second", () => {
    expect(DEFAULT_UPDATES_PER_SECOND).toBe(250);
    expect(createUpdateLimiter(simClock()).rate()).toBe(250);
  });

  test("grants one at once, then one per 1/rate seconds, first come first served", () => {
    const clock = simClock();
    const lim = createUpdateLimiter(clock, 4); // one per 250 ms
    const granted: string[] = [];
    const at = (name: string) => () => granted.push(`${name}@${clock.monotonic()}`);
    lim.acquire(at("a"));
    expect(granted).toEqual(["a@0"]); // synchronously
    lim.acquire(at("b"));
    lim.acquire(at("c"));
    lim.acquire(at("d"));
    expect(lim.waiting()).toBe(3);
    clock.advance(249);
    expect(granted).toEqual(["a@0"]);
    clock.advance(1);
    expect(granted).toEqual(["a@0", "b@250"]);
    clock.advance(1000);
    expect(granted).toEqual(["a@0", "b@250", "c@500", "d@750"]);
    expect(lim.waiting()).toBe(0);
    // Idle time refills only one token (burst 1).
    lim.acquire(at("e"));
    lim.acquire(at("f"));
    expect(granted.slice(4)).toEqual(["e@1250"]);
    clock.advance(250);
    expect(granted.slice(4)).toEqual(["e@1250", "f@1500"]);
  });

  test("a newcomer does not jump the queue even when a token is due", () => {
    const clock = simClock();
    const lim = createUpdateLimiter(clock, 10);
    const granted: string[] = [];
    lim.acquire(() => granted.push("a"));
    lim.acquire(() => granted.push("b"));
    clock.advance(50); // half a token
    lim.acquire(() => granted.push("c"));
    clock.advance(50);
    expect(granted).toEqual(["a", "b"]);
    clock.advance(100);
    expect(granted).toEqual(["a", "b", "c"]);
  });

  test("a cancelled request is never granted and gives its place to the next", () => {
    const clock = simClock();
    const lim = createUpdateLimiter(clock, 1);
    const granted: string[] = [];
    lim.acquire(() => granted.push("a"));
    const cancelB = lim.acquire(() => granted.push("b"));
    lim.acquire(() => granted.push("c"));
    cancelB();
    expect(lim.waiting()).toBe(1);
    clock.advance(1000);
    expect(granted).toEqual(["a", "c"]);
    clock.advance(5000);
    expect(granted).toEqual(["a", "c"]);
  });

  test("rate 0 is unlimited; setRate applies to waiters; bad rates are refused", () => {
    const clock = simClock();
    const lim = createUpdateLimiter(clock, 1);
    const granted: string[] = [];
    lim.acquire(() => granted.push("a"));
    lim.acquire(() => granted.push("b"));
    lim.acquire(() => granted.push("c"));
    lim.setRate(0);
    clock.advance(0);
    expect(granted).toEqual(["a", "b", "c"]);
    for (let i = 0; i < 5; i++) lim.acquire(() => granted.push(`u${i}`));
    expect(granted).toHaveLength(8);
    expect(() => lim.setRate(-1)).toThrow(RangeError);
    expect(() => createUpdateLimiter(clock, Number.NaN)).toThrow(RangeError);
  });
});
