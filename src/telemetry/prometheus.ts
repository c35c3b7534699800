/**
 * The Prometheus text exposition format 0.0.4 of a registry, named as go-metrics' prometheus sink names
 * Consul's metrics: key parts joined with "_" and `[ .=\-/]` replaced by "_", case kept, no `_total`
 * suffix; counters cumulative, gauges their last value, samples as summaries (quantiles 0.5, 0.9 and
 * 0.99 of the observations in the window, NaN when there are none, plus `_sum` and `_count`).
 */
import type { MetricsRegistry, Series } from "./registry.ts";

/** The Content-Type of this format. */
export const PROMETHEUS_TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The Content-Type of OpenMetrics 1.0.0 text. */
export const OPENMETRICS_TEXT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/**
 * go-metrics' prometheus sink's name mapping (`consul.raft.commitTime` -> `consul_raft_commitTime`),
 * then any other character a metric name cannot hold as "_" (go-metrics leaves those to fail in the
 * Prometheus client; none of Consul's names has one).
 */
export function prometheusName(dotted: string): string {
  const name = dotted.replace(/[ .=\-/]/g, "_").replace(/[^a-zA-Z0-9_:]/g, "_");
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/**
 * Which text format an `Accept` header asks for: OpenMetrics when an `application/openmetrics-text`
 * entry has a higher (or the same, earlier) q-value than every `text/plain` and wildcard entry, as
 * client_golang's negotiation with OpenMetrics enabled chooses; the 0.0.4 text otherwise.
 */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false;
  let best: { open: boolean; q: number } | undefined;
  for (const entry of accept.split(",")) {
    const [type = "", ...params] = entry.split(";").map((x) => x.trim());
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    const open = type === "application/openmetrics-text";
    if (!open && type !== "text/plain" && type !== "*/*" && type !== "text/*") continue;
    if (!best || q > best.q) best = { open, q };
  }
  return best?.open ?? false;
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escapeHelp = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const labelName = (k: string) => k.replace(/[^a-zA-Z0-9_]/g, "_").replace(/^([0-9])/, "_$1");

function labelText(labels: readonly (readonly [string, string])[], extra?: readonly [string, string]): string {
  const all = extra ? [...labels, extra] : labels;
  return all.length ? `{${all.map(([k, v]) => `${labelName(k)}="${escapeLabel(v)}"`).join(",")}}` : "";
}

/** Go's strconv formatting of a float as Prometheus writes it (NaN, +Inf, -Inf, shortest round trip). */
function num(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

/** The quantile `q` of sorted `values` (nearest rank), NaN when empty. */
function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  return values[Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))]!;
}

const QUANTILES = [0.5, 0.9, 0.99] as const;

/**
 * The exposition of every series of `registry` at `now`, grouped by metric name with one `# HELP` and
 * `# TYPE` line each (the help text is the name, as go-metrics writes it for undefined metrics).
 */
export function prometheusText(registry: MetricsRegistry, now: number): string {
  return exposition(registry, now, false);
}

/**
 * The same in OpenMetrics 1.0.0 text: counter samples carry the `_total` suffix, and the text ends
 * with `# EOF`.
 */
export function openMetricsText(registry: MetricsRegistry, now: number): string {
  return `${exposition(registry, now, true)}# EOF\n`;
}

function exposition(registry: MetricsRegistry, now: number, openMetrics: boolean): string {
  const byName = new Map<string, Series[]>();
  for (const s of registry.series()) {
    const name = prometheusName(s.name);
    const group = byName.get(name);
    if (group) {
      if (group[0]!.kind !== s.kind) continue; // one type per name: a clash keeps the first
      group.push(s);
    } else byName.set(name, [s]);
  }
  const out: string[] = [];
  for (const [name, group] of [...byName.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const kind = group[0]!.kind;
    // OpenMetrics names a counter family without its samples' `_total`.
    const family = openMetrics && kind === "counter" ? name.replace(/_total$/, "") : name;
    out.push(`# HELP ${family} ${(openMetrics ? escapeLabel : escapeHelp)(family)}`, `# TYPE ${family} ${kind === "sample" ? "summary" : kind}`);
    for (const s of group) {
      if (kind === "counter") out.push(`${openMetrics ? `${family}_total` : name}${labelText(s.labels)} ${num(s.total)}`);
      else if (kind === "gauge") out.push(`${name}${labelText(s.labels)} ${num(s.value)}`);
      else {
        const values = registry.windowValues(s, now);
        for (const q of QUANTILES) out.push(`${name}${labelText(s.labels, ["quantile", String(q)])} ${num(quantile(values, q))}`);
        out.push(`${name}_sum${labelText(s.labels)} ${num(s.total)}`, `${name}_count${labelText(s.labels)} ${s.count}`);
      }
    }
  }
  return out.length ? `${out.join("\n")}\n` : "";
}
