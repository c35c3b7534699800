/**
 * The proxyless gRPC manager: one ProxylessState machine per proxyless client with an open ADS stream,
 * over the agent cache, publishing each new valid snapshot (Causeway's own; Consul 1.8 has no proxyless
 * clients). A client's node ID is accepted when it is
 * - the ID of a local service that is not a proxy or gateway: its upstreams are the Upstreams of its
 *   sidecar (a local connect-proxy whose DestinationServiceID is that ID) when that lists any, otherwise
 *   every catalog service; or
 * - a configured client identity (`identities`): every catalog service.
 * Connect-proxy IDs are the sidecar manager's (./manager.ts); the caller asks it first.
 *
 * Machines start on demand: `acquire` (a stream opened) starts one, the last `release` stops it after
 * `idleMs` without streams. The first snapshot is published once complete (every chain and target in) or
 * after `initialWaitMs`, whichever comes first; later ones at most once per `coalesceMs` (as ./manager.ts).
 * A local service that is deregistered (and is not a configured identity) stops its machine and is removed.
 */
import type { AgentCache, AgentService, CacheType, CatalogServicesRequest } from "../agent/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import type { SidecarCacheTypes } from "./cache_watch.ts";
import { COALESCE_MS, type LocalServices } from "./manager.ts";
import type { ProxylessSnapshot } from "./proxyless_snapshot.ts";
import { ProxylessState, type ProxylessCommand, type ProxylessSource, type ProxylessUpdate, type ProxylessWatchRequest } from "./proxyless_state.ts";

/** How long a machine outlives its last stream (a reconnecting client finds its snapshot warm). */
export const PROXYLESS_IDLE_MS = 60_000;
/** The longest the first snapshot waits for every chain and target to be fetched. */
export const PROXYLESS_INITIAL_WAIT_MS = 2_000;

/** The cache types proxyless machines watch: chains and health as sidecars do, plus the catalog's services. */
export type ProxylessCacheTypes = Pick<SidecarCacheTypes, "chain" | "health"> & {
  readonly catalogServices: CacheType<CatalogServicesRequest, readonly string[]>;
};

export interface ProxylessManagerDeps {
  readonly datacenter: string;
  readonly cache: AgentCache;
  readonly types: ProxylessCacheTypes;
  readonly services: LocalServices;
  /** Node IDs accepted without a local registration; they resolve every catalog service. */
  readonly identities?: readonly string[];
  readonly clock: Clock;
  readonly logger: Logger;
  /** A client's new valid snapshot. Must not throw (a throw is logged). */
  publish(nodeId: string, snapshot: ProxylessSnapshot): void;
  /** The client's machine stopped: its service was deregistered (streams should end), or it went idle. */
  remove(nodeId: string): void;
  readonly coalesceMs?: number;
  readonly idleMs?: number;
  readonly initialWaitMs?: number;
}

export interface ProxylessManager {
  /** Whether `nodeId` may be served as a proxyless client now. */
  accepts(nodeId: string): boolean;
  /** Marks a stream of `nodeId` open, starting its machine if needed; the returned release closes it. Idempotent release. */
  acquire(nodeId: string): Cancel;
  /** The node IDs with a running machine, sorted. */
  nodes(): string[];
  /** The node's current valid snapshot, if any. */
  snapshot(nodeId: string): ProxylessSnapshot | undefined;
  /** Re-reads the agent's services now (also done on every agent change). */
  sync(): void;
  /** Cancels every watch and timer; nothing is published afterwards. */
  close(): void;
}

interface Running {
  readonly machine: ProxylessState;
  readonly watches: Map<string, Cancel>;
  streams: number;
  published: ProxylessSnapshot | undefined;
  timer: Cancel | undefined;
  idle: Cancel | undefined;
  lastPublish: number;
  readonly startedAt: number;
}

const PROXY_KINDS: ReadonlySet<string> = new Set(["connect-proxy", "mesh-gateway", "terminating-gateway", "ingress-gateway"]);

/** The source of a local service's upstreams, or undefined when `id` is not a local non-proxy service. */
export function localServiceSource(services: Record<string, AgentService>, id: string): ProxylessSource | undefined {
  const s = services[id];
  if (!s || (s.Kind && PROXY_KINDS.has(s.Kind))) return undefined;
  const sidecar = Object.values(services)
    .filter((p) => p.Kind === "connect-proxy" && p.Proxy?.DestinationServiceID === id && (p.Proxy.Upstreams ?? []).length > 0)
    .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0))[0];
  return sidecar ? { kind: "upstreams", upstreams: sidecar.Proxy!.Upstreams! } : { kind: "catalog" };
}

