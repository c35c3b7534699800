/**
 * The proxycfg manager (Consul 1.8 agent/proxycfg/manager.go): one state machine per local service of
 * Kind connect-proxy (registered directly or as a `sidecar_service`; ./sidecar_state.ts) or mesh-gateway
 * (./mesh_gateway_state.ts), fed by agent cache watches, publishing each new valid snapshot. It follows
 * the local agent's services: a new proxy starts a machine, a changed registration is handed to its
 * machine (which adjusts its watches), a deregistered proxy has its watches cancelled and is removed from
 * the publisher. A service that changes kind under the same ID gets a new machine.
 *
 * Publication is coalesced as Consul's (`coalesceTimeout`, 200 ms): a proxy's first valid snapshot is
 * published at once, later changes at most once per window, the newest one.
 */
import type { AgentCache, AgentService } from "../agent/index.ts";
import type { ExposePath } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import { watchInCache, watchMeshGatewayInCache, type MeshGatewayCacheTypes, type SidecarCacheTypes } from "./cache_watch.ts";
import type { MeshGatewaySnapshot } from "./mesh_gateway_snapshot.ts";
import { MeshGatewayState } from "./mesh_gateway_state.ts";
import type { MeshGatewayCommand, MeshGatewayRegistration } from "./mesh_gateway_watches.ts";
import type { Command } from "./reconcile.ts";
import { SidecarState, type SidecarContext, type SidecarRegistration } from "./sidecar_state.ts";
import type { SidecarSnapshot } from "./snapshot.ts";
import type { WatchCommand } from "./watches.ts";

/** A snapshot of any kind of proxy the manager runs. */
export type ProxySnapshot = SidecarSnapshot | MeshGatewaySnapshot;

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
  /** The ACL token a service was registered with ("" or absent: the agent's default); a proxy's watches read with it. */
  serviceToken?(serviceId: string): string;
  onChange(fn: () => void): Cancel;
}

export interface ProxyManagerDeps {
  /** `domain`: the agent's DNS domain (server names of WAN-federation gateways); default "consul". */
  readonly context: SidecarContext & { readonly nodeName: string; readonly domain?: string };
  readonly cache: AgentCache;
  readonly types: SidecarCacheTypes & MeshGatewayCacheTypes;
  readonly services: LocalServices;
  readonly clock: Clock;
  readonly logger: Logger;
  /** A proxy's new valid snapshot. Must not throw (a throw is logged). */
  publish(proxyId: string, snapshot: ProxySnapshot): void;
  /** The proxy was deregistered (or stopped being a sidecar). */
  remove(proxyId: string): void;
  /** Coalescing window; default {@link COALESCE_MS}. */
  readonly coalesceMs?: number;
}

export interface ProxyManager {
  /** Whether `proxyId` is a registered local connect proxy or mesh gateway (its snapshot may not be ready yet). */
  has(proxyId: string): boolean;
  /** The IDs of the managed proxies, sorted. */
  proxies(): string[];
  /** The proxy's current valid snapshot, if any. */
  snapshot(proxyId: string): ProxySnapshot | undefined;
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
  return { ...proxyServiceFields(s), Proxy: s.Proxy, ...(exposedCheckPaths.length ? { ExposedCheckPaths: exposedCheckPaths } : {}) };
}

/** The fields every proxy kind's registration takes from its agent service as they are. */
function proxyServiceFields(s: AgentService) {
  return { ProxyID: s.ID, Service: s.Service, Address: s.Address, Port: s.Port, Meta: s.Meta, TaggedAddresses: s.TaggedAddresses ?? {} };
}

/** The registration of a mesh-gateway agent service, or undefined for any other service. */
export function meshGatewayRegistration(s: AgentService): MeshGatewayRegistration | undefined {
  if (s.Kind !== "mesh-gateway") return undefined;
  return { ...proxyServiceFields(s), Proxy: s.Proxy ?? { MeshGateway: {}, Expose: {} } };
}

/** A command of a machine with its watch bound to the cache: `open` starts it, delivering each change. */
type BoundCommand =
  | { readonly op: "cancel"; readonly watchId: string }
  | { readonly op: "watch"; readonly watchId: string; open(apply: Apply, onError: (err: unknown) => void): Cancel };

type Apply = (step: () => readonly BoundCommand[]) => void;

/** A machine's commands with each watch bound through `open` (which starts the cache watch). */
function bindCommands<R>(
  cmds: readonly Command<R>[],
  open: (c: { readonly watchId: string; readonly request: R }, apply: Apply, onError: (err: unknown) => void) => Cancel,
): BoundCommand[] {
  return cmds.map((c) => (c.op === "cancel" ? c : { op: "watch", watchId: c.watchId, open: (apply: Apply, onError: (err: unknown) => void) => open(c, apply, onError) }));
}

/** A registration the manager wants running, whatever its kind. */
type Wanted =
  | { readonly kind: "connect-proxy"; readonly registration: SidecarRegistration }
  | { readonly kind: "mesh-gateway"; readonly registration: MeshGatewayRegistration };

/** One proxy's machine as the manager drives it, whatever its kind. */
interface Driver {
  readonly kind: Wanted["kind"];
  start(): readonly BoundCommand[];
  /** A changed registration of the same kind. */
  register(w: Wanted): readonly BoundCommand[];
  close(): readonly BoundCommand[];
  snapshot(): ProxySnapshot | undefined;
}

interface Managed {
  readonly driver: Driver;
  /** The token its watches read with; a new one restarts the proxy (as Consul's proxycfg does). */
  readonly token: string;
  readonly watches: Map<string, Cancel>;
  published: ProxySnapshot | undefined;
  timer: Cancel | undefined;
  lastPublish: number;
}

