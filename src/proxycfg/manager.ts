/**
 * The proxycfg manager (Consul 1.8 agent/proxycfg/manager.go): one sidecar state machine per local
 * service of Kind connect-proxy (registered directly or as a `sidecar_service`), fed by agent cache
 * watches, publishing each new valid snapshot. It follows the local agent's services: a new proxy
 * starts a machine, a changed registration is handed to its machine (which adjusts its watches), a
 * deregistered proxy has its watches cancelled and is removed from the publisher.
 *
 * Publication is coalesced as Consul's (`coalesceTimeout`, 200 ms): a proxy's first valid snapshot is
 * published at once, later changes at most once per window, the newest one.
 */
import type { AgentCache, AgentService } from "../agent/index.ts";
import type { ExposePath } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import { watchInCache, type SidecarCacheTypes } from "./cache_watch.ts";
import { SidecarState, type SidecarContext, type SidecarEvent, type SidecarRegistration } from "./sidecar_state.ts";
import type { SidecarSnapshot } from "./snapshot.ts";
import type { WatchCommand } from "./watches.ts";

/** Consul's proxycfg coalesceTimeout. */
export const COALESCE_MS = 200;

/** The local agent as the manager follows it (src/agent's LocalAgent fits). */
export interface LocalServices {
  agentServices(): Record<string, AgentService>;
  /**
   * The paths of the destination's checks a proxy with `Proxy.Expose.Checks` exposes (the agent chose
   * their listener ports and runs the checks through them); absent or [] when none. Changes must be
   * announced through onChange.
   */
  exposedCheckPaths?(proxyId: string): readonly ExposePath[];
  onChange(fn: () => void): Cancel;
}

export interface ProxyManagerDeps {
  readonly context: SidecarContext & { readonly nodeName: string };
  readonly cache: AgentCache;
  readonly types: SidecarCacheTypes;
  readonly services: LocalServices;
  readonly clock: Clock;
  readonly logger: Logger;
  /** A proxy's new valid snapshot. Must not throw (a throw is logged). */
  publish(proxyId: string, snapshot: SidecarSnapshot): void;
  /** The proxy was deregistered (or stopped being a sidecar). */
  remove(proxyId: string): void;
  /** Coalescing window; default {@link COALESCE_MS}. */
  readonly coalesceMs?: number;
}

export interface ProxyManager {
  /** Whether `proxyId` is a registered local connect proxy (its snapshot may not be ready yet). */
  has(proxyId: string): boolean;
  /** The IDs of the managed proxies, sorted. */
  proxies(): string[];
  /** The proxy's current valid snapshot, if any. */
  snapshot(proxyId: string): SidecarSnapshot | undefined;
  /** Re-reads the agent's services now (the manager also does on every agent change). */
  sync(): void;
  /** Cancels every watch and timer; nothing is published afterwards. */
  close(): void;
}

/**
 * The registration of a connect-proxy agent service, or undefined for any other service; `exposedCheckPaths`
 * are the agent's paths for its destination's checks (Consul reads them from the agent at generation time).
 */
export function sidecarRegistration(s: AgentService, exposedCheckPaths: readonly ExposePath[] = []): SidecarRegistration | undefined {
  if (s.Kind !== "connect-proxy" || !s.Proxy || !s.Proxy.DestinationServiceName) return undefined;
  return {
    ProxyID: s.ID,
    Service: s.Service,
    Address: s.Address,
    Port: s.Port,
    Meta: s.Meta,
    TaggedAddresses: s.TaggedAddresses ?? {},
    Proxy: s.Proxy,
    ...(exposedCheckPaths.length ? { ExposedCheckPaths: exposedCheckPaths } : {}),
  };
}

interface Managed {
  readonly machine: SidecarState;
  readonly watches: Map<string, Cancel>;
  published: SidecarSnapshot | undefined;
  timer: Cancel | undefined;
  lastPublish: number;
}

