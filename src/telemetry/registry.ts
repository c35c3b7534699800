/**
 * The metrics registry: counters, gauges and samples (timers are samples in milliseconds) with labels,
 * as Consul's go-metrics records them, read two ways:
 * - `summary()`: Consul's `/v1/agent/metrics` JSON (go-metrics InmemSink): values aggregated per
 *   interval (10 s), the last `keepIntervals` (6) kept, the latest finished one shown;
 * - `series()`: cumulative values for the Prometheus exposition (see prometheus.ts): counters since
 *   creation, gauges' last value, samples' count and sum and the observations of the last window.
 *
 * Hot paths take a handle once (`counter(...)`, `gauge(...)`, `sample(...)`) and update it many times:
 * an update allocates nothing (interval aggregates and the observation window are preallocated per
 * series). Time comes from the injected `now` (ms); nothing here reads a clock or starts a timer.
 */

import type { MetricFilter } from "./filter.ts";

/** Labels of a series; the order given is kept (go-metrics keeps emission order). */
export type Labels = readonly (readonly [string, string])[];

export type MetricKind = "counter" | "gauge" | "sample";

export interface CounterHandle {
  /** Adds `v` (default 1). */
  add(v?: number): void;
}

export interface GaugeHandle {
  set(v: number): void;
}

export interface SampleHandle {
  /** Records one observation (a timer's milliseconds, a queue depth...). */
  observe(v: number): void;
}

export interface RegistryOptions {
  /** Milliseconds since the epoch (the agent's Clock.now). */
  readonly now: () => number;
  /** Prepended to every name, as go-metrics' ServiceName (Consul's `metrics_prefix`, "consul"). */
  readonly prefix?: string;
  /** Inserted after the prefix in gauge names only, as go-metrics' EnableHostname (Consul's default, unless `disable_hostname`). */
  readonly gaugeHostname?: string;
  /** Which full names are recorded (`prefix_filter`); a handle of a dropped name does nothing. Default: all. */
  readonly filter?: MetricFilter;
  readonly intervalMs?: number;
  readonly keepIntervals?: number;
  /** Observations of a sample kept for the Prometheus quantiles (the latest ones, within `windowMs`). */
  readonly windowSize?: number;
  readonly windowMs?: number;
}

/** One interval's aggregate of a counter or sample (go-metrics AggregateSample). */
interface Aggregate {
  start: number;
  count: number;
  sum: number;
  sumSq: number;
  min: number;
  max: number;
}

/** @internal A series and everything kept about it. */
export interface Series {
  readonly kind: MetricKind;
  /** Dotted name with the prefix, e.g. `consul.raft.apply`. */
  readonly name: string;
  readonly labels: Labels;
  /** Cumulative: a counter's total, a sample's sum. */
  total: number;
  /** A sample's number of observations since creation. */
  count: number;
  /** A gauge's last value and the interval it was set in. */
  value: number;
  setIn: number;
  /** Ring of interval aggregates, newest at `head`. */
  readonly intervals: Aggregate[];
  head: number;
  /** Ring of the latest observations and their times (samples only). */
  readonly window: Float64Array;
  readonly windowAt: Float64Array;
  windowNext: number;
  windowFilled: number;
  /** When the series was last updated (ms). */
  updatedAt: number;
}

/** Consul's `/v1/agent/metrics` body (go-metrics MetricsSummary). */
export interface MetricsSummary {
  readonly Timestamp: string;
  readonly Gauges: readonly { Name: string; Value: number; Labels: Record<string, string> }[];
  readonly Points: readonly never[];
  readonly Counters: readonly SampledValue[];
  readonly Samples: readonly SampledValue[];
}

export interface SampledValue {
  readonly Name: string;
  readonly Count: number;
  readonly Rate: number;
  readonly Sum: number;
  readonly Min: number;
  readonly Max: number;
  readonly Mean: number;
  readonly Stddev: number;
  readonly Labels: Record<string, string>;
}

const NO_COUNTER: CounterHandle = { add() {} };
const NO_GAUGE: GaugeHandle = { set() {} };
const NO_SAMPLE: SampleHandle = { observe() {} };

const seriesKey = (name: string, labels: Labels) => (labels.length ? `${name};${labels.map(([k, v]) => `${k}=${v}`).join(";")}` : name);

export class MetricsRegistry {
  private readonly byKey = new Map<string, Series>();
  private readonly intervalMs: number;
  private readonly keep: number;
  private readonly windowSize: number;
  private readonly windowMs: number;
  private readonly prefix: string;
  private readonly createdAt: number;

  constructor(private readonly o: RegistryOptions) {
    this.intervalMs = o.intervalMs ?? 10_000;
    this.keep = o.keepIntervals ?? 6;
    this.windowSize = o.windowSize ?? 1024;
    this.windowMs = o.windowMs ?? 10_000;
    this.prefix = o.prefix ?? "consul";
    this.createdAt = o.now();
  }

  counter(name: string, labels: Labels = []): CounterHandle {
    if (!this.allowed(this.fullName("counter", name))) return NO_COUNTER;
    const s = this.series("counter", name, labels);
    return { add: (v = 1) => this.record(s, v) };
  }

  gauge(name: string, labels: Labels = []): GaugeHandle {
    if (!this.allowed(this.fullName("gauge", name))) return NO_GAUGE;
    const s = this.series("gauge", name, labels);
    return {
      set: (v) => {
        const now = this.o.now();
        s.value = v;
        s.setIn = this.intervalStart(now);
        s.updatedAt = now;
      },
    };
  }

