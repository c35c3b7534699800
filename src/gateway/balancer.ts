/**
 * Per-cluster endpoint choice for the gateway: smooth weighted round robin (nginx's
 * ngx_http_upstream_get_peer: each pick adds every candidate's weight to its running score, takes the
 * highest score, first one on ties, and subtracts the total from it), over the endpoints that are
 * healthy and not ejected, with Envoy's outlier detection and panic mode:
 *
 * - Ejection (Envoy source/common/upstream/outlier_detection_impl.cc): `consecutiveFailures` connect
 *   failures in a row eject an endpoint for min(baseEjectionMs x backoff, maxEjectionMs), where the
 *   backoff grows by one per ejection and shrinks by one per `intervalMs` spent un-ejected. A success
 *   resets the count. An ejection is refused (and counted as an overflow) once ejected/total reaches
 *   maxEjectionPercent, counted before this ejection as Envoy 1.14 did, so one endpoint can always be
 *   ejected when the percentage is above 0 (newer Envoy counts after it, with always_eject_one_host).
 *   Un-ejection happens exactly when the time is up (Envoy waits for its next interval tick).
 * - Panic (Envoy LoadBalancerBase::isHostSetInPanic, healthy_panic_threshold default 50%): when fewer
 *   than half of the endpoints are healthy and not ejected, every endpoint is a candidate, unhealthy and
 *   ejected ones included, because spreading load beats piling it onto a few survivors.
 *
 * Time comes from an injected monotonic clock; nothing runs on timers. Deterministic.
 */
import type { Clock } from "../platform/index.ts";
import type { EndpointConfig, OutlierConfig } from "./config_types.ts";

/** Envoy's default healthy_panic_threshold, in percent. */
export const PANIC_THRESHOLD_PERCENT = 50;
/** Envoy's OutlierDetection defaults for the fields OutlierConfig leaves optional. */
export const DEFAULT_OUTLIER_INTERVAL_MS = 10_000;
export const DEFAULT_MAX_EJECTION_MS = 300_000;

/** An endpoint as the balancer hands it out: the config plus its key. */
export interface BalancedEndpoint extends EndpointConfig {
  /** `address:port` (`[address]:port` for IPv6): the identity ejection state is kept under. */
  readonly key: string;
}

/** One endpoint's state for the admin endpoint's /clusters. */
export interface EndpointStatus extends BalancedEndpoint {
  readonly ejected: boolean;
  /** Monotonic ms when the ejection ends (only while ejected). */
  readonly ejectedUntilMs?: number;
  /** Times this endpoint has been ejected. */
  readonly ejections: number;
  readonly consecutiveFailures: number;
}

/** Counters named after Envoy's cluster stats. */
export interface BalancerStats {
  /** outlier_detection.ejections_active */
  readonly ejectionsActive: number;
  /** outlier_detection.ejections_enforced_total */
  readonly ejectionsEnforcedTotal: number;
  /** outlier_detection.ejections_overflow: ejections refused by maxEjectionPercent. */
  readonly ejectionsOverflow: number;
  /** lb_healthy_panic: picks made in panic mode. */
  readonly healthyPanic: number;
  /** upstream_cx_none_healthy: picks that found no candidate at all. */
  readonly noneHealthy: number;
}

/** The cluster fields the balancer runs on (a ClusterConfig fits). */
export interface BalancerInput {
  readonly endpoints: readonly EndpointConfig[];
  readonly outlier?: OutlierConfig;
}

export interface Balancer {
  /**
   * The next endpoint, skipping the keys in `excluding` (the ones a retried connect already tried);
   * undefined when no endpoint is left.
   */
  pick(excluding?: ReadonlySet<string>): BalancedEndpoint | undefined;
  /** A connect to `key` succeeded: its failure count restarts. Unknown keys are ignored. */
  reportSuccess(key: string): void;
  /** A connect to `key` failed or timed out: counts toward ejection. Unknown keys are ignored. */
  reportFailure(key: string): void;
  /** New endpoints and outlier settings; endpoints that stay (same key) keep their state. */
  update(input: BalancerInput): void;
  /** Every endpoint in configuration order, ejections brought up to date. */
  status(): readonly EndpointStatus[];
  stats(): BalancerStats;
}

