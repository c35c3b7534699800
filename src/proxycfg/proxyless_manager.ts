/**
 * The proxyless gRPC manager: one ProxylessState machine per proxyless client with an open ADS stream,
 * over the agent cache, publishing each new valid snapshot (Causeway's own; Consul 1.8 has no proxyless
 * clients). Machines are keyed by the xDS cache key they publish under. A key is served when it is
 * - the ID of a local service that is not a proxy or gateway: its upstreams are the Upstreams of its
 *   sidecar (a local connect-proxy whose DestinationServiceID is that ID) when that lists any, otherwise
 *   every catalog service;
 * - a configured client identity (`identities`): every catalog service; or
 * - the proxyless view of a local connect proxy, {@link proxylessViewKey}(proxy ID): the Upstreams of
 *   that proxy (none: nothing resolves). A gRPC client whose node ID is a sidecar's proxy ID is served
 *   this view; Envoy, with the same node ID, keeps the sidecar's own resources under the proxy ID
 *   (./manager.ts). Mesh gateways have no proxyless view.
 * {@link ProxylessManager.classify} tells the ADS resolver (src/xds/node.ts) which of these a node ID is.
 *
 * Machines start on demand: `acquire` (a stream opened) starts one, the last `release` stops it after
 * `idleMs` without streams. The first snapshot is published once complete (every chain and target in) or
 * after `initialWaitMs`, whichever comes first; later ones at most once per `coalesceMs` (as ./manager.ts).
 * A key that stops being served (its service or proxy deregistered, not a configured identity) or that
 * changes owner (see PROXYLESS_VIEW_PREFIX) stops its machine and is removed, unless it became the ID of
 * a proxy (whose cache entry it then is).
 */
import type { AgentCache, AgentService, CacheType, CatalogServicesRequest } from "../agent/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import type { SidecarCacheTypes } from "./cache_watch.ts";
import { COALESCE_MS, meshGatewayRegistration, sidecarRegistration, type LocalServices } from "./manager.ts";
import type { ProxylessSnapshot } from "./proxyless_snapshot.ts";
import { ProxylessState, type ProxylessCommand, type ProxylessSource, type ProxylessUpdate, type ProxylessWatchRequest } from "./proxyless_state.ts";

/** How long a machine outlives its last stream (a reconnecting client finds its snapshot warm). */
export const PROXYLESS_IDLE_MS = 60_000;
/** The longest the first snapshot waits for every chain and target to be fetched. */
export const PROXYLESS_INITIAL_WAIT_MS = 2_000;

/**
 * The prefix of a connect proxy's proxyless view key: `~proxyless-grpc~<proxy ID>`. The xDS cache holds
 * one resource set per key, and the proxy ID itself is the key of the sidecar's Envoy resources. Service
 * IDs are free-form (Consul restricts none of their characters), so no prefix is out of a service's reach;
 * this one (`~` is unusual in an ID and, like `-`, reaches grpc-js clients unescaped in error messages)
 * makes a clash unlikely, and the manager makes one harmless: a key that is also the ID of a local
 * service (of any kind) or a client identity belongs to that service or identity, the view is then
 * unavailable (classify says so and the resolver refuses the client), and a running view whose key gains
 * such an owner is stopped. Served resource sets therefore never share a key.
 */
export const PROXYLESS_VIEW_PREFIX = "~proxyless-grpc~";

/** The xDS cache key of the proxyless view of local connect proxy `proxyId`. */
export function proxylessViewKey(proxyId: string): string {
  return PROXYLESS_VIEW_PREFIX + proxyId;
}

/**
 * What a node ID names on this agent, as the ADS resolver needs to know it (the shape of
 * src/xds/node.ts NodeTarget):
 * - `proxyless`: served the proxyless resources under this very ID, whatever the client;
 * - `connect-proxy`: a sidecar the proxy manager runs; Envoy gets its resources under the ID, other clients
 *   its proxyless view under `proxylessKey` (undefined: the view is unavailable, its key has another owner);
 * - `mesh-gateway`: Envoy (or the causeway gateway) only.
 */