/** Starts the manager: reads the agent's services at once and on every change. */
export function createProxyManager(d: ProxyManagerDeps): ProxyManager {
  const log = d.logger;
  const coalesceMs = d.coalesceMs ?? COALESCE_MS;
  const proxies = new Map<string, Managed>();
  let closed = false;

  const sidecarDriver = (reg: SidecarRegistration, token: string): Driver => {
    const machine = new SidecarState(d.context, reg);
    const bind = (cmds: readonly WatchCommand[]): BoundCommand[] =>
      bindCommands(cmds, (c, apply, onError) => watchInCache(d.cache, d.types, d.context, c.watchId, c.request, (u) => apply(() => bind(machine.handle(u))), onError, token));
    return {
      kind: "connect-proxy",
      start: () => bind(machine.start()),
      register: (w) => (w.kind === "connect-proxy" ? bind(machine.handle({ kind: "registration", registration: w.registration })) : []),
      close: () => bind(machine.close()),
      snapshot: () => machine.snapshot(),
    };
  };

  const gatewayDriver = (reg: MeshGatewayRegistration, token: string): Driver => {
    const machine = new MeshGatewayState({ datacenter: d.context.datacenter, ...(d.context.domain !== undefined ? { domain: d.context.domain } : {}) }, reg);
    const bind = (cmds: readonly MeshGatewayCommand[]): BoundCommand[] =>
      bindCommands(cmds, (c, apply, onError) => watchMeshGatewayInCache(d.cache, d.types, c.watchId, c.request, (u) => apply(() => bind(machine.handle(u))), onError, token));
    return {
      kind: "mesh-gateway",
      start: () => bind(machine.start()),
      register: (w) => (w.kind === "mesh-gateway" ? bind(machine.handle({ kind: "registration", registration: w.registration })) : []),
      close: () => bind(machine.close()),
      snapshot: () => machine.snapshot(),
    };
  };

  const run = (id: string, m: Managed, cmds: readonly BoundCommand[]) => {
    for (const c of cmds) {
      if (c.op === "cancel") {
        m.watches.get(c.watchId)?.();
        m.watches.delete(c.watchId);
        continue;
      }
      log.trace("proxycfg: watching", { proxy: id, watch: c.watchId });
      const cancel = c.open(
        (step) => {
          if (closed || proxies.get(id) !== m) return;
          run(id, m, step());
          schedule(id, m);
        },
        (err) => log.debug("proxycfg: watch failed; the cache retries", { proxy: id, watch: c.watchId, error: err }),
      );
      m.watches.set(c.watchId, cancel);
    }
  };

  const publishNow = (id: string, m: Managed) => {
    m.timer = undefined;
    const snap = m.driver.snapshot();
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
    const snap = m.driver.snapshot();
    if (!snap || snap === m.published) return;
    const wait = m.published ? Math.max(0, m.lastPublish + coalesceMs - d.clock.monotonic()) : 0;
    if (wait === 0) publishNow(id, m);
    else m.timer = d.clock.setTimer(wait, () => publishNow(id, m));
  };

  const stop = (id: string, m: Managed) => {
    m.timer?.();
    m.timer = undefined;
    run(id, m, m.driver.close());
    for (const c of m.watches.values()) c();
    m.watches.clear();
    proxies.delete(id);
  };

  const wantedOf = (s: AgentService): Wanted | undefined => {
    const sidecar = sidecarRegistration(s, d.services.exposedCheckPaths?.(s.ID));
    if (sidecar) return { kind: "connect-proxy", registration: sidecar };
    const gateway = meshGatewayRegistration(s);
    return gateway ? { kind: "mesh-gateway", registration: gateway } : undefined;
  };

  const sync = () => {
    if (closed) return;
    const wanted = new Map<string, Wanted>();
    for (const s of Object.values(d.services.agentServices())) {
      const w = wantedOf(s);
      if (w) wanted.set(s.ID, w);
    }
    const tokenOf = (id: string) => d.services.serviceToken?.(id) ?? "";
    for (const [id, m] of [...proxies]) {
      if (wanted.get(id)?.kind === m.driver.kind && tokenOf(id) === m.token) continue;
      log.debug(!wanted.has(id) ? "proxycfg: proxy deregistered" : wanted.get(id)?.kind !== m.driver.kind ? "proxycfg: proxy changed kind; restarting it" : "proxycfg: proxy's token changed; restarting it", { proxy: id });
      stop(id, m);
      try {
        d.remove(id);
      } catch (err) {
        log.error("proxycfg: removing a proxy failed", { proxy: id, error: err });
      }
    }
    for (const [id, w] of [...wanted].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const m = proxies.get(id);
      if (m) {
        run(id, m, m.driver.register(w));
        schedule(id, m);
        continue;
      }
      log.debug("proxycfg: managing proxy", { proxy: id, kind: w.kind, ...(w.kind === "connect-proxy" ? { destination: w.registration.Proxy.DestinationServiceName } : {}) });
      const token = tokenOf(id);
      const driver = w.kind === "connect-proxy" ? sidecarDriver(w.registration, token) : gatewayDriver(w.registration, token);
      const fresh: Managed = { driver, token, watches: new Map(), published: undefined, timer: undefined, lastPublish: 0 };
      proxies.set(id, fresh);
      run(id, fresh, driver.start());
    }
  };

  const unsubscribe = d.services.onChange(sync);
  sync();

  return {
    has: (id) => proxies.has(id),
    proxies: () => [...proxies.keys()].sort(),
    snapshot: (id) => proxies.get(id)?.driver.snapshot(),
    sync,
    close() {
      if (closed) return;
      unsubscribe();
      for (const [id, m] of [...proxies]) stop(id, m);
      closed = true;
    },
  };
}
