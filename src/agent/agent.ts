/**
 * The local agent (Consul's Agent.AddService/AddCheck/RemoveService/..., minus ACLs and persistence):
 * registered services and checks, their runners, the critical-service reaper and anti-entropy to the
 * catalog, behind one object that the HTTP routes and src/main call.
 */
import type { ExposePath, HealthStatus } from "../model/index.ts";
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";
import { createAntiEntropy, type AntiEntropy } from "./anti_entropy.ts";
import { CheckRuntime } from "./check_runtime.ts";
import { DEFAULT_SIDECAR_PORTS, embeddedCheckId, expandSidecar, healthCheckOf, sidecarId, toNodeService } from "./convert.ts";
import { badRequest, notFound } from "./errors.ts";
import { CheckRoutes } from "./exposed_checks.ts";
import { LocalState, type LocalCheck, type LocalService } from "./local_state.ts";
import { maintenance, type Maintenance, type MaintenanceRecord } from "./maintenance.ts";
import { CHECK_BUF_SIZE } from "./output.ts";
import type { CatalogPort, Probes } from "./ports.ts";
import { RegistrationOrder, ServiceManager, type CentralConfigSource, type CentralConfigValues } from "./service_manager.ts";
import type { AgentCheck, AgentService, CheckRegistration, CheckType, NodeInfo, ServiceRegistration } from "./types.ts";
import { toAgentCheck, toAgentService, toAgentServiceWithHash } from "./views.ts";

export interface LocalAgentOptions {
  readonly nodeName: string;
  readonly datacenter: string;
  /** Node ID, advertise address, tagged addresses and node meta, as synced to the catalog. */
  readonly node: NodeInfo;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  readonly probes: Probes;
  /** Keeps API registrations across restarts; absent (as in -dev): nothing is kept. */
  readonly persistence?: AgentPersistence;
  readonly catalog: CatalogPort;
  /** Consul's check_update_interval (default 5 minutes; 0 syncs every output change). */
  readonly checkUpdateIntervalMs?: number;
  /** Consul's discard_check_output. */
  readonly discardCheckOutput?: boolean;
  /** Consul's check_output_max_size (default 4096 bytes). */
  readonly checkOutputMaxSize?: number;
  /** Full anti-entropy period before stagger (default 1 minute). */
  readonly aeIntervalMs?: number;
  /** LAN pool size, which stretches anti-entropy periods beyond 128 nodes. */
  readonly clusterSize?: () => number;
  /** First anti-entropy retry delay after a failure (default 15 s). */
  readonly aeRetryFailMs?: number;
  /** How often critical services are reaped (Consul's check_reap_interval, default 30 s). */
  readonly checkReapIntervalMs?: number;
  /** Shortest DeregisterCriticalServiceAfter honoured (Consul's check_deregister_interval_min, default 1 minute). */
  readonly checkDeregisterIntervalMinMs?: number;
  /** Port range for sidecar_service ports (default 21000-21255). */
  readonly sidecarPorts?: { readonly min: number; readonly max: number };
  /** Listener ports for exposed checks (Consul's ports.expose_min_port / expose_max_port, default 21500-21755). */
  readonly exposePorts?: { readonly min: number; readonly max: number };
  /** Consul's enable_script_checks: script (and Docker) checks may be registered from any source. Default off. */
  readonly enableScriptChecks?: boolean;
  /** Consul's enable_local_script_checks: script (and Docker) checks only from config files. Default off. */
  readonly enableLocalScriptChecks?: boolean;
  /**
   * Centralized service configuration (service_manager.ts): proxies and mesh gateways are registered with
   * proxy-defaults and service-defaults folded in, followed through this cache. Absent: registered as given
   * (an agent without servers to ask).
   */
  readonly centralConfig?: CentralConfigSource;
}