  sample(name: string, labels: Labels = []): SampleHandle {
    if (!this.allowed(this.fullName("sample", name))) return NO_SAMPLE;
    const s = this.series("sample", name, labels);
    return {
      observe: (v) => {
        this.record(s, v);
        s.window[s.windowNext] = v;
        s.windowAt[s.windowNext] = s.updatedAt;
        s.windowNext = (s.windowNext + 1) % s.window.length;
        if (s.windowFilled < s.window.length) s.windowFilled++;
      },
    };
  }

  /** Every series (for exposition), in name then label order. */
  series(): Series[];
  /** @internal The series of `name` and `labels`, created on first use (a second kind for one name is refused). */
  series(kind: MetricKind, name: string, labels: Labels): Series;
  series(kind?: MetricKind, name?: string, labels?: Labels): Series | Series[] {
    if (kind === undefined) return [...this.byKey.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, s]) => s);
    const full = this.fullName(kind, name!);
    const key = seriesKey(full, labels!);
    const found = this.byKey.get(key);
    if (found) {
      if (found.kind !== kind) throw new Error(`metric ${full} is a ${found.kind}, not a ${kind}`);
      return found;
    }
    const windowSize = kind === "sample" ? this.windowSize : 0;
    const s: Series = {
      kind, name: full, labels: labels!.map(([k, v]) => [k, v] as const), total: 0, count: 0, value: 0, setIn: -1,
      intervals: Array.from({ length: this.keep }, () => ({ start: -1, count: 0, sum: 0, sumSq: 0, min: 0, max: 0 })), head: 0,
      window: new Float64Array(windowSize), windowAt: new Float64Array(windowSize), windowNext: 0, windowFilled: 0, updatedAt: this.o.now(),
    };
    this.byKey.set(key, s);
    return s;
  }

  /** The registry's time (ms since the epoch). */
  now(): number {
    return this.o.now();
  }

  /** The dotted name a metric is recorded and filtered under: prefix, hostname for gauges, then `name`. */
  fullName(kind: MetricKind, name: string): string {
    const parts = [this.prefix, kind === "gauge" ? this.o.gaugeHostname : undefined, name].filter((p) => p);
    return parts.join(".");
  }

  private allowed(full: string): boolean {
    return this.o.filter ? this.o.filter(full) : true;
  }

  /** Drops the series not updated since `before` (ms): Prometheus retention. */
  expire(before: number): void {
    for (const [k, s] of this.byKey) if (s.updatedAt < before) this.byKey.delete(k);
  }

  /** The observations of a sample within the window ending now, sorted (for quantiles). */
  windowValues(s: Series, now: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < s.windowFilled; i++) if (s.windowAt[i]! > now - this.windowMs) out.push(s.window[i]!);
    return out.sort((a, b) => a - b);
  }

  /**
   * Consul's `/v1/agent/metrics`: the latest finished interval, or the current one while the registry
   * is younger than one interval (go-metrics shows the current interval when it is all it has).
   */
  summary(): MetricsSummary {
    const now = this.o.now();
    const current = this.intervalStart(now);
    const shown = current > this.intervalStart(this.createdAt) ? current - this.intervalMs : current;
    const gauges: MetricsSummary["Gauges"][number][] = [];
    const counters: SampledValue[] = [];
    const samples: SampledValue[] = [];
    for (const s of this.series()) {
      const labels = Object.fromEntries(s.labels);
      if (s.kind === "gauge") {
        if (s.setIn === shown) gauges.push({ Name: s.name, Value: s.value, Labels: labels });
        continue;
      }
      const agg = s.intervals.find((a) => a.start === shown);
      if (!agg || agg.count === 0) continue;
      const stddev = agg.count > 1 ? Math.sqrt(Math.max(0, (agg.count * agg.sumSq - agg.sum * agg.sum) / (agg.count * (agg.count - 1)))) : 0;
      const v: SampledValue = {
        Name: s.name, Count: agg.count, Rate: agg.sum / (this.intervalMs / 1000), Sum: agg.sum, Min: agg.min, Max: agg.max,
        Mean: agg.sum / agg.count, Stddev: stddev, Labels: labels,
      };
      (s.kind === "counter" ? counters : samples).push(v);
    }
    return { Timestamp: goTimeString(shown), Gauges: gauges, Points: [], Counters: counters, Samples: samples };
  }

  private intervalStart(ms: number): number {
    return ms - (ms % this.intervalMs);
  }

  private record(s: Series, v: number): void {
    const now = this.o.now();
    const start = this.intervalStart(now);
    let agg = s.intervals[s.head]!;
    if (agg.start !== start) {
      s.head = (s.head + 1) % s.intervals.length;
      agg = s.intervals[s.head]!;
      agg.start = start;
      agg.count = 0;
      agg.sum = 0;
      agg.sumSq = 0;
    }
    if (agg.count === 0) agg.min = agg.max = v;
    else {
      if (v < agg.min) agg.min = v;
      if (v > agg.max) agg.max = v;
    }
    agg.count++;
    agg.sum += v;
    agg.sumSq += v * v;
    s.total += v;
    s.count++;
    s.updatedAt = now;
  }
}

/** Go's time.Time.String() of a UTC instant at whole seconds: `2017-08-08 02:55:10 +0000 UTC`. */
export function goTimeString(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2017-08-08T02:55:10.000Z
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;
}
