/**
 * The gateway locator (Consul's agent/consul/gateway_locator.go) as a pure state machine: which mesh
 * gateway a server dials to reach another datacenter. Values in (federation states, fallback addresses
 * from `primary_gateways`, replication results, leadership), addresses out. No I/O, no clock: the
 * caller passes time where it is recorded and an Rng to pick with. Every input returns the events it
 * caused, so the composition root can log path changes and stop the fallback refresher.
 *
 * The rules, with their sources:
 * - Only gateways with meta `consul-wan-federation=1` and no critical check count; the local
 *   datacenter's by their LAN address, the primary's by their WAN address (gateways.ts).
 * - Nothing is returned until federation states were read once ("populated"), whatever the fallback.
 * - A non-primary target is always reached through the local gateways.
 * - The primary target, from the primary itself: the primary's gateways.
 * - The primary target, from a secondary: the local gateways when dialPrimaryThroughLocalGateway() and
 *   any exist, else the union of the replicated primary gateways and the fallback addresses (PR #7931,
 *   fixing #7339: stale replicated addresses must not hide the configured ones; PR #15032: old and new
 *   primary addresses both stay candidates while a rotation replicates).
 * - dialPrimaryThroughLocalGateway(): followers always trust the local gateways (issue #9341, PR #9366);
 *   the leader of a secondary follows the replication signal: the last result a success, or fewer than
 *   3 consecutive failures. Construction and every leadership change record a success (issue #9342:
 *   startup is not a failure).
 * - `disable_primary_gateway_fallback` (PR #9637): a secondary never dials the primary's gateways
 *   directly; the primary is reached through local gateways or not at all.
 * - The first time the primary's gateways are known from a federation state, "primary-gateways-ready"
 *   fires once (Consul closes PrimaryMeshGatewayAddressesReadyCh under a sync.Once, PR #6884): the
 *   `primary_gateways` refresher may stop.
 */
import type { FederationState } from "../model/index.ts";
import type { Rng } from "../platform/index.ts";
import { gatewayAddresses } from "./gateways.ts";

/** Consecutive replication failures after which a secondary's leader dials the primary directly. */
export const FAILURES_BEFORE_DIALING_DIRECTLY = 3;

export interface GatewayLocatorConfig {
  /** This server's datacenter. */
  readonly localDc: string;
  /** The primary datacenter (equal to localDc in the primary). */
  readonly primaryDc: string;
  /** `disable_primary_gateway_fallback`: never dial the primary's gateways directly from a secondary. */
  readonly disablePrimaryGatewayFallback?: boolean;
}

/** How a secondary reaches the primary right now: "direct" dials the primary's gateways. */
export type PrimaryRoute = "local-gateways" | "direct" | "none";

/** What an input changed. Events come in the order listed here when one input causes several. */
export type LocatorEvent =
  /** Federation states were read for the first time with at least one state (latch the `ft_fs` feature, PR #9519). */
  | { readonly type: "federation-states-present" }
  /** The usable gateways changed (Consul logs "new cached locations of mesh gateways"). */
  | { readonly type: "gateways-changed"; readonly primary: readonly string[]; readonly local: readonly string[] }
  /** The `primary_gateways` fallback list changed. */
  | { readonly type: "fallback-changed"; readonly addresses: readonly string[] }
  /** Once: the primary's gateways are known from a federation state; the fallback refresher may stop. */
  | { readonly type: "primary-gateways-ready" }
  /** Secondaries only: the route to the primary changed kind (e.g. direct fallback -> local gateways). */
  | { readonly type: "primary-route-changed"; readonly route: PrimaryRoute };

/** Why no gateway can be picked. */
export type NoPathReason = "not-populated" | "no-gateway";

/** The result of pick: an address to dial, or a typed "no path" with the operator-facing message. */
export type GatewayPick =
  | { readonly ok: true; readonly address: string }
  | { readonly ok: false; readonly datacenter: string; readonly reason: NoPathReason; readonly message: string };

