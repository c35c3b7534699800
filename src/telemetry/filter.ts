/**
 * Consul's `telemetry.prefix_filter` with `filter_default` (go-metrics' allow/block radix tree): a rule
 * "+p" keeps and "-p" drops the metrics whose full dotted name (prefix included, e.g.
 * `consul.raft.apply`) starts with `p`; the longest matching prefix decides (by characters, not by
 * dotted parts, as go-metrics matches), a prefix given both ways is dropped, and a name no rule matches
 * follows `filterDefault`.
 */

/** Whether a metric of this full dotted name is recorded. */
export type MetricFilter = (name: string) => boolean;

/** Compiles the rules; throws naming a rule that is empty or starts with neither '+' nor '-' (Consul only warns). */
export function compilePrefixFilter(filterDefault: boolean, rules: readonly string[]): MetricFilter {
  const decided = new Map<string, boolean>();
  for (const rule of rules) {
    if (rule === "") throw new Error("an empty rule; each rule is \"+prefix\" or \"-prefix\"");
    const sign = rule[0];
    if (sign !== "+" && sign !== "-") throw new Error(`rule ${JSON.stringify(rule)} must begin with either '+' or '-'`);
    const prefix = rule.slice(1);
    decided.set(prefix, sign === "+" && decided.get(prefix) !== false);
  }
  if (decided.size === 0) return () => filterDefault;
  const prefixes = [...decided.keys()].sort((a, b) => b.length - a.length);
  return (name) => {
    for (const p of prefixes) if (name.startsWith(p)) return decided.get(p)!;
    return filterDefault;
  };
}
