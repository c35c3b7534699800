import { describe, expect, test } from "bun:test";
import { goTimeString, MetricsRegistry } from "./registry.ts";
import { prometheusName, prometheusText } from "./prometheus.ts";

/** A registry on a hand-moved clock that starts at an interval boundary. */
function registry(startMs = 1_700_000_000_000) {
  let now = startMs;
  const r = new MetricsRegistry({ now: () => now });
  return { r, at: (ms: number) => void (now = startMs + ms), now: () => now };
}

describe("summary (/v1/agent/metrics)", () => {
  test("shows the current interval until one has finished, then the latest finished one", () => {
    const { r, at } = registry();
    const apply = r.counter("raft.apply");
    apply.add();
    apply.add(2);
    at(4_000);
    let s = r.summary();
    expect(s.Timestamp).toBe("2023-11-14 22:13:20 +0000 UTC");
    expect(s.Counters).toEqual([{ Name: "consul.raft.apply", Count: 2, Rate: 0.3, Sum: 3, Min: 1, Max: 2, Mean: 1.5, Stddev: Math.SQRT1_2, Labels: {} }]);
    at(12_000);
    apply.add(5);
    s = r.summary();
    expect(s.Timestamp).toBe("2023-11-14 22:13:20 +0000 UTC"); // the finished interval, not the one with the 5
    expect(s.Counters[0]!.Sum).toBe(3);
    at(21_000);
    expect(r.summary().Counters[0]!).toMatchObject({ Count: 1, Sum: 5, Stddev: 0 });
    at(41_000);
    expect(r.summary().Counters).toEqual([]); // nothing in the interval shown
  });

  test("gauges keep the last value of the interval; samples aggregate; labels are a map; sorted by name", () => {
    const { r, at } = registry();
    const g = r.gauge("session_ttl.active");
    const t = r.sample("kvs.apply");
    const x = r.counter("rpc.cross-dc", [["datacenter", "dc2"]]);
    g.set(3);
    g.set(4);
    t.observe(2);
    t.observe(6);
    x.add();
    at(10_000);
    const s = r.summary();
    expect(s.Gauges).toEqual([{ Name: "consul.session_ttl.active", Value: 4, Labels: {} }]);
    expect(s.Samples).toEqual([{ Name: "consul.kvs.apply", Count: 2, Rate: 0.8, Sum: 8, Min: 2, Max: 6, Mean: 4, Stddev: Math.SQRT2 * 2, Labels: {} }]);
    expect(s.Counters.map((c) => [c.Name, c.Labels])).toEqual([["consul.rpc.cross-dc", { datacenter: "dc2" }]]);
    expect(s.Points).toEqual([]);
    at(20_000);
    expect(r.summary().Gauges).toEqual([]); // not set in the interval shown
  });

  test("one handle, many updates: the same series; a name of another kind is refused", () => {
    const { r } = registry();
    r.counter("a").add();
    r.counter("a").add();
    expect(r.series().length).toBe(1);
    expect(r.series()[0]!.total).toBe(2);
    expect(() => r.gauge("a")).toThrow("metric consul.a is a counter, not a gauge");
  });

  test("retention drops series not updated since the cut", () => {
    const { r, at, now } = registry();
    r.counter("old").add();
    at(5_000);
    r.counter("new").add();
    r.expire(now() - 1_000);
    expect(r.series().map((s) => s.name)).toEqual(["consul.new"]);
  });

  test("Go's time.Time.String of UTC instants", () => {
    expect(goTimeString(Date.UTC(2017, 7, 8, 2, 55, 10))).toBe("2017-08-08 02:55:10 +0000 UTC");
  });
});

describe("prometheus text", () => {
  test("go-metrics' names, cumulative counters, gauges, summaries with quantiles over the window", () => {
    const { r, at, now } = registry();
    r.counter("raft.apply").add(2);
    r.gauge("memberlist.health.score").set(0);
    const t = r.sample("raft.commitTime");
    for (const v of [1, 2, 3, 4, 100]) t.observe(v);
    r.counter("rpc.cross-dc", [["datacenter", 'd"c\\2']]).add();
    at(10_000);
    r.counter("raft.apply").add(1);
    expect(prometheusText(r, now())).toBe([
      "# HELP consul_memberlist_health_score consul_memberlist_health_score",
      "# TYPE consul_memberlist_health_score gauge",
      "consul_memberlist_health_score 0",
      "# HELP consul_raft_apply consul_raft_apply",
      "# TYPE consul_raft_apply counter",
      "consul_raft_apply 3",
      "# HELP consul_raft_commitTime consul_raft_commitTime",
      "# TYPE consul_raft_commitTime summary",
      'consul_raft_commitTime{quantile="0.5"} NaN', // the observations are older than the 10 s window
      'consul_raft_commitTime{quantile="0.9"} NaN',
      'consul_raft_commitTime{quantile="0.99"} NaN',
      "consul_raft_commitTime_sum 110",
      "consul_raft_commitTime_count 5",
      "# HELP consul_rpc_cross_dc consul_rpc_cross_dc",
      "# TYPE consul_rpc_cross_dc counter",
      'consul_rpc_cross_dc{datacenter="d\\"c\\\\2"} 1',
      "",
    ].join("\n"));
    for (const v of [1, 2, 3, 4, 100]) t.observe(v);
    const text = prometheusText(r, now());
    expect(text).toContain('consul_raft_commitTime{quantile="0.5"} 3\n');
    expect(text).toContain('consul_raft_commitTime{quantile="0.99"} 100\n');
    expect(text).toContain("consul_raft_commitTime_count 10\n");
  });

  test("names: dots, spaces, =, - and / become _; case is kept", () => {
    expect(prometheusName("consul.http.GET.v1.kv._")).toBe("consul_http_GET_v1_kv__");
    expect(prometheusName("consul.serf.queue.Intent")).toBe("consul_serf_queue_Intent");
    expect(prometheusName("a b=c-d/e")).toBe("a_b_c_d_e");
  });
});