/** The key an endpoint's state is kept under. */
export function endpointKey(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

interface State {
  endpoint: BalancedEndpoint;
  /** Smooth weighted round robin's running score. */
  current: number;
  failures: number;
  ejectedUntil: number | undefined;
  ejections: number;
  backoff: number;
  lastUnejected: number | undefined;
}

/** A balancer for one cluster. */
export function createBalancer(input: BalancerInput, clock: Pick<Clock, "monotonic">): Balancer {
  let states: State[] = [];
  let byKey = new Map<string, State>();
  let outlier: OutlierConfig | undefined;
  const counters = { ejectionsEnforcedTotal: 0, ejectionsOverflow: 0, healthyPanic: 0, noneHealthy: 0 };

  const isEjected = (s: State) => s.ejectedUntil !== undefined;

  /** Lifts the ejections whose time is up. */
  const refresh = (now: number) => {
    for (const s of states) {
      if (s.ejectedUntil !== undefined && now >= s.ejectedUntil) {
        s.lastUnejected = s.ejectedUntil;
        s.ejectedUntil = undefined;
        s.failures = 0;
      }
    }
  };

  const eject = (s: State, o: OutlierConfig, now: number) => {
    const ejectedNow = states.filter(isEjected).length;
    if ((100 * ejectedNow) / states.length >= Math.min(100, o.maxEjectionPercent)) {
      counters.ejectionsOverflow++;
      return;
    }
    const interval = o.intervalMs ?? DEFAULT_OUTLIER_INTERVAL_MS;
    const maxMs = Math.max(o.maxEjectionMs ?? DEFAULT_MAX_EJECTION_MS, o.baseEjectionMs);
    if (s.lastUnejected !== undefined && interval > 0) s.backoff = Math.max(0, s.backoff - Math.floor((now - s.lastUnejected) / interval));
    if (s.backoff * o.baseEjectionMs < maxMs + o.baseEjectionMs) s.backoff++;
    s.ejectedUntil = now + Math.min(o.baseEjectionMs * s.backoff, maxMs);
    s.ejections++;
    counters.ejectionsEnforcedTotal++;
  };

  const update = ({ endpoints, outlier: next }: BalancerInput) => {
    const nextByKey = new Map<string, State>();
    const nextStates: State[] = [];
    for (const e of endpoints) {
      const key = endpointKey(e.address, e.port);
      if (nextByKey.has(key)) continue;
      const endpoint: BalancedEndpoint = { key, address: e.address, port: e.port, healthy: e.healthy, weight: Math.max(1, e.weight) };
      const old = byKey.get(key);
      const s: State = old ? { ...old, endpoint } : { endpoint, current: 0, failures: 0, ejectedUntil: undefined, ejections: 0, backoff: 0, lastUnejected: undefined };
      if (!next) s.ejectedUntil = undefined;
      nextByKey.set(key, s);
      nextStates.push(s);
    }
    states = nextStates;
    byKey = nextByKey;
    outlier = next;
  };

  const pick = (excluding?: ReadonlySet<string>): BalancedEndpoint | undefined => {
    refresh(clock.monotonic());
    const healthy = states.filter((s) => s.endpoint.healthy && !isEjected(s));
    const panic = states.length > 0 && (100 * healthy.length) / states.length < PANIC_THRESHOLD_PERCENT;
    if (panic) counters.healthyPanic++;
    const pool = panic ? states : healthy;
    let total = 0;
    let best: State | undefined;
    for (const s of pool) {
      if (excluding?.has(s.endpoint.key)) continue;
      s.current += s.endpoint.weight;
      total += s.endpoint.weight;
      if (!best || s.current > best.current) best = s;
    }
    if (!best) {
      counters.noneHealthy++;
      return undefined;
    }
    best.current -= total;
    return best.endpoint;
  };

  update(input);
  return {
    pick,
    update,
    reportSuccess(key) {
      const s = byKey.get(key);
      if (s) s.failures = 0;
    },
    reportFailure(key) {
      const s = byKey.get(key);
      const o = outlier;
      if (!s || !o || o.consecutiveFailures < 1) return;
      const now = clock.monotonic();
      refresh(now);
      if (isEjected(s)) return;
      if (++s.failures < o.consecutiveFailures) return;
      s.failures = 0;
      eject(s, o, now);
    },
    status() {
      refresh(clock.monotonic());
      return states.map((s) => ({
        ...s.endpoint,
        ejected: isEjected(s),
        ...(s.ejectedUntil !== undefined ? { ejectedUntilMs: s.ejectedUntil } : {}),
        ejections: s.ejections,
        consecutiveFailures: s.failures,
      }));
    },
    stats() {
      refresh(clock.monotonic());
      return { ejectionsActive: states.filter(isEjected).length, ...counters };
    },
  };
}
