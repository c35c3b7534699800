import { describe, expect, test } from "bun:test";
import { createBalancer, endpointKey, type Balancer } from "./balancer.ts";
import type { EndpointConfig, OutlierConfig } from "./config_types.ts";

const clock = () => {
  const c = { t: 1_000, monotonic: () => c.t };
  return c;
};
const ep = (n: number, weight = 1, healthy = true): EndpointConfig => ({ address: `10.0.0.${n}`, port: 8443, healthy, weight });
const names = (b: Balancer, picks: number, excluding?: ReadonlySet<string>) =>
  Array.from({ length: picks }, () => b.pick(excluding)?.address.split(".")[3] ?? "-").join("");
const outlier = (o: Partial<OutlierConfig> = {}): OutlierConfig => ({ consecutiveFailures: 5, baseEjectionMs: 30_000, maxEjectionPercent: 100, ...o });
const fail = (b: Balancer, n: number, times: number) => {
  for (let i = 0; i < times; i++) b.reportFailure(endpointKey(`10.0.0.${n}`, 8443));
};

describe("smooth weighted round robin", () => {
  test("weights 5,1,1 give nginx's sequence a a b a c a a", () => {
    const b = createBalancer({ endpoints: [ep(1, 5), ep(2), ep(3)] }, clock());
    expect(names(b, 14)).toBe("11213111121311");
  });

  test("equal weights rotate; shares follow weights over many picks", () => {
    expect(names(createBalancer({ endpoints: [ep(1), ep(2), ep(3)] }, clock()), 6)).toBe("123123");
    const b = createBalancer({ endpoints: [ep(1, 3), ep(2, 2), ep(3, 1)] }, clock());
    const counts = new Map<string, number>();
    for (let i = 0; i < 600; i++) {
      const k = b.pick()!.key;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    expect([...counts.values()]).toEqual([300, 200, 100]);
  });

  test("unhealthy endpoints are skipped while at least half are healthy", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2, 1, false), ep(3), ep(4)] }, clock());
    expect(names(b, 6)).toBe("134134");
    expect(b.stats().healthyPanic).toBe(0);
  });

  test("excluding skips the endpoints already tried; nothing left gives undefined", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2), ep(3)] }, clock());
    const tried = new Set([endpointKey("10.0.0.1", 8443)]);
    expect(names(b, 4, tried)).toBe("2323");
    tried.add(endpointKey("10.0.0.2", 8443)).add(endpointKey("10.0.0.3", 8443));
    expect(b.pick(tried)).toBeUndefined();
    expect(b.stats().noneHealthy).toBe(1);
  });

  test("no endpoints: undefined", () => {
    const b = createBalancer({ endpoints: [] }, clock());
    expect(b.pick()).toBeUndefined();
    expect(b.stats()).toMatchObject({ noneHealthy: 1, healthyPanic: 0 });
  });

  test("keys bracket IPv6 addresses", () => {
    expect(endpointKey("10.0.0.1", 443)).toBe("10.0.0.1:443");
    expect(endpointKey("fd00::1", 443)).toBe("[fd00::1]:443");
    expect(createBalancer({ endpoints: [{ address: "::1", port: 1, healthy: true, weight: 1 }] }, clock()).pick()?.key).toBe("[::1]:1");
  });
});

describe("panic mode (healthy_panic_threshold 50%)", () => {
  test("under half healthy: every endpoint is a candidate, counted as lb_healthy_panic", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2, 1, false), ep(3, 1, false)] }, clock());
    expect(names(b, 6)).toBe("123123");
    expect(b.stats().healthyPanic).toBe(6);
  });

  test("exactly half healthy is not panic", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2, 1, false)] }, clock());
    expect(names(b, 3)).toBe("111");
  });

  test("none healthy: still routes to all", () => {
    const b = createBalancer({ endpoints: [ep(1, 1, false), ep(2, 1, false)] }, clock());
    expect(names(b, 4)).toBe("1212");
  });
});

