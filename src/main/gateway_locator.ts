/**
 * The gateway locator at run time (Consul's GatewayLocator.Run and the `primary_gateways` refresher of
 * agent/retry_join.go): feeds src/federation's pure GatewayLocator with the federation states (a stale
 * blocking read of this server's state), the `primary_gateways` fallback (host names resolved every
 * `primary_gateways_interval` until the primary's gateways are known from a replicated state), the
 * replication results and the leadership changes; logs every path change, one line per change; and
 * answers `pick(dc)` for the RPC dialer and the WAN gossip transport.
 */
import { GatewayLocator, type GatewayPick, type LocatorEvent, type LocatorStatus } from "../federation/index.ts";
import type { FederationState } from "../model/index.ts";
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";

/** Consul's blocking-query wait for the locator's federation-state read. */
const WATCH_WAIT_MS = 5 * 60_000;
/** Back-off of a failed read: doubling from 1 s up to this. */
const WATCH_MAX_BACKOFF_MS = 30_000;

export interface GatewayLocatorDeps {
  readonly localDc: string;
  readonly primaryDc: string;
  readonly disablePrimaryGatewayFallback: boolean;
  /** `primary_gateways` entries (`host:port`) and how often they are re-resolved. */
  readonly primaryGateways: readonly string[];
  readonly primaryGatewaysIntervalMs: number;
  /**
   * One stale blocking read of this server's federation states. close() aborts `signal`: the read
   * should then stop waiting (rejecting); whatever it settles to afterwards is ignored.
   */
  readStates(minIndex: number, maxWaitMs: number, signal: AbortSignal): Promise<{ readonly states: readonly FederationState[]; readonly index: number }>;
  /** The IP addresses of a host name (an IP literal resolves to itself). */
  resolve(host: string): Promise<readonly string[]>;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /**
   * The candidate gateways (or the route to the primary) changed: connections made the old way must
   * not carry new traffic (a follower that dialled the primary's gateways at startup, before its local
   * gateways were known, would otherwise keep using that connection: #9341).
   */
  readonly onPathChange?: () => void;
  /**
   * Where the locator's state is recorded, after every change: `federation.locator.primary_route`
   * (gauge per `route`: 1 for the way a secondary reaches the primary now, direct, local-gateways or
   * none), `federation.locator.gateways` (gauge per `kind`: primary, local, fallback addresses) and
   * `federation.locator.failures` (consecutive replication failures the route decision counts).
   */
  readonly metrics?: MetricsRegistry;
}

export interface GatewayLocatorRuntime {
  /** The gateway to dial for `dc` now, or "no path" with its message. */
  pick(dc: string): GatewayPick;
  /** A replication round's result (the leader of a secondary follows it). */
  replicationResult(ok: boolean): void;
  setLeader(leader: boolean): void;
  status(): LocatorStatus;
  close(): void;
}

/** `host:port` split at the last colon, brackets removed from an IPv6 host. */
function splitHostPort(entry: string): { host: string; port: string } | undefined {
  const i = entry.lastIndexOf(":");
  if (i <= 0) return undefined;
  return { host: entry.slice(0, i).replace(/^\[(.*)\]$/, "$1"), port: entry.slice(i + 1) };
}