export interface RegisterServiceOptions {
  /** `?replace-existing-checks`: drop the service's checks that this registration does not list. */
  readonly replaceExistingChecks?: boolean;
  /**
   * Where the definition comes from (Consul's configSource): "api" registrations are persisted and come
   * back on restart; "config" ones come from the config files, which are read again anyway. Default "api".
   */
  readonly source?: "api" | "config";
  /**
   * The ACL token of the registration (the request's, or a definition's `token`): anti-entropy syncs the
   * service, its sidecar and its checks with it, and a proxy's xDS watches read with it. Default "" (the
   * agent's default token).
   */
  readonly token?: string;
}

/**
 * Where the agent keeps what was registered through its API across restarts (Consul's `services/`,
 * `checks/` and `checks/state/` in the data dir). Each call replaces or removes one record; failures are
 * the implementation's to report (a registration does not fail because its file could not be written).
 */
export interface AgentPersistence {
  /** `token`: the registration's ACL token ("" none), persisted with it as Consul does. */
  saveService(id: string, reg: ServiceRegistration, token: string): void;
  removeService(id: string): void;
  saveCheck(id: string, reg: CheckRegistration, token: string): void;
  removeCheck(id: string): void;
  /** A TTL check's status, kept until `expiresAtMs` (wall clock) like Consul's persisted check state. */
  saveCheckState(id: string, state: PersistedCheckState): void;
  /** A node or service maintenance mode, under its check ID (leaving maintenance is `removeCheck`). */
  saveMaintenance(checkId: string, record: MaintenanceRecord): void;
}

export interface PersistedCheckState {
  readonly status: HealthStatus;
  readonly output: string;
  readonly expiresAtMs: number;
}

/** What a previous run persisted, to register again at start. */
export interface PersistedAgentState {
  readonly services: readonly ServiceRegistration[];
  readonly checks: readonly CheckRegistration[];
  readonly checkStates: ReadonlyMap<string, PersistedCheckState>;
  /** Maintenance modes that were on; absent means none. */
  readonly maintenance?: readonly MaintenanceRecord[];
  /** The registration tokens persisted with services and checks, by service ID and check ID; absent means none. */
  readonly tokens?: { readonly services: ReadonlyMap<string, string>; readonly checks: ReadonlyMap<string, string> };
}