/** Starts the manager (nothing runs until a stream acquires a node). */
export function createProxylessManager(d: ProxylessManagerDeps): ProxylessManager {
  const log = d.logger;
  const coalesceMs = d.coalesceMs ?? COALESCE_MS;
  const idleMs = d.idleMs ?? PROXYLESS_IDLE_MS;
  const initialWaitMs = d.initialWaitMs ?? PROXYLESS_INITIAL_WAIT_MS;
  const identities = new Set(d.identities ?? []);
  const running = new Map<string, Running>();
  let closed = false;

  const sourceOf = (id: string): ProxylessSource | undefined =>
    localServiceSource(d.services.agentServices(), id) ?? (identities.has(id) ? { kind: "catalog" } : undefined);

  const startWatch = (id: string, r: Running, watchId: string, req: ProxylessWatchRequest): Cancel => {
    const onError = (err: unknown) => log.debug("proxycfg: proxyless watch failed; the cache retries", { node: id, watch: watchId, error: err });
    const deliver = (u: ProxylessUpdate) => event(id, r, u);
    switch (req.kind) {
      case "catalog-services":
        return d.cache.watch(d.types.catalogServices, {}, { onUpdate: (v) => deliver({ kind: "catalog-services", watchId, value: v.value }), onError });
      case "chain":
        return d.cache.watch(d.types.chain, req.chain, { onUpdate: (v) => deliver({ kind: "chain", watchId, value: v.value }), onError });
      case "instances": {
        const remote = req.datacenter !== "" && req.datacenter !== d.datacenter;
        const hreq = { service: req.service, connect: false, ...(remote ? { datacenter: req.datacenter } : {}), ...(req.filter ? { filter: req.filter } : {}) };
        return d.cache.watch(d.types.health, hreq, { onUpdate: (v) => deliver({ kind: "instances", watchId, value: v.value }), onError });
      }
    }
  };

  const run = (id: string, r: Running, cmds: readonly ProxylessCommand[]) => {
    for (const c of cmds) {
      r.watches.get(c.watchId)?.();
      r.watches.delete(c.watchId);
      if (c.op === "watch") r.watches.set(c.watchId, startWatch(id, r, c.watchId, c.request));
    }
  };

  const publishNow = (id: string, r: Running) => {
    r.timer = undefined;
    const snap = r.machine.snapshot();
    if (!snap || snap === r.published || running.get(id) !== r) return;
    r.published = snap;
    r.lastPublish = d.clock.monotonic();
    try {
      d.publish(id, snap);
    } catch (err) {
      log.error("proxycfg: publishing a proxyless snapshot failed", { node: id, error: err });
    }
  };

  const schedule = (id: string, r: Running) => {
    if (r.timer || closed) return;
    const snap = r.machine.snapshot();
    if (!snap || snap === r.published) return;
    const now = d.clock.monotonic();
    const wait = r.published
      ? Math.max(0, r.lastPublish + coalesceMs - now)
      : r.machine.complete() ? 0 : Math.max(0, r.startedAt + initialWaitMs - now);
    if (wait === 0) publishNow(id, r);
    else r.timer = d.clock.setTimer(wait, () => publishNow(id, r));
  };

  const event = (id: string, r: Running, ev: ProxylessUpdate | { readonly kind: "source"; readonly source: ProxylessSource }) => {
    if (closed || running.get(id) !== r) return;
    run(id, r, r.machine.handle(ev));
    // A first snapshot waiting for completeness goes out as soon as it is complete.
    if (!r.published && r.timer && r.machine.complete()) {
      r.timer();
      r.timer = undefined;
    }
    schedule(id, r);
  };

  const stop = (id: string, r: Running, why: string) => {
    log.debug("proxycfg: proxyless client stopped", { node: id, reason: why });
    r.timer?.();
    r.idle?.();
    run(id, r, r.machine.close());
    for (const c of r.watches.values()) c();
    r.watches.clear();
    running.delete(id);
    try {
      d.remove(id);
    } catch (err) {
      log.error("proxycfg: removing a proxyless client failed", { node: id, error: err });
    }
  };

  const sync = () => {
    if (closed) return;
    for (const [id, r] of [...running]) {
      const source = sourceOf(id);
      if (!source) stop(id, r, "deregistered");
      else event(id, r, { kind: "source", source });
    }
  };

  const unsubscribe = d.services.onChange(sync);

  return {
    accepts: (id) => !closed && sourceOf(id) !== undefined,
    acquire(id) {
      let r = running.get(id);
      const source = sourceOf(id);
      if (!r && source && !closed) {
        log.debug("proxycfg: proxyless client started", { node: id, source: source.kind });
        const fresh: Running = {
          machine: new ProxylessState({ datacenter: d.datacenter }, id, source),
          watches: new Map(), streams: 0, published: undefined, timer: undefined, idle: undefined, lastPublish: 0, startedAt: d.clock.monotonic(),
        };
        running.set(id, fresh);
        run(id, fresh, fresh.machine.start());
        schedule(id, fresh);
        r = fresh;
      }
      if (!r) return () => {};
      const held = r;
      held.streams++;
      held.idle?.();
      held.idle = undefined;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held.streams--;
        if (held.streams > 0 || closed || running.get(id) !== held) return;
        held.idle = d.clock.setTimer(idleMs, () => {
          held.idle = undefined;
          if (held.streams === 0 && running.get(id) === held) stop(id, held, "idle");
        });
      };
    },
    nodes: () => [...running.keys()].sort(),
    snapshot: (id) => running.get(id)?.machine.snapshot(),
    sync,
    close() {
      if (closed) return;
      unsubscribe();
      for (const r of running.values()) {
        r.timer?.();
        r.idle?.();
        r.machine.close();
        for (const c of r.watches.values()) c();
      }
      running.clear();
      closed = true;
    },
  };
}
