/**
 * The agent's metrics: one MetricsRegistry per agent, configured by the `telemetry` block, handed to
 * every part that records (HTTP, server, gossip, xDS), and the runtime gauges Consul's go-metrics
 * collects every second, in their JavaScript meaning:
 * - `runtime.alloc_bytes`: JavaScript heap in use; `runtime.sys_bytes`: resident set size;
 * - `runtime.heap_total_bytes` and `runtime.external_bytes` (Causeway's): the heap reserved, and memory
 *   held outside it (Buffers, typed arrays);
 * - `runtime.event_loop_lag` (Causeway's, a sample in ms): how late the one-second collection timer
 *   fired, which is how long the event loop was busy (a GC pause included).
 * Bun and Deno expose no GC pause events, so Consul's `runtime.total_gc_pause_ns`/`gc_runs` are not recorded.
 */
import { hostname } from "node:os";
import type { MetricsApi } from "../http/index.ts";
import type { Clock, Cancel } from "../platform/index.ts";
import { compilePrefixFilter, MetricsRegistry } from "../telemetry/index.ts";
import type { TelemetrySettings } from "./telemetry_config.ts";

export const RUNTIME_INTERVAL_MS = 1_000;

export interface AgentMetrics {
  readonly registry: MetricsRegistry;
  readonly api: MetricsApi;
  /** Stops the runtime collection. */
  stop(): void;
}

/** Makes the registry and starts the runtime gauges on `clock`. */
export function startAgentMetrics(settings: TelemetrySettings, clock: Clock, host: string = hostname()): AgentMetrics {
  const registry = new MetricsRegistry({
    now: () => clock.now(),
    prefix: settings.metricsPrefix,
    ...(settings.disableHostname ? {} : { gaugeHostname: host }),
    filter: compilePrefixFilter(settings.filterDefault, settings.prefixFilter),
  });
  const alloc = registry.gauge("runtime.alloc_bytes");
  const sys = registry.gauge("runtime.sys_bytes");
  const heapTotal = registry.gauge("runtime.heap_total_bytes");
  const external = registry.gauge("runtime.external_bytes");
  const lag = registry.sample("runtime.event_loop_lag");
  let due = clock.monotonic() + RUNTIME_INTERVAL_MS;
  const collect = () => {
    const now = clock.monotonic();
    lag.observe(Math.max(0, now - due));
    due = now + RUNTIME_INTERVAL_MS;
    const m = process.memoryUsage();
    alloc.set(m.heapUsed);
    sys.set(m.rss);
    heapTotal.set(m.heapTotal);
    external.set(m.external);
  };
  let cancel: Cancel | undefined;
  const schedule = () => {
    cancel = clock.setTimer(RUNTIME_INTERVAL_MS, () => {
      collect();
      schedule();
    });
  };
  schedule();
  return {
    registry,
    api: { registry, prometheusRetentionMs: settings.prometheusRetentionMs, monotonic: () => clock.monotonic() },
    stop: () => cancel?.(),
  };
}