describe("outlier detection", () => {
  test("consecutive failures eject for base x count; the time passing un-ejects", () => {
    const c = clock();
    const b = createBalancer({ endpoints: [ep(1), ep(2), ep(3)], outlier: outlier() }, c);
    fail(b, 1, 4);
    expect(b.status()[0]).toMatchObject({ ejected: false, consecutiveFailures: 4 });
    fail(b, 1, 1);
    expect(b.status()[0]).toMatchObject({ ejected: true, ejectedUntilMs: c.t + 30_000, ejections: 1, consecutiveFailures: 0 });
    expect(names(b, 4)).toBe("2323");
    c.t += 29_999;
    expect(names(b, 2)).toBe("23");
    c.t += 1;
    expect(b.status()[0]).toMatchObject({ ejected: false, ejections: 1 });
    expect(names(b, 3)).toContain("1");
    fail(b, 1, 5); // ejected again at once: twice as long
    expect(b.status()[0]).toMatchObject({ ejectedUntilMs: c.t + 60_000, ejections: 2 });
    expect(b.stats()).toMatchObject({ ejectionsActive: 1, ejectionsEnforcedTotal: 2, ejectionsOverflow: 0 });
  });

  test("a success resets the count", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2)], outlier: outlier() }, clock());
    fail(b, 1, 4);
    b.reportSuccess(endpointKey("10.0.0.1", 8443));
    fail(b, 1, 4);
    expect(b.status()[0]).toMatchObject({ ejected: false, consecutiveFailures: 4 });
  });

  test("maxEjectionPercent counts ejections before this one, so one can always go", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2), ep(3)], outlier: outlier({ maxEjectionPercent: 10 }) }, clock());
    fail(b, 1, 5);
    fail(b, 2, 5);
    expect(b.status().map((s) => s.ejected)).toEqual([true, false, false]);
    expect(b.stats()).toMatchObject({ ejectionsActive: 1, ejectionsOverflow: 1 });
    const none = createBalancer({ endpoints: [ep(1), ep(2)], outlier: outlier({ maxEjectionPercent: 0 }) }, clock());
    fail(none, 1, 5);
    expect(none.status()[0]!.ejected).toBe(false);
  });

  test("ejected endpoints count as unhealthy for panic, and panic routes to them again", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2)], outlier: outlier() }, clock());
    fail(b, 1, 5);
    expect(names(b, 2)).toBe("22");
    fail(b, 2, 5);
    expect(names(b, 4)).toBe("1212");
    expect(b.stats().healthyPanic).toBe(4);
  });

  test("failures while ejected do not count; unknown keys are ignored", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2), ep(3)], outlier: outlier() }, clock());
    fail(b, 1, 12);
    expect(b.status()[0]).toMatchObject({ ejections: 1, consecutiveFailures: 0 });
    b.reportFailure("10.9.9.9:1");
    b.reportSuccess("10.9.9.9:1");
    expect(b.stats().ejectionsEnforcedTotal).toBe(1);
  });

  test("the ejection multiplier shrinks by one per interval spent un-ejected", () => {
    const c = clock();
    const b = createBalancer({ endpoints: [ep(1), ep(2)], outlier: outlier({ intervalMs: 10_000 }) }, c);
    fail(b, 1, 5); // backoff 1: 30 s
    c.t += 30_000;
    fail(b, 1, 5); // right away: backoff 2, 60 s
    expect(b.status()[0]!.ejectedUntilMs).toBe(c.t + 60_000);
    c.t += 60_000 + 25_000; // two intervals healthy: backoff 2 -> 0, then this ejection makes it 1
    fail(b, 1, 5);
    expect(b.status()[0]!.ejectedUntilMs).toBe(c.t + 30_000);
  });

  test("one ejection never lasts longer than maxEjectionMs (or base, if larger)", () => {
    const c = clock();
    const b = createBalancer({ endpoints: [ep(1), ep(2)], outlier: outlier({ maxEjectionMs: 50_000 }) }, c);
    const durations: number[] = [];
    for (let i = 0; i < 4; i++) {
      fail(b, 1, 5);
      const until = b.status()[0]!.ejectedUntilMs!;
      durations.push(until - c.t);
      c.t = until;
    }
    expect(durations).toEqual([30_000, 50_000, 50_000, 50_000]);
  });

  test("no outlier config: failures never eject", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2)] }, clock());
    fail(b, 1, 50);
    expect(b.status()[0]!.ejected).toBe(false);
  });
});

describe("endpoint updates", () => {
  test("endpoints that stay keep their ejection and failure state; new ones start fresh", () => {
    const c = clock();
    const b = createBalancer({ endpoints: [ep(1), ep(2), ep(3)], outlier: outlier() }, c);
    fail(b, 1, 5);
    fail(b, 3, 2);
    b.update({ endpoints: [ep(3, 2), ep(1, 4), ep(4)], outlier: outlier() });
    expect(b.status().map((s) => [s.address, s.weight, s.ejected, s.consecutiveFailures])).toEqual([
      ["10.0.0.3", 2, false, 2],
      ["10.0.0.1", 4, true, 0],
      ["10.0.0.4", 1, false, 0],
    ]);
    expect(names(b, 3)).toBe("343");
    c.t += 30_000;
    expect(names(b, 7)).toContain("1");
  });

  test("duplicate addresses keep the first; weight 0 counts as 1", () => {
    const b = createBalancer({ endpoints: [ep(1, 0), ep(1, 9), ep(2)] }, clock());
    expect(b.status().map((s) => [s.key, s.weight])).toEqual([["10.0.0.1:8443", 1], ["10.0.0.2:8443", 1]]);
  });

  test("dropping outlier detection lifts the ejections", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2)], outlier: outlier() }, clock());
    fail(b, 1, 5);
    b.update({ endpoints: [ep(1), ep(2)] });
    expect(b.status()[0]!.ejected).toBe(false);
    expect(names(b, 2)).toBe("12");
  });

  test("a removed endpoint's ejection stops counting toward the percentage", () => {
    const b = createBalancer({ endpoints: [ep(1), ep(2), ep(3)], outlier: outlier({ maxEjectionPercent: 30 }) }, clock());
    fail(b, 1, 5);
    fail(b, 2, 5);
    expect(b.stats()).toMatchObject({ ejectionsActive: 1, ejectionsOverflow: 1 });
    b.update({ endpoints: [ep(2), ep(3)], outlier: outlier({ maxEjectionPercent: 30 }) });
    fail(b, 2, 5);
    expect(b.stats().ejectionsActive).toBe(1);
  });
});