/** The "no path" message for a datacenter (issue #10139: say why, do not hang). */
export function noPathMessage(dc: string): string {
  return `no path to datacenter ${dc}: no healthy mesh gateway`;
}

/** What the locator knows, for the operator view. Times are what the caller passed. */
export interface LocatorStatus {
  readonly populated: boolean;
  readonly primaryGateways: readonly string[];
  readonly localGateways: readonly string[];
  readonly fallbackAddresses: readonly string[];
  readonly primaryGatewaysKnown: boolean;
  readonly useReplicationSignal: boolean;
  readonly consecutiveFailures: number;
  readonly lastSuccessAt: number | undefined;
  readonly lastFailureAt: number | undefined;
  readonly primaryRoute: PrimaryRoute;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * One server's gateway locator. Single-threaded state machine: inputs return the events they caused;
 * reads (candidates, pick, status) have no effect. Lists handed out are sorted and never mutated.
 */
export class GatewayLocator {
  readonly #cfg: GatewayLocatorConfig;
  #primary: readonly string[] = [];
  #local: readonly string[] = [];
  #fallback: readonly string[] = [];
  #populated = false;
  #statesSeen = false;
  #primaryReady = false;
  #useReplicationSignal = false;
  /** Consecutive failures since the last success; the last result was a success iff 0 (and one was recorded). */
  #failures = 0;
  #lastSuccessAt: number | undefined;
  #lastFailureAt: number | undefined;

  /**
   * A locator for a server of `localDc`. Records an initial replication success at `now` (issue #9342),
   * so a secondary's leader starts out trusting its local gateways. Throws RangeError on an empty name.
   */
  constructor(config: GatewayLocatorConfig, now: number) {
    if (!config.localDc || !config.primaryDc) throw new RangeError("gateway locator: localDc and primaryDc must be non-empty");
    this.#cfg = { ...config };
    this.#recordSuccess(now);
  }

  /** Whether this server is in the primary datacenter. */
  get isPrimary(): boolean {
    return this.#cfg.localDc === this.#cfg.primaryDc;
  }

  /** True once the primary's gateways have come from a federation state (stays true). */
  get primaryGatewaysKnown(): boolean {
    return this.#primaryReady;
  }

  /**
   * Replaces the federation states (the whole list, as the local store holds it). Marks the locator
   * populated even when the list is empty. The local datacenter's state gives the local gateways, the
   * primary's the primary gateways (in the primary both come from the one state).
   */
  setFederationStates(states: readonly FederationState[]): readonly LocatorEvent[] {
    return this.#track(() => {
      const events: LocatorEvent[] = [];
      if (states.length > 0 && !this.#statesSeen) {
        this.#statesSeen = true;
        events.push({ type: "federation-states-present" });
      }
      const local = states.find((s) => s.Datacenter === this.#cfg.localDc);
      const primary = states.find((s) => s.Datacenter === this.#cfg.primaryDc);
      const localAddrs = gatewayAddresses(local?.MeshGateways, false);
      const primaryAddrs = gatewayAddresses(primary?.MeshGateways, true);
      this.#populated = true;
      if (!sameList(localAddrs, this.#local) || !sameList(primaryAddrs, this.#primary)) {
        this.#local = localAddrs;
        this.#primary = primaryAddrs;
        events.push({ type: "gateways-changed", primary: primaryAddrs, local: localAddrs });
      }
      if (primaryAddrs.length > 0 && !this.#primaryReady) {
        this.#primaryReady = true;
        events.push({ type: "primary-gateways-ready" });
      }
      return events;
    });
  }

  /** Replaces the `primary_gateways` fallback addresses (already resolved to host:port). */
  setFallbackAddresses(addresses: readonly string[]): readonly LocatorEvent[] {
    return this.#track(() => {
      const sorted = [...new Set(addresses)].sort();
      if (sameList(sorted, this.#fallback)) return [];
      this.#fallback = sorted;
      return [{ type: "fallback-changed", addresses: sorted }];
    });
  }

  /**
   * One federation-state replication round's outcome at `now` (the secondary leader's only probe of its
   * path to the primary). Recorded always; it steers the route only while this server is the leader.
   */
  replicationResult(result: "ok" | "error", now: number): readonly LocatorEvent[] {
    return this.#track(() => {
      if (result === "ok") this.#recordSuccess(now);
      else {
        this.#failures++;
        this.#lastFailureAt = now;
      }
      return [];
    });
  }

