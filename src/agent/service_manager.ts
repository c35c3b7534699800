/**
 * The agent's service manager (Consul 1.8 agent/service_manager.go: ServiceManager, serviceConfigWatch,
 * makeConfigRequest, mergeServiceConfig): a local service of Kind connect-proxy or mesh-gateway is
 * registered with its centralized configuration folded in, and kept so while the config entries it
 * resolves from change. Causeway has no `enable_central_service_config` switch: this is always on, as
 * Consul's default from 1.10 is.
 *
 * Where Consul's servers answer one `ConfigEntry.ResolveServiceConfig` per service, the agent here
 * follows the entries themselves through the agent cache (proxy-defaults "global"; service-defaults of
 * a sidecar's destination, or of a gateway's own name; service-defaults of each service upstream of a
 * sidecar) and resolves and merges them with the pure functions of src/connect (the same ones proxycfg
 * uses). One cache watch per entry, shared by every service that needs it.
 *
 * What goes where, as in Consul 1.8 (addServiceInternal gets the merged NodeService for the local state,
 * and the registration as given as `persistService`): the MERGED service is what the agent registers in
 * its local state, so it is what `/v1/agent/service/:id` shows, what anti-entropy syncs to the catalog and
 * what the exposed-check routing and proxycfg read; the registration as given is what this manager keeps
 * to merge again, and what the agent persists.
 */
import { isServiceUpstream, mergeServiceConfig, resolveServiceConfig, type ResolvedServiceConfig } from "../connect/index.ts";
import type { ConfigEntry } from "../model/index.ts";
import type { Cancel, Logger } from "../platform/index.ts";
import type { AgentCache, CacheType, ConfigEntryRequest } from "./cache/index.ts";
import type { LocalService } from "./local_state.ts";

/** Where central config comes from: the agent's cache and its config-entry type (shared with proxycfg when it is the same object). */
export interface CentralConfigSource {
  readonly cache: AgentCache;
  readonly configEntry: CacheType<ConfigEntryRequest, ConfigEntry | null>;
}

/** makeConfigRequest: the service whose defaults apply, and the service upstreams whose defaults apply to them. */
export interface ServiceConfigRequest {
  readonly name: string;
  readonly upstreams: readonly string[];
}

/**
 * The central config request of a local service: a connect proxy is configured by its destination's
 * service-defaults and those of its service upstreams (not prepared queries); a mesh gateway by its own
 * name's. Undefined for any other kind (Consul's AddService bypasses the manager for them).
 */
export function serviceConfigRequest(s: LocalService): ServiceConfigRequest | undefined {
  if (s.Kind === "connect-proxy") {
    const upstreams = (s.Proxy.Upstreams ?? []).filter(isServiceUpstream).map((u) => u.DestinationName);
    return { name: s.Proxy.DestinationServiceName ?? "", upstreams: [...new Set(upstreams)] };
  }
  if (s.Kind === "mesh-gateway") return { name: s.Service, upstreams: [] };
  return undefined;
}

const GLOBAL: ConfigEntryRequest = { kind: "proxy-defaults", name: "global" };
const serviceDefaults = (name: string): ConfigEntryRequest => ({ kind: "service-defaults", name });
const keyOf = (r: ConfigEntryRequest) => JSON.stringify([r.kind, r.name]);

/** Every entry a request resolves from, by key, proxy-defaults first. */
function entriesOf(req: ServiceConfigRequest): Map<string, ConfigEntryRequest> {
  const out = new Map<string, ConfigEntryRequest>();
  for (const r of [GLOBAL, serviceDefaults(req.name), ...req.upstreams.map(serviceDefaults)]) out.set(keyOf(r), r);
  return out;
}

/** Config entry values read ahead of a registration ({@link ServiceManager.fetch}), for {@link ServiceManager.track}. */
export type CentralConfigValues = ReadonlyMap<string, ConfigEntry | null>;

