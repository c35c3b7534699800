import { describe, expect, test } from "bun:test";
import { goTimeString, MetricsRegistry } from "./registry.ts";
import { openMetricsText, prometheusName, prometheusText, wantsOpenMetrics } from "./prometheus.ts";
import { compilePrefixFilter } from "./filter.ts";

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
    expect(prometheusName("consul.http.GET.v1.kv.{key}")).toBe("consul_http_GET_v1_kv__key_");
    expect(prometheusName("9lives")).toBe("_9lives");
  });

  test("OpenMetrics: counter samples end in _total, the family does not; the text ends with # EOF", () => {
    const { r, now } = registry();
    r.counter("rpc.request").add(4);
    r.sample("kvs.apply").observe(2);
    expect(openMetricsText(r, now())).toBe([
      "# HELP consul_kvs_apply consul_kvs_apply",
      "# TYPE consul_kvs_apply summary",
      'consul_kvs_apply{quantile="0.5"} 2',
      'consul_kvs_apply{quantile="0.9"} 2',
      'consul_kvs_apply{quantile="0.99"} 2',
      "consul_kvs_apply_sum 2",
      "consul_kvs_apply_count 1",
      "# HELP consul_rpc_request consul_rpc_request",
      "# TYPE consul_rpc_request counter",
      "consul_rpc_request_total 4",
      "# EOF",
      "",
    ].join("\n"));
    expect(openMetricsText(new MetricsRegistry({ now: () => 0 }), 0)).toBe("# EOF\n");
  });

  test("Accept negotiation: OpenMetrics only when it is preferred", () => {
    const prometheus242 = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    expect(wantsOpenMetrics(prometheus242)).toBe(true);
    expect(wantsOpenMetrics(undefined)).toBe(false);
    expect(wantsOpenMetrics("*/*")).toBe(false);
    expect(wantsOpenMetrics("text/plain;version=0.0.4")).toBe(false);
    expect(wantsOpenMetrics("text/plain;q=0.9, application/openmetrics-text;q=0.5")).toBe(false);
    expect(wantsOpenMetrics("application/openmetrics-text;q=0")).toBe(false);
  });
});

describe("prefix_filter, filter_default, hostname and metrics_prefix", () => {
  test("the longest matching prefix decides; '-' wins a tie; unmatched names follow filter_default", () => {
    const allow = compilePrefixFilter(true, ["-consul.http", "+consul.http.GET", "+consul.raft.apply", "-consul.raft.apply"]);
    expect(allow("consul.http.PUT.v1.kv._")).toBe(false);
    expect(allow("consul.http.GET.v1.kv._")).toBe(true);
    expect(allow("consul.raft.apply")).toBe(false);
    expect(allow("consul.raft.commitTime")).toBe(true);
    const deny = compilePrefixFilter(false, ["+consul.kvs"]);
    expect([deny("consul.kvs.apply"), deny("consul.kvsx"), deny("consul.txn.apply")]).toEqual([true, true, false]); // characters, not dotted parts
    expect(compilePrefixFilter(false, [])("consul.anything")).toBe(false);
    expect(() => compilePrefixFilter(true, ["consul.raft"])).toThrow(`rule "consul.raft" must begin with either '+' or '-'`);
    expect(() => compilePrefixFilter(true, [""])).toThrow("an empty rule");
  });

  test("a filtered metric's handles record nothing; the hostname goes into gauge names only; an empty prefix is none", () => {
    const now = 1_700_000_000_000;
    const r = new MetricsRegistry({ now: () => now, prefix: "cw", gaugeHostname: "host-1", filter: compilePrefixFilter(true, ["-cw.http"]) });
    r.sample("http.GET.v1.kv._").observe(3);
    r.counter("http.requests").add();
    r.sample("kvs.apply").observe(1);
    r.gauge("runtime.alloc_bytes").set(10);
    expect(r.series().map((s) => s.name)).toEqual(["cw.host-1.runtime.alloc_bytes", "cw.kvs.apply"]);
    const bare = new MetricsRegistry({ now: () => now, prefix: "" });
    bare.counter("raft.apply").add();
    expect(bare.series().map((s) => s.name)).toEqual(["raft.apply"]);
  });
});
