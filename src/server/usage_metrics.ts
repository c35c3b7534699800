/**
 * The state's usage gauges (Consul 1.9+ names, every 10 s as Consul's usage_metrics_interval): on every
 * server, `state.nodes`, `state.services`, `state.service_instances`, `state.kv_entries`,
 * `state.sessions`, `state.intentions`, `state.config_entries`; and the CA's
 * `mesh.active-root-ca.expiry` (seconds until the active root's NotAfter, Consul 1.11+) and
 * `connect.ca.root.rotations` (counter: a new active root seen).
 */
import type { Cancel, Clock } from "../platform/index.ts";
import { stateUsage, type StateStore } from "../state/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";

export const USAGE_METRICS_INTERVAL_MS = 10_000;

/** Records `store`'s usage now and every interval until cancelled. */
export function recordUsageMetrics(store: StateStore, registry: MetricsRegistry, clock: Clock): Cancel {
  const gauges = {
    nodes: registry.gauge("state.nodes"),
    services: registry.gauge("state.services"),
    serviceInstances: registry.gauge("state.service_instances"),
    kvEntries: registry.gauge("state.kv_entries"),
    sessions: registry.gauge("state.sessions"),
    intentions: registry.gauge("state.intentions"),
    configEntries: registry.gauge("state.config_entries"),
  };
  const rootExpiry = registry.gauge("mesh.active-root-ca.expiry");
  const rotations = registry.counter("connect.ca.root.rotations");
  let activeRootId: string | undefined;
  const collect = () => {
    const u = stateUsage(store);
    for (const key of Object.keys(gauges) as (keyof typeof gauges)[]) gauges[key].set(u[key]);
    const root = u.activeRoot;
    if (!root) return;
    if (activeRootId !== undefined && root.ID !== activeRootId) rotations.add();
    activeRootId = root.ID;
    rootExpiry.set(Math.floor((Date.parse(root.NotAfter) - clock.now()) / 1000));
  };
  collect();
  return clock.setInterval(USAGE_METRICS_INTERVAL_MS, collect);
}