interface Tracked {
  readonly registered: LocalService;
  readonly request: ServiceConfigRequest;
  readonly keys: readonly string[];
  /** The last config resolved for this ID (Consul's previousDefaults while an entry is not in yet). */
  resolved: ResolvedServiceConfig | undefined;
  /** JSON of the Proxy block last handed out, to announce only changes. */
  lastProxy: string;
}

interface Watched {
  readonly request: ConfigEntryRequest;
  readonly users: Set<string>;
  value: { readonly entry: ConfigEntry | null } | undefined;
  cancel: Cancel;
}

export interface ServiceManagerDeps extends CentralConfigSource {
  readonly logger: Logger;
  /**
   * A tracked service's merged form changed because a config entry did (never called from track or
   * untrack). The agent replaces the live service's Proxy block with `merged.Proxy`.
   */
  onUpdate(serviceId: string, merged: LocalService): void;
}

/**
 * Follows the central config of the agent's proxies and gateways (one per agent). Single-threaded like
 * the rest of the agent: every method runs to completion; cache updates arrive as callbacks.
 */
export class ServiceManager {
  private readonly services = new Map<string, Tracked>();
  private readonly entries = new Map<string, Watched>();
  private closed = false;

  constructor(private readonly deps: ServiceManagerDeps) {}

  /**
   * AddService: (re)starts following the central config of `service` (its registration as given) and
   * returns it merged. With every entry known (from the watches, else from `seed`) the merge uses them;
   * an upstream whose entry is not in yet gets no defaults until it is. Without proxy-defaults or the
   * service's own defaults known yet, the config last resolved for this ID is used (Consul's
   * previousDefaults), else none: the service is returned as registered and merged once they arrive (the
   * `waitForCentralConfig: false` path of Consul's config-file and restored services). A service of any
   * other kind is not followed (and stops being, if it was) and comes back unchanged.
   */
  track(service: LocalService, seed?: CentralConfigValues): LocalService {
    const request = serviceConfigRequest(service);
    if (!request || this.closed) {
      this.untrack(service.ID);
      return service;
    }
    const prev = this.services.get(service.ID);
    const wanted = entriesOf(request);
    const t: Tracked = { registered: service, request, keys: [...wanted.keys()], resolved: prev?.resolved, lastProxy: "" };
    this.services.set(service.ID, t);
    // New users first, so an entry both registrations need keeps its watch and value.
    for (const [key, req] of wanted) this.use(key, req, service.ID, seed);
    for (const key of prev?.keys ?? []) if (!wanted.has(key)) this.release(key, service.ID);
    const merged = this.merge(t);
    t.lastProxy = JSON.stringify(merged.Proxy);
    return merged;
  }

  /** RemoveService: stops following `serviceId`; a watch no other service needs is cancelled. */
  untrack(serviceId: string): void {
    const t = this.services.get(serviceId);
    if (!t) return;
    this.services.delete(serviceId);
    for (const key of t.keys) this.release(key, serviceId);
  }

  /** The registration as given of a followed service (before central config), if it is followed. */
  registered(serviceId: string): LocalService | undefined {
    return this.services.get(serviceId)?.registered;
  }