export function startGatewayLocator(d: GatewayLocatorDeps): GatewayLocatorRuntime {
  const log = d.logger;
  const locator = new GatewayLocator(
    { localDc: d.localDc, primaryDc: d.primaryDc, disablePrimaryGatewayFallback: d.disablePrimaryGatewayFallback },
    d.clock.monotonic(),
  );
  let closed = false;
  let refresher: Cancel | undefined;
  let watchTimer: Cancel | undefined;
  /** The read in flight, aborted by close(). */
  let reading: AbortController | undefined;
  let refreshing = d.primaryGateways.length > 0 && locator.isPrimary === false;

  const routes = ["direct", "local-gateways", "none"] as const;
  const gauges = d.metrics ? {
    route: routes.map((r) => d.metrics!.gauge("federation.locator.primary_route", [["route", r]])),
    primary: d.metrics.gauge("federation.locator.gateways", [["kind", "primary"]]),
    local: d.metrics.gauge("federation.locator.gateways", [["kind", "local"]]),
    fallback: d.metrics.gauge("federation.locator.gateways", [["kind", "fallback"]]),
    failures: d.metrics.gauge("federation.locator.failures"),
  } : undefined;
  const record = () => {
    if (!gauges) return;
    const s = locator.status();
    routes.forEach((r, i) => gauges.route[i]!.set(s.primaryRoute === r ? 1 : 0));
    gauges.primary.set(s.primaryGateways.length);
    gauges.local.set(s.localGateways.length);
    gauges.fallback.set(s.fallbackAddresses.length);
    gauges.failures.set(s.consecutiveFailures);
  };

  const report = (events: readonly LocatorEvent[]) => {
    record();
    if (events.some((e) => e.type === "gateways-changed" || e.type === "fallback-changed" || e.type === "primary-route-changed")) d.onPathChange?.();
    for (const e of events) {
      switch (e.type) {
        case "gateways-changed":
          log.info("federation: mesh gateway locations changed", { primary: e.primary.join(",") || "none", local: e.local.join(",") || "none" });
          break;
        case "fallback-changed":
          log.info("federation: primary_gateways resolved", { addresses: e.addresses.join(",") || "none" });
          break;
        case "primary-gateways-ready":
          log.info("federation: the primary datacenter's gateways are known from its federation state; no longer refreshing primary_gateways");
          refreshing = false;
          refresher?.();
          refresher = undefined;
          break;
        case "primary-route-changed":
          log.info("federation: path to the primary datacenter changed", { datacenter: d.primaryDc, route: e.route });
          break;
        case "federation-states-present":
          break;
      }
    }
  };

  const refresh = async () => {
    refresher = undefined;
    if (closed || !refreshing) return;
    const out: string[] = [];
    for (const entry of d.primaryGateways) {
      const hp = splitHostPort(entry);
      if (!hp) continue;
      try {
        for (const ip of await d.resolve(hp.host)) out.push(ip.includes(":") ? `[${ip}]:${hp.port}` : `${ip}:${hp.port}`);
      } catch (err) {
        log.warn("federation: cannot resolve a primary_gateways entry; will retry", { entry, error: err });
      }
    }
    if (closed) return;
    report(locator.setFallbackAddresses(out));
    if (refreshing) refresher = d.clock.setTimer(d.primaryGatewaysIntervalMs, () => void refresh());
  };

  let index = 0;
  let failures = 0;
  const watch = async () => {
    watchTimer = undefined;
    if (closed) return;
    const read = (reading = new AbortController());
    try {
      const r = await d.readStates(index, WATCH_WAIT_MS, read.signal);
      if (closed) return;
      failures = 0;
      // An index that went back (a restore) starts the watch over.
      index = r.index < index ? 0 : r.index;
      report(locator.setFederationStates(r.states));
      watchTimer = d.clock.setTimer(0, () => void watch());
    } catch (err) {
      if (closed) return;
      failures++;
      const wait = Math.min(1000 * 2 ** (failures - 1), WATCH_MAX_BACKOFF_MS);
      log.debug("federation: reading federation states failed; will retry", { error: err, retry_in_ms: wait });
      watchTimer = d.clock.setTimer(wait, () => void watch());
    } finally {
      if (reading === read) reading = undefined;
    }
  };

  void watch();
  if (refreshing) void refresh();
  return {
    pick: (dc) => locator.pick(dc, d.rng),
    replicationResult: (ok) => report(locator.replicationResult(ok ? "ok" : "error", d.clock.monotonic())),
    setLeader: (leader) => report(locator.setLeader(leader, d.clock.monotonic())),
    status: () => locator.status(),
    close() {
      closed = true;
      refresher?.();
      watchTimer?.();
      reading?.abort();
      reading = undefined;
    },
  };
}