export type LocalNode =
  | { readonly kind: "proxyless" }
  | { readonly kind: "connect-proxy"; readonly proxylessKey: string | undefined }
  | { readonly kind: "mesh-gateway" };

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
  /**
   * The client's machine stopped: its service or proxy was deregistered or its key changed owner (streams
   * should end), or it went idle. Not called for a view whose key became a proxy's ID (the entry is that proxy's).
   */
  remove(nodeId: string): void;
  readonly coalesceMs?: number;
  readonly idleMs?: number;
  readonly initialWaitMs?: number;
}

export interface ProxylessManager {
  /** Whether the cache key `nodeId` may be served as a proxyless client now. */
  accepts(nodeId: string): boolean;
  /** What node ID `id` names on this agent now (see LocalNode); undefined when nothing. */
  classify(id: string): LocalNode | undefined;
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
  /** The client's node ID: the key itself, or the proxy ID of a proxy's view. */
  readonly clientId: string;
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

/** The source of connect proxy `proxyId`'s proxyless view: its Upstreams; undefined when it is not a local connect proxy. */
export function sidecarViewSource(services: Record<string, AgentService>, proxyId: string): ProxylessSource | undefined {
  const s = services[proxyId];
  return s && sidecarRegistration(s) ? { kind: "upstreams", upstreams: s.Proxy?.Upstreams ?? [] } : undefined;
}

/** A key's client and where its upstreams come from. */
interface Served {
  readonly clientId: string;
  readonly source: ProxylessSource;
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

  /** What key `key` serves now: its own service or identity first, else the view it names (unless the key is a service's). */
  const servedOf = (key: string, services = d.services.agentServices()): Served | undefined => {
    const own = localServiceSource(services, key) ?? (identities.has(key) ? { kind: "catalog" as const } : undefined);
    if (own) return { clientId: key, source: own };
    if (services[key] || !key.startsWith(PROXYLESS_VIEW_PREFIX)) return undefined;
    const proxyId = key.slice(PROXYLESS_VIEW_PREFIX.length);
    const source = sidecarViewSource(services, proxyId);
    return source && { clientId: proxyId, source };
  };

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

  const stop = (id: string, r: Running, why: string, removeEntry = true) => {
    log.debug("proxycfg: proxyless client stopped", { node: id, reason: why });
    r.timer?.();
    r.idle?.();
    run(id, r, r.machine.close());
    for (const c of r.watches.values()) c();
    r.watches.clear();
    running.delete(id);
    if (!removeEntry) return;
    try {
      d.remove(id);
    } catch (err) {
      log.error("proxycfg: removing a proxyless client failed", { node: id, error: err });
    }
  };

  const sync = () => {
    if (closed) return;
    const services = d.services.agentServices();
    for (const [id, r] of [...running]) {
      const served = servedOf(id, services);
      if (served && served.clientId === r.clientId) {
        event(id, r, { kind: "source", source: served.source });
        continue;
      }
      // A view whose key became a proxy's ID leaves the cache entry to that proxy's manager.
      const keyIsAProxy = !served && r.clientId !== id && services[id] !== undefined;
      stop(id, r, served ? "the key changed owner" : "deregistered", !keyIsAProxy);
    }
  };

  const unsubscribe = d.services.onChange(sync);

  return {
    accepts: (id) => !closed && servedOf(id) !== undefined,
    classify(id) {
      if (closed) return undefined;
      const services = d.services.agentServices();
      const s = services[id];
      if (s && sidecarRegistration(s)) {
        const key = proxylessViewKey(id);
        return { kind: "connect-proxy", proxylessKey: servedOf(key, services)?.clientId === id ? key : undefined };
      }
      if (s && meshGatewayRegistration(s)) return { kind: "mesh-gateway" };
      return servedOf(id, services) ? { kind: "proxyless" } : undefined;
    },
    acquire(id) {
      let r = running.get(id);
      const served = r ? undefined : servedOf(id);
      if (!r && served && !closed) {
        log.debug("proxycfg: proxyless client started", { node: id, client: served.clientId, source: served.source.kind });
        const fresh: Running = {
          clientId: served.clientId,
          machine: new ProxylessState({ datacenter: d.datacenter }, served.clientId, served.source),
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