  /**
   * fetchDefaults (`waitForCentralConfig: true`): reads every entry the given services' central config
   * resolves from through the cache, answering from it when it holds them. Rejects on the first read
   * that fails, with Consul's message naming the service (`could not retrieve initial service_defaults
   * config for service "<id>": <error>`); there is no timeout of its own, as in Consul (a server that
   * cannot be reached fails the read).
   */
  async fetch(services: readonly LocalService[]): Promise<CentralConfigValues> {
    const out = new Map<string, ConfigEntry | null>();
    for (const s of services) {
      const request = serviceConfigRequest(s);
      if (!request) continue;
      try {
        await Promise.all([...entriesOf(request)].map(async ([key, req]) => {
          if (out.has(key)) return;
          out.set(key, (await this.deps.cache.get(this.deps.configEntry, req)).value);
        }));
      } catch (err) {
        throw new Error(`could not retrieve initial service_defaults config for service ${JSON.stringify(s.ID)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return out;
  }

  /** Stops every watch; nothing is announced afterwards and later services are not followed. */
  close(): void {
    this.closed = true;
    for (const w of this.entries.values()) w.cancel();
    this.entries.clear();
    this.services.clear();
  }

  private use(key: string, request: ConfigEntryRequest, serviceId: string, seed: CentralConfigValues | undefined): void {
    const seeded = seed?.has(key) ? { entry: seed.get(key)! } : undefined;
    const held = this.entries.get(key);
    if (held) {
      held.value ??= seeded;
      held.users.add(serviceId);
      return;
    }
    const w: Watched = { request, users: new Set([serviceId]), value: seeded, cancel: () => {} };
    this.entries.set(key, w);
    w.cancel = this.deps.cache.watch(this.deps.configEntry, request, {
      onUpdate: (r) => this.onValue(key, w, r.value),
      // The cache retries with a back-off; services keep the config they have meanwhile.
      onError: (err) => this.deps.logger.warn("error watching service config", { kind: request.kind, name: request.name, error: err }),
    });
  }

  private release(key: string, serviceId: string): void {
    const w = this.entries.get(key);
    if (!w) return;
    w.users.delete(serviceId);
    if (w.users.size > 0) return;
    this.entries.delete(key);
    w.cancel();
  }

  private onValue(key: string, w: Watched, entry: ConfigEntry | null): void {
    if (this.closed || this.entries.get(key) !== w) return;
    w.value = { entry };
    for (const id of [...w.users].sort()) {
      const t = this.services.get(id);
      if (!t) continue;
      const merged = this.merge(t);
      const proxy = JSON.stringify(merged.Proxy);
      if (proxy === t.lastProxy) continue;
      t.lastProxy = proxy;
      this.deps.onUpdate(id, merged);
    }
  }

  /** The registration with the central config folded in (see {@link track}); records what it resolved. */
  private merge(t: Tracked): LocalService {
    const value = (r: ConfigEntryRequest) => this.entries.get(keyOf(r))?.value;
    const global = value(GLOBAL);
    const own = value(serviceDefaults(t.request.name));
    if (global && own) {
      const upstreams = new Map<string, ConfigEntry | null>();
      for (const name of t.request.upstreams) {
        const v = value(serviceDefaults(name));
        if (v) upstreams.set(name, v.entry);
      }
      t.resolved = resolveServiceConfig(global.entry, own.entry, upstreams);
    }
    return t.resolved ? { ...t.registered, Proxy: mergeServiceConfig(t.registered.Proxy, t.resolved) } : t.registered;
  }
}

/**
 * Keeps registrations that wait for central config in call order with the agent's other changes of the
 * same service (Consul holds the agent's state lock while it waits): a waiting registration is dropped
 * when the service was registered, replaced or removed after it was asked for, since that later change
 * would have come after it.
 */
export class RegistrationOrder {
  private seq = 0;
  private readonly pending = new Map<string, { latest: number; inflight: number }>();

  /** A registration of `ids` starts waiting; returns its ticket. */
  begin(ids: readonly string[]): { readonly ids: readonly string[]; readonly seq: number } {
    const seq = ++this.seq;
    for (const id of ids) {
      const p = this.pending.get(id) ?? { latest: 0, inflight: 0 };
      p.latest = seq;
      p.inflight++;
      this.pending.set(id, p);
    }
    return { ids, seq };
  }

  /** Something changed service `id` now: a registration of it still waiting is superseded. */
  touch(id: string): void {
    const p = this.pending.get(id);
    if (p) p.latest = ++this.seq;
  }

  /** The waiting is over; true when nothing superseded it (the registration may go ahead). */
  end(ticket: { readonly ids: readonly string[]; readonly seq: number }): boolean {
    let current = true;
    for (const id of ticket.ids) {
      const p = this.pending.get(id);
      if (!p) continue;
      if (p.latest !== ticket.seq) current = false;
      if (--p.inflight === 0) this.pending.delete(id);
    }
    return current;
  }
}