export interface LocalAgent extends Maintenance {
  /** The local state, for read access and change notification. */
  readonly state: LocalState;
  readonly antiEntropy: AntiEntropy;
  /** Starts anti-entropy (first full sync now) and the reaper. Checks run from registration on. */
  start(): void;
  /** Stops runners, timers and anti-entropy. */
  stop(): void;
  /**
   * Registers (or replaces) a service with its checks and sidecar. Returns warnings (values raised to minimums). Throws AgentError
   * before writing anything when a check may not run here (scripts disabled for its source, no Docker socket, a missing port).
   */
  registerService(reg: ServiceRegistration, opts?: RegisterServiceOptions): string[];
  /**
   * registerService as Consul's HTTP API registers (`waitForCentralConfig: true`): a connect proxy or mesh
   * gateway (or the sidecar of `reg`) is registered only once the config entries of its central config are
   * read, merged with them. Rejects, registering nothing, with a refusal of registerService or with "could not
   * retrieve initial service_defaults config for service "<id>": <error>" when an entry cannot be read (the
   * servers cannot be reached). A registration superseded while it waited (the service registered again or
   * removed meanwhile) is dropped and resolves with no warnings. Without centralConfig, registerService.
   */
  registerServiceWithCentralConfig(reg: ServiceRegistration, opts?: RegisterServiceOptions): Promise<string[]>;
  /** Deregisters a service, its checks and its sidecar_service proxy. Throws AgentError("not-found"). */
  deregisterService(serviceId: string): void;
  /**
   * Registers (or replaces) a check. Throws AgentError("bad-request"), writing nothing, when it may not run here (Consul's
   * "Scripts are disabled on this agent..." texts by source, no Docker socket, a missing port) or its ServiceID is unknown.
   */
  registerCheck(reg: CheckRegistration, opts?: Pick<RegisterServiceOptions, "source" | "token"> & { readonly keepStatus?: boolean }): string[];
  /**
   * Registers what a previous run persisted (after the config files' definitions): services and checks
   * as "api" registrations, then each TTL check's status where its saved state has not expired (Consul's
   * loadServices, loadChecks, loadCheckState). Returns warnings, one per record that could not be loaded.
   */
  restore(saved: PersistedAgentState): string[];
  /** Deregisters a check. Throws AgentError("not-found"). */
  deregisterCheck(checkId: string): void;
  /**
   * Sets a TTL check's status (`/v1/agent/check/pass|warn|fail/:id?note=`, `/v1/agent/check/update/:id`);
   * output is truncated to 4 KiB. Throws AgentError: not-found for an unknown check, bad-request for a non-TTL check or bad status.
   */
  updateTTL(checkId: string, status: string, output: string): void;
  /** Live services and checks, sorted by ID. */
  services(): LocalService[];
  service(id: string): LocalService | undefined;
  /** The ACL token a live service was registered with ("": the agent's default token). */
  serviceToken(id: string): string;
  checks(): LocalCheck[];
  check(id: string): LocalCheck | undefined;
  /** `GET /v1/agent/services` body. */
  agentServices(): Record<string, AgentService>;
  /** `GET /v1/agent/service/:id` body (with ContentHash), or undefined. */
  agentService(id: string): AgentService | undefined;
  /** `GET /v1/agent/checks` body. */
  agentChecks(): Record<string, AgentCheck>;
  /**
   * The exposed check paths of a local connect proxy with `Proxy.Expose.Checks` (one per HTTP or gRPC
   * check of its destination service, sorted by check ID); [] for any other service. Changes are announced through onChange.
   */
  exposedCheckPaths(proxyId: string): ExposePath[];
  /** Calls fn after every visible change (blocking agent queries). Returns the unsubscribe. */
  onChange(fn: () => void): Cancel;
  /** Updates node-level facts (address, tagged addresses, node meta, node ID); a difference is synced to the catalog. */
  setNodeInfo(info: Partial<NodeInfo>): void;
  /** Pushes pending changes now and resolves when done (never rejects), as Consul's endpoints do after a write. */
  syncChanges(): Promise<void>;
}