  /**
   * Leadership changed (Consul's start/stopFederationStateReplication): the leader uses the replication
   * signal, a follower does not (PR #9366); either way the history restarts from a success.
   */
  setLeader(isLeader: boolean, now: number): readonly LocatorEvent[] {
    return this.#track(() => {
      this.#useReplicationSignal = isLeader;
      this.#recordSuccess(now);
      return [];
    });
  }

  /**
   * DialPrimaryThroughLocalGateway: false in the primary (not relevant there); true with
   * disablePrimaryGatewayFallback, on a follower, after a success, or below 3 consecutive failures.
   */
  dialPrimaryThroughLocalGateway(): boolean {
    if (this.isPrimary) return false;
    if (this.#cfg.disablePrimaryGatewayFallback || !this.#useReplicationSignal) return true;
    return this.#failures < FAILURES_BEFORE_DIALING_DIRECTLY;
  }

  /** The candidate addresses for reaching `dc`, sorted (empty until populated). Same-dc traffic does not ask. */
  candidates(dc: string): readonly string[] {
    if (!this.#populated) return [];
    return dc === this.#cfg.primaryDc ? this.#toPrimary().list : this.#local;
  }

  /** A uniformly random candidate for `dc`, or "no path" with the reason and the operator message. */
  pick(dc: string, rng: Rng): GatewayPick {
    const list = this.candidates(dc);
    if (list.length === 0) {
      return { ok: false, datacenter: dc, reason: this.#populated ? "no-gateway" : "not-populated", message: noPathMessage(dc) };
    }
    return { ok: true, address: list.length === 1 ? list[0]! : list[rng.int(list.length)]! };
  }

  /** How a secondary reaches the primary now ("direct" in the primary, where it is its own gateways). */
  primaryRoute(): PrimaryRoute {
    return this.#toPrimary().route;
  }

  /** A snapshot of what the locator knows (for the operator view and logs). */
  status(): LocatorStatus {
    return {
      populated: this.#populated,
      primaryGateways: this.#primary,
      localGateways: this.#local,
      fallbackAddresses: this.#fallback,
      primaryGatewaysKnown: this.#primaryReady,
      useReplicationSignal: this.#useReplicationSignal,
      consecutiveFailures: this.#failures,
      lastSuccessAt: this.#lastSuccessAt,
      lastFailureAt: this.#lastFailureAt,
      primaryRoute: this.primaryRoute(),
    };
  }

  /** The route to the primary and its candidates (listGateways(primary=true)). */
  #toPrimary(): { readonly route: PrimaryRoute; readonly list: readonly string[] } {
    const via = (route: PrimaryRoute, list: readonly string[]) => ({ route: list.length > 0 ? route : "none" as const, list });
    if (!this.#populated) return via("none", []);
    if (this.isPrimary) return via("direct", this.#primary);
    if (this.dialPrimaryThroughLocalGateway() && this.#local.length > 0) return via("local-gateways", this.#local);
    if (this.#cfg.disablePrimaryGatewayFallback) return via("none", []);
    return via("direct", [...new Set([...this.#primary, ...this.#fallback])].sort());
  }

  #recordSuccess(now: number): void {
    this.#failures = 0;
    this.#lastSuccessAt = now;
  }

  /** Runs an input and appends "primary-route-changed" when a secondary's route kind changed. */
  #track(input: () => LocatorEvent[]): readonly LocatorEvent[] {
    const before = this.primaryRoute();
    const events = input();
    const after = this.primaryRoute();
    if (!this.isPrimary && after !== before) events.push({ type: "primary-route-changed", route: after });
    return events;
  }
}
