/**
 * The federation-state leader routines of one server, assembled over its state store and its
 * StateCaller (Consul's startFederationStateReplication and startFederationStateAntiEntropy in
 * establishLeadership): in a secondary, replication from the primary and anti-entropy to it; in the
 * primary, anti-entropy applied locally and the hourly prune. Reads of another datacenter and writes
 * to it take the same StateCaller path as `?dc=` requests (forwarded to a server of that datacenter).
 */
import type { FederationState, ReadQuery } from "../model/index.ts";
import type { Clock, Logger, Rng } from "../platform/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import { decodeWire, encodeWire, type StateCaller } from "../rpc/index.ts";
import {
  blockingQuery, encodeCommand, federationStateGet, federationStateList, healthServicesOfKind, WatchSet,
  type StateCommand, type StateResult, type StateStore,
} from "../state/index.ts";
import { federationStateAntiEntropyRoutine, federationStatePruneRoutine, type AntiEntropyRead } from "./leader_federation_ae.ts";
import { federationStatesGate, type FederationStatesGate, type GatedServer } from "./leader_federation_gate.ts";
import { federationStateReplicationRoutine } from "./leader_federation_replication.ts";
import type { LeaderRoutine } from "./leader_routines.ts";

/** How long one blocking read of the routines waits at most (Consul's default query time, 5 min). */
export const FEDERATION_QUERY_WAIT_MS = 300_000;

export interface FederationRoutinesOptions {
  readonly localDc: string;
  /** `primary_datacenter`; equal to localDc in the primary (and in a single-datacenter setup). */
  readonly primaryDc: string;
  readonly store: StateStore;
  /** Resolves once everything committed before the call is applied here (anti-entropy's consistent read). */
  barrier(): Promise<void>;
  /** The server's StateCaller; undefined until its RPC layer is up (calls fail and are retried until then). */
  state(): StateCaller | undefined;
  /** What gossip shows of a datacenter's servers (LAN pool for the local one, WAN pool for others). */
  servers(datacenter: string): readonly GatedServer[];
  /** Datacenters known from the WAN pool (may throw while it is not running): the primary's prune keeps these. */
  knownDatacenters(): readonly string[];
  /** Each replication fetch's outcome, for the gateway locator (secondaries only). */
  readonly onReplicationResult?: (ok: boolean) => void;
  /** Where the replication's status and index gauges go (leader_federation_replication.ts). */
  readonly metrics?: MetricsRegistry;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /** Blocking read wait; FEDERATION_QUERY_WAIT_MS by default. */
  readonly queryWaitMs?: number;
}

export interface FederationRoutines {
  /** In start order: replication (secondaries) and anti-entropy, then the prune (primary). */
  readonly routines: readonly LeaderRoutine[];
  readonly gate: FederationStatesGate;
}

export function federationRoutines(o: FederationRoutinesOptions): FederationRoutines {
  const { store, clock } = o;
  const maxWaitMs = o.queryWaitMs ?? FEDERATION_QUERY_WAIT_MS;
  const caller = (): StateCaller => {
    const c = o.state();
    if (!c) throw new Error("the server's RPC layer is not running yet");
    return c;
  };
  /** Proposes `command` in `datacenter` (undefined: here) through the StateCaller; a refusal rejects. */
  const apply = async (command: StateCommand, datacenter?: string): Promise<void> => {
    const r = decodeWire<StateResult>(await caller().apply(encodeCommand(command), datacenter));
    if (r.type === "error") throw new Error(r.error);
  };
  const localStates = () => federationStateList(store, new WatchSet()).value;
  const gate = federationStatesGate({ localDc: o.localDc, primaryDc: o.primaryDc, servers: o.servers, hasStates: () => localStates().length > 0 });

  const antiEntropy = federationStateAntiEntropyRoutine({
    localDc: o.localDc,
    primaryDc: o.primaryDc,
    supported: () => gate.supported(),
    async readLocal(minIndex, signal) {
      await o.barrier();
      // The stored record and the gateways in one blocking read (fetchFederationStateAntiEntropyDetails);
      // the gateways are what "health-service-kind-nodes" of kind mesh-gateway serves the agent cache.
      const r = await blockingQuery<AntiEntropyRead>({
        minIndex,
        maxWaitMs,
        clock,
        signal,
        run: (ws) => {
          const stored = federationStateGet(store, ws, o.localDc);
          const gateways = healthServicesOfKind(store, ws, "mesh-gateway");
          const index = Math.max(stored.index, gateways.index);
          return { index, value: { index, stored: stored.value, gateways: gateways.value } };
        },
      });
      return { ...r.value, index: r.index };
    },
    apply,
    clock,
    logger: o.logger.named("anti-entropy"),
  });

  if (o.primaryDc === o.localDc) {
    const prune = federationStatePruneRoutine({
      localDc: o.localDc, localStates, knownDatacenters: o.knownDatacenters, apply: (cmd) => apply(cmd), clock, logger: o.logger.named("prune"),
    });
    return { routines: [antiEntropy, prune], gate };
  }

  const replication = federationStateReplicationRoutine({
    supported: () => gate.supported(),
    async fetchRemote(minIndex, signal) {
      // stop() aborts `signal`: the call to the primary is cancelled, and with it the primary's wait.
      const out = await caller().query(encodeWire({ type: "federation-state-list" } satisfies ReadQuery), {
        datacenter: o.primaryDc, consistency: "stale", minIndex, maxWaitMs, signal,
      });
      return { index: out.index, states: decodeWire<FederationState[]>(out.result) };
    },
    localStates,
    apply: (cmd) => apply(cmd),
    onResult: o.onReplicationResult,
    ...(o.metrics ? {
      metrics: { status: o.metrics.gauge("leader.replication.federation-state.status"), index: o.metrics.gauge("leader.replication.federation-state.index") },
    } : {}),
    clock,
    rng: o.rng,
    logger: o.logger.named("replication"),
  });
  return { routines: [replication, antiEntropy], gate };
}