/** Creates the agent. Nothing runs until the first registration or start(). */
export function createLocalAgent(o: LocalAgentOptions): LocalAgent {
  const logger = o.logger;
  const state = new LocalState({
    nodeName: o.nodeName, datacenter: o.datacenter, node: o.node, clock: o.clock, rng: o.rng,
    ...(o.checkUpdateIntervalMs !== undefined ? { checkUpdateIntervalMs: o.checkUpdateIntervalMs } : {}),
    ...(o.discardCheckOutput !== undefined ? { discardCheckOutput: o.discardCheckOutput } : {}),
  });
  const runtime = new CheckRuntime({
    state, clock: o.clock, rng: o.rng, probes: o.probes, logger,
    outputMaxSize: o.checkOutputMaxSize ?? CHECK_BUF_SIZE,
    deregisterMinMs: o.checkDeregisterIntervalMinMs ?? 60_000,
    ...(o.enableScriptChecks !== undefined ? { enableScriptChecks: o.enableScriptChecks } : {}),
    ...(o.enableLocalScriptChecks !== undefined ? { enableLocalScriptChecks: o.enableLocalScriptChecks } : {}),
  });
  /** Refuses (before anything is written) a check this agent may not run, with Consul's text where it has one. */
  const admit = (types: readonly CheckType[], source: "api" | "config") => {
    for (const t of types) {
      const why = runtime.refusal(t, source);
      if (why) throw badRequest(why);
    }
  };
  const antiEntropy = createAntiEntropy({
    state, catalog: o.catalog, clock: o.clock, rng: o.rng, logger: logger.named("anti_entropy"),
    ...(o.aeIntervalMs !== undefined ? { intervalMs: o.aeIntervalMs } : {}),
    ...(o.clusterSize ? { clusterSize: o.clusterSize } : {}),
    ...(o.aeRetryFailMs !== undefined ? { retryFailMs: o.aeRetryFailMs } : {}),
  });
  let reaper: Cancel | undefined;
  const routes = new CheckRoutes(o.exposePorts, (msg) => logger.warn(`error exposing check: ${msg}`));
  const order = new RegistrationOrder();
  const central = o.centralConfig
    ? new ServiceManager({ ...o.centralConfig, logger: logger.named("service_manager"), onUpdate: (id, merged) => applyCentralConfig(id, merged) })
    : undefined;

  /** Starts a check's runner; an HTTP or gRPC check of a service whose proxy exposes its checks runs through the proxy. */
  const addCheck = (check: LocalCheck, type: CheckType, token?: string): string[] => {
    runtime.stop(check.CheckID);
    const run = routes.add(check.ServiceID, check.CheckID, type, state.services());
    state.addCheck(check, token);
    return runtime.start(check.CheckID, run);
  };

  /**
   * After services changed: restarts the runners of checks whose exposure changed (a proxy with
   * Expose.Checks registered, changed, turned it off, or went away) and announces the new paths.
   */
  const rerouteChecks = () => {
    const changed = routes.reroute(state.services());
    for (const { checkId, type } of changed) runtime.start(checkId, type);
    if (changed.length) state.changed(false);
  };

  const removeCheck = (checkId: string): boolean => {
    runtime.stop(checkId);
    routes.remove(checkId);
    const removed = state.removeCheck(checkId);
    if (removed) o.persistence?.removeCheck(checkId);
    return removed;
  };

  const removeService = (serviceId: string): boolean => {
    order.touch(serviceId);
    central?.untrack(serviceId);
    if (!state.removeService(serviceId)) return false;
    o.persistence?.removeService(serviceId);
    for (const c of state.checks()) if (c.ServiceID === serviceId) removeCheck(c.CheckID);
    const sidecar = sidecarId(serviceId);
    if (state.sidecarParent(sidecar) === serviceId) removeService(sidecar);
    return true;
  };

  /** Adds a service and its checks; check statuses of a re-registered service carry over (Consul's snapshot restore). */
  const addService = (service: LocalService, types: readonly CheckType[], replace: boolean, token: string, sidecarOf?: string, seed?: CentralConfigValues): string[] => {
    order.touch(service.ID);
    const previous = new Map(state.checks().filter((c) => c.ServiceID === service.ID).map((c) => [c.CheckID, c]));
    const checks = types.map((t, i) => {
      const id = embeddedCheckId(service.ID, t, i, types.length);
      const prev = previous.get(id);
      const type = { ...t, Name: t.Name || `Service '${service.Service}' check` };
      return { check: healthCheckOf(o.nodeName, id, type, service, prev?.Status, prev?.Output ?? ""), type };
    });
    // The local state holds the service merged with its central config (Consul 1.8's addServiceInternal gets the merged NodeService).
    state.addService(central ? central.track(service, seed) : service, sidecarOf, token);
    const warnings = checks.flatMap(({ check, type }) => addCheck(check, type, token));
    if (replace) {
      const keep = new Set(checks.map((c) => c.check.CheckID));
      for (const id of previous.keys()) if (!keep.has(id)) removeCheck(id);
    }
    return warnings;
  };

  /**
   * A followed service's central config changed (serviceConfigWatch.handleUpdate): its Proxy block is
   * replaced by the newly merged one, the rest (tags as anti-entropy may have overridden them) kept; then
   * exposed checks follow (an Expose.Checks from proxy-defaults or service-defaults turning on or off).
   */
  const applyCentralConfig = (id: string, merged: LocalService) => {
    const live = state.service(id);
    if (!live) return;
    state.addService({ ...live, Proxy: merged.Proxy }, state.sidecarParent(id));
    rerouteChecks();
  };

  /** The service a registration stands for and its expanded `sidecar_service`. Throws AgentError("bad-request") when no sidecar port is left. */
  const expand = (reg: ServiceRegistration) => {
    const service = toNodeService(reg);
    const def = reg.Connect?.SidecarService;
    return { service, sidecar: def ? expandSidecar(service, def, state.services(), o.sidecarPorts ?? DEFAULT_SIDECAR_PORTS) : undefined };
  };

  /** registerService, with central config values read ahead (`seed`) when the caller waited for them. */
  const register = (reg: ServiceRegistration, opts: RegisterServiceOptions, seed?: CentralConfigValues): string[] => {
    const { service, sidecar } = expand(reg);
    const replace = opts.replaceExistingChecks ?? false;
    admit([...reg.Checks, ...(sidecar?.checks ?? [])], opts.source ?? "api");
    const token = opts.token ?? "";
    const warnings = addService(service, reg.Checks, replace, token, undefined, seed);
    // As in Consul, a sidecar left out of a re-registration stays until its parent is deregistered.
    if (sidecar) warnings.push(...addService(sidecar.service, sidecar.checks, replace, token, service.ID, seed));
    rerouteChecks();
    // The registration as given (its sidecar with it) is what comes back on restart.
    if ((opts.source ?? "api") === "api") o.persistence?.saveService(service.ID, reg, token);
    return warnings;
  };

  const agent: LocalAgent = {
    state,
    antiEntropy,
    start() {
      antiEntropy.start();
      reaper ??= o.clock.setInterval(o.checkReapIntervalMs ?? 30_000, () => {
        for (const { serviceId, checkId } of runtime.servicesToReap()) {
          if (removeService(serviceId)) {
            logger.info("check for service has been critical for too long; deregistered service", { check: checkId, service: serviceId });
          }
        }
        rerouteChecks();
      });
    },
    stop() {
      reaper?.();
      reaper = undefined;
      central?.close();
      runtime.stopAll();
      antiEntropy.stop();
      state.close();
    },
    registerService: (reg, opts = {}) => register(reg, opts),
    async registerServiceWithCentralConfig(reg, opts = {}) {
      if (!central) return register(reg, opts);
      // A sidecar that cannot be expanded is refused before waiting; register() expands it again afterwards.
      const { service, sidecar } = expand(reg);
      const services = sidecar ? [service, sidecar.service] : [service];
      const ticket = order.begin(services.map((s) => s.ID));
      let seed: CentralConfigValues;
      try {
        seed = await central.fetch(services);
      } catch (err) {
        order.end(ticket);
        throw err;
      }
      // Superseded while waiting: a later change of the same service was already applied.
      return order.end(ticket) ? register(reg, opts, seed) : [];
    },
    deregisterService(serviceId) {
      if (!removeService(serviceId)) {
        throw notFound(`Unknown service ID ${JSON.stringify(serviceId)}. Ensure that the service ID is passed, not the service name.`);
      }
      rerouteChecks();
    },
    registerCheck(reg, opts = {}) {
      const service = reg.ServiceID ? state.service(reg.ServiceID) : undefined;
      admit([reg], opts.source ?? "api");
      if (reg.ServiceID && !service) throw badRequest(`ServiceID ${JSON.stringify(reg.ServiceID)} does not exist`);
      const id = reg.CheckID || reg.Name;
      // keepStatus (a reload): a check already here under this ID keeps its status and output, as Consul's
      // reload restores them from its snapshot of the check states.
      const prev = opts.keepStatus ? state.check(id) : undefined;
      const warnings = addCheck(healthCheckOf(o.nodeName, id, reg, service, prev?.Status, prev?.Output ?? ""), reg, opts.token ?? "");
      if ((opts.source ?? "api") === "api") o.persistence?.saveCheck(id, reg, opts.token ?? "");
      return warnings;
    },
    restore(saved) {
      const problems: string[] = [];
      const attempt = (what: string, f: () => unknown) => {
        try {
          f();
        } catch (err) {
          problems.push(`${what}: ${(err as Error).message}`);
        }
      };
      // A definition from the config files wins over a persisted API registration of the same ID, whose
      // copy is dropped (Consul's loadServices/loadChecks: "config is preferred over services persisted
      // from the API"); restore runs after the config's definitions are registered.
      for (const reg of saved.services) {
        const id = reg.ID || reg.Name;
        if (state.service(id)) {
          o.persistence?.removeService(id);
          continue;
        }
        attempt(`service ${JSON.stringify(id)}`, () => agent.registerService(reg, { token: saved.tokens?.services.get(id) ?? "" }));
      }
      for (const reg of saved.checks) {
        const id = reg.CheckID || reg.Name;
        if (state.check(id)) {
          o.persistence?.removeCheck(id);
          continue;
        }
        attempt(`check ${JSON.stringify(id)}`, () => agent.registerCheck(reg, { token: saved.tokens?.checks.get(id) ?? "" }));
      }
      for (const [id, s] of saved.checkStates) {
        if (s.expiresAtMs > o.clock.now()) runtime.ttl(id)?.setStatus(s.status, s.output);
      }
      for (const m of saved.maintenance ?? []) {
        if (m.serviceId === "") agent.enableNodeMaintenance(m.reason);
        else attempt(`maintenance of service ${JSON.stringify(m.serviceId)}`, () => agent.enableServiceMaintenance(m.serviceId, m.reason));
      }
      return problems;
    },
    deregisterCheck(checkId) {
      if (!removeCheck(checkId)) {
        throw notFound(`Unknown check ID ${JSON.stringify(checkId)}. Ensure that the check ID is passed, not the check name.`);
      }
    },
    updateTTL(checkId, status, output) {
      if (status !== "passing" && status !== "warning" && status !== "critical") throw badRequest(`Invalid check status: '${status}'`);
      if (!state.check(checkId)) {
        throw notFound(`Unknown check ID ${JSON.stringify(checkId)}. Ensure that the check ID is passed, not the check name.`);
      }
      const ttl = runtime.ttl(checkId);
      if (!ttl) throw badRequest(`CheckID ${JSON.stringify(checkId)} does not have associated TTL`);
      ttl.setStatus(status as HealthStatus, output);
      // Consul persists a TTL check's state until its TTL would have run out.
      o.persistence?.saveCheckState(checkId, { status: status as HealthStatus, output, expiresAtMs: o.clock.now() + ttl.ttlMs });
    },
    ...maintenance({ state, nodeName: o.nodeName, addCheck, removeCheck, persist: (id, m) => o.persistence?.saveMaintenance(id, m), logger }),
    services: () => state.services(),
    service: (id) => state.service(id),
    serviceToken: (id) => (state.service(id) ? state.serviceToken(id) : ""),
    checks: () => state.checks(),
    check: (id) => state.check(id),
    agentServices: () => Object.fromEntries(state.services().map((s) => [s.ID, toAgentService(s)])),
    agentService(id) {
      const s = state.service(id);
      return s ? toAgentServiceWithHash(s) : undefined;
    },
    agentChecks: () => Object.fromEntries(state.checks().map((c) => [c.CheckID, toAgentCheck(c)])),
    exposedCheckPaths: (proxyId) => routes.paths(state.service(proxyId)),
    onChange: (fn) => state.onChange(fn),
    setNodeInfo: (info) => state.setNodeInfo(info),
    syncChanges: () => antiEntropy.syncChanges(),
  };
  return agent;
}