/** Starts the manager: reads the agent's services at once and on every change. */
export function createProxyManager(d: ProxyManagerDeps): ProxyManager {
  const log = d.logger;
  const coalesceMs = d.coalesceMs ?? COALESCE_MS;
  const proxies = new Map<string, Managed>();
  let closed = false;

  const run = (id: string, m: Managed, cmds: readonly WatchCommand[]) => {
    for (const c of cmds) {
      if (c.op === "cancel") {
        m.watches.get(c.watchId)?.();
        m.watches.delete(c.watchId);
        continue;
      }
      log.trace("proxycfg: watching", { proxy: id, watch: c.watchId });
      const cancel = watchInCache(d.cache, d.types, d.context, c.watchId, c.request,
        (u) => event(id, m, u),
        (err) => log.debug("proxycfg: watch failed; the cache retries", { proxy: id, watch: c.watchId, error: err }));
      m.watches.set(c.watchId, cancel);
    }
  };

  const publishNow = (id: string, m: Managed) => {
    m.timer = undefined;
    const snap = m.machine.snapshot();
    if (!snap || snap === m.published || proxies.get(id) !== m) return;
    m.published = snap;
    m.lastPublish = d.clock.monotonic();
    try {
      d.publish(id, snap);
    } catch (err) {
      log.error("proxycfg: publishing a snapshot failed", { proxy: id, error: err });
    }
  };

  const schedule = (id: string, m: Managed) => {
    if (m.timer || closed) return;
    const snap = m.machine.snapshot();
    if (!snap || snap === m.published) return;
    const wait = m.published ? Math.max(0, m.lastPublish + coalesceMs - d.clock.monotonic()) : 0;
    if (wait === 0) publishNow(id, m);
    else m.timer = d.clock.setTimer(wait, () => publishNow(id, m));
  };

  const event = (id: string, m: Managed, ev: SidecarEvent) => {
    if (closed || proxies.get(id) !== m) return;
    run(id, m, m.machine.handle(ev));
    schedule(id, m);
  };

  const stop = (id: string, m: Managed) => {
    m.timer?.();
    m.timer = undefined;
    run(id, m, m.machine.close());
    for (const c of m.watches.values()) c();
    m.watches.clear();
    proxies.delete(id);
  };

  const sync = () => {
    if (closed) return;
    const wanted = new Map<string, SidecarRegistration>();
    for (const s of Object.values(d.services.agentServices())) {
      const reg = sidecarRegistration(s, d.services.exposedCheckPaths?.(s.ID));
      if (reg) wanted.set(s.ID, reg);
    }
    for (const [id, m] of [...proxies]) {
      if (wanted.has(id)) continue;
      log.debug("proxycfg: proxy deregistered", { proxy: id });
      stop(id, m);
      try {
        d.remove(id);
      } catch (err) {
        log.error("proxycfg: removing a proxy failed", { proxy: id, error: err });
      }
    }
    for (const [id, reg] of [...wanted].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const m = proxies.get(id);
      if (m) {
        event(id, m, { kind: "registration", registration: reg });
        continue;
      }
      log.debug("proxycfg: managing proxy", { proxy: id, destination: reg.Proxy.DestinationServiceName });
      const fresh: Managed = { machine: new SidecarState(d.context, reg), watches: new Map(), published: undefined, timer: undefined, lastPublish: 0 };
      proxies.set(id, fresh);
      run(id, fresh, fresh.machine.start());
    }
  };

  const unsubscribe = d.services.onChange(sync);
  sync();

  return {
    has: (id) => proxies.has(id),
    proxies: () => [...proxies.keys()].sort(),
    snapshot: (id) => proxies.get(id)?.machine.snapshot(),
    sync,
    close() {
      if (closed) return;
      unsubscribe();
      for (const [id, m] of [...proxies]) stop(id, m);
      closed = true;
    },
  };
}
