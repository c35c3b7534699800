/**
 * The agent's local services and checks with their sync status (Consul's agent/local.State): what the
 * agent believes should be in the catalog, whether each entry is in sync, and entries deleted locally
 * that still have to be removed from the catalog. Anti-entropy (sync.ts, anti_entropy.ts) reads and
 * settles these flags; everything else goes through the methods here.
 *
 * Single-threaded: every method runs to completion, so no locking. Versions guard against a change
 * that lands while a sync RPC is in flight (the entry then stays out of sync).
 */
import type { HealthCheck, HealthStatus, NodeService, Unindexed } from "../model/index.ts";
import type { Cancel, Clock, Rng } from "../platform/index.ts";
import { sameCheck, sameService } from "./same.ts";
import type { NodeInfo } from "./types.ts";

export type LocalService = Unindexed<NodeService>;
export type LocalCheck = Unindexed<HealthCheck>;

/** A service record and its sync status. `service` is undefined for a catalog-only entry marked for removal. */
export interface ServiceEntry {
  service: LocalService | undefined;
  inSync: boolean;
  deleted: boolean;
  version: number;
  /** The parent service ID when registered from its `sidecar_service` block. */
  sidecarOf: string | undefined;
  /** The ACL token it was registered with ("": the agent's default token), used to sync it (Consul's serviceToken). */
  token: string;
}

/** A check record and its sync status. */
export interface CheckEntry {
  check: LocalCheck | undefined;
  inSync: boolean;
  deleted: boolean;
  version: number;
  /** Monotonic ms when the check last turned critical; undefined when not critical. */
  criticalSince: number | undefined;
  /** Pending deferred sync of an output-only change (Consul's DeferCheck). */
  deferTimer: Cancel | undefined;
  /** The ACL token it was registered with ("": the agent's default token), used to sync it (Consul's checkToken). */
  token: string;
}

export interface LocalStateOptions {
  readonly nodeName: string;
  readonly datacenter: string;
  readonly node: NodeInfo;
  readonly clock: Clock;
  readonly rng: Rng;
  /** Output-only changes are synced at most this often (Consul's check_update_interval, default 5m); 0 syncs every change. */
  readonly checkUpdateIntervalMs?: number;
  /** Drop check output entirely (Consul's discard_check_output). */
  readonly discardCheckOutput?: boolean;
}

export const DEFAULT_CHECK_UPDATE_INTERVAL_MS = 5 * 60_000;

export class LocalState {
  readonly nodeName: string;
  readonly datacenter: string;
  /** The live tables, for anti-entropy only. */
  readonly serviceEntries = new Map<string, ServiceEntry>();
  readonly checkEntries = new Map<string, CheckEntry>();
  nodeInfoInSync = false;
  /** Called whenever something needs syncing; the anti-entropy syncer installs its trigger here. */
  onSyncNeeded: () => void = () => {};

  private node: NodeInfo;
  private readonly clock: Clock;
  private readonly rng: Rng;
  private readonly checkUpdateIntervalMs: number;
  private readonly discardOutput: boolean;
  private readonly listeners = new Set<() => void>();
  private changes = 0;

  constructor(opts: LocalStateOptions) {
    this.nodeName = opts.nodeName;
    this.datacenter = opts.datacenter;
    this.node = opts.node;
    this.clock = opts.clock;
    this.rng = opts.rng;
    this.checkUpdateIntervalMs = opts.checkUpdateIntervalMs ?? DEFAULT_CHECK_UPDATE_INTERVAL_MS;
    this.discardOutput = opts.discardCheckOutput ?? false;
  }

  /** Bumps on every visible change; a blocking query compares it with the value it started from. */
  get changeIndex(): number {
    return this.changes;
  }

  /** Calls `fn` (synchronously, after the change) on every visible change. Returns the unsubscribe. */
  onChange(fn: () => void): Cancel {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** Marks a change visible to readers; `sync` also asks anti-entropy to push it. */
  changed(sync: boolean): void {
    this.changes++;
    if (sync) this.onSyncNeeded();
    for (const fn of [...this.listeners]) fn();
  }

  nodeInfo(): NodeInfo {
    return this.node;
  }

  /** Replaces node-level facts; a difference marks node info out of sync. */
  setNodeInfo(info: Partial<NodeInfo>): void {
    const next = { ...this.node, ...info };
    if (JSON.stringify(next) === JSON.stringify(this.node)) return;
    this.node = next;
    this.nodeInfoInSync = false;
    this.changed(true);
  }

  /**
   * Adds or replaces a service, registered with `token` (undefined: keep the one it had, else ""). Re-adding
   * an identical, in-sync service keeps it in sync; a new token alone changes nothing in the catalog.
   */
  addService(service: LocalService, sidecarOf?: string, token?: string): void {
    const old = this.serviceEntries.get(service.ID);
    const same = !!old && !old.deleted && !!old.service && old.inSync && sameService(old.service, service);
    this.serviceEntries.set(service.ID, { service, inSync: same, deleted: false, version: (old?.version ?? 0) + 1, sidecarOf, token: token ?? (old && !old.deleted ? old.token : "") });
    this.changed(!same);
  }

  /** Marks a service deleted (anti-entropy removes it from the catalog). False if unknown. */
  removeService(id: string): boolean {
    const e = this.serviceEntries.get(id);
    if (!e || e.deleted) return false;
    Object.assign(e, { inSync: false, deleted: true, version: e.version + 1 });
    this.changed(true);
    return true;
  }

  /** The token a service was registered with ("" for the default token; also for a deleted one, which is deregistered with it). */
  serviceToken(id: string): string {
    return this.serviceEntries.get(id)?.token ?? "";
  }

  /** The token a check was registered with ("" for the default token). */
  checkToken(id: string): string {
    return this.checkEntries.get(id)?.token ?? "";
  }

  service(id: string): LocalService | undefined {
    const e = this.serviceEntries.get(id);
    return e && !e.deleted ? e.service : undefined;
  }

  /** The parent service ID of a sidecar registered through `sidecar_service`, if `id` is one. */
  sidecarParent(id: string): string | undefined {
    const e = this.serviceEntries.get(id);
    return e && !e.deleted ? e.sidecarOf : undefined;
  }

  /** Live services, sorted by ID. */
  services(): LocalService[] {
    return [...this.serviceEntries.values()].filter((e) => !e.deleted && e.service).map((e) => e.service!)
      .sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
  }

  /**
   * Adds or replaces a check (Node is forced to this node). Throws if its ServiceID is not a live local
   * service. A check added as critical counts as critical from now (for DeregisterCriticalServiceAfter).
   */
  addCheck(input: LocalCheck, token?: string): void {
    if (input.ServiceID !== "" && !this.service(input.ServiceID)) {
      throw new Error(`Check ${JSON.stringify(input.CheckID)} refers to non-existent service ${JSON.stringify(input.ServiceID)}`);
    }
    const check: LocalCheck = { ...input, Node: this.nodeName, Output: this.discardOutput ? "" : input.Output };
    const old = this.checkEntries.get(check.CheckID);
    old?.deferTimer?.();
    const same = !!old && !old.deleted && !!old.check && old.inSync && sameCheck(old.check, check);
    const wasCritical = old && !old.deleted ? old.criticalSince : undefined;
    this.checkEntries.set(check.CheckID, {
      check,
      inSync: same,
      deleted: false,
      version: (old?.version ?? 0) + 1,
      criticalSince: check.Status === "critical" ? (wasCritical ?? this.clock.monotonic()) : undefined,
      deferTimer: undefined,
      token: token ?? (old && !old.deleted ? old.token : ""),
    });
    this.changed(!same);
  }

  /** Marks a check deleted. False if unknown. */
  removeCheck(id: string): boolean {
    const e = this.checkEntries.get(id);
    if (!e || e.deleted) return false;
    e.deferTimer?.();
    Object.assign(e, { inSync: false, deleted: true, version: e.version + 1, deferTimer: undefined, criticalSince: undefined });
    this.changed(true);
    return true;
  }

  check(id: string): LocalCheck | undefined {
    const e = this.checkEntries.get(id);
    return e && !e.deleted ? e.check : undefined;
  }

  /** Live checks, sorted by ID. */
  checks(): LocalCheck[] {
    return [...this.checkEntries.values()].filter((e) => !e.deleted && e.check).map((e) => e.check!)
      .sort((a, b) => (a.CheckID < b.CheckID ? -1 : a.CheckID > b.CheckID ? 1 : 0));
  }

  /** How long (ms) a live check has been critical, or undefined if it is not critical. */
  criticalForMs(id: string): number | undefined {
    const e = this.checkEntries.get(id);
    if (!e || e.deleted || e.criticalSince === undefined) return undefined;
    return this.clock.monotonic() - e.criticalSince;
  }

  /**
   * Sets a check's status and output (Consul's State.UpdateCheck). A no-op for unknown checks and for
   * identical updates. When only the output changes and check_update_interval > 0, the new output is
   * kept locally and synced once after interval/2 + random(interval), unless a status change comes first.
   */
  updateCheck(id: string, status: HealthStatus, output: string): void {
    const e = this.checkEntries.get(id);
    if (!e || e.deleted || !e.check) return;
    if (this.discardOutput) output = "";
    if (status === "critical") e.criticalSince ??= this.clock.monotonic();
    else e.criticalSince = undefined;
    if (e.check.Status === status && e.check.Output === output) return;
    if (this.checkUpdateIntervalMs > 0 && e.check.Status === status) {
      e.check = { ...e.check, Output: output };
      if (!e.deferTimer) {
        const d = this.checkUpdateIntervalMs;
        e.deferTimer = this.clock.setTimer(d / 2 + this.rng.next() * d, () => {
          const cur = this.checkEntries.get(id);
          if (cur !== e) return;
          e.deferTimer = undefined;
          if (e.deleted) return;
          e.inSync = false;
          e.version++;
          this.onSyncNeeded();
        });
      }
      this.changed(false);
      return;
    }
    e.check = { ...e.check, Status: status, Output: output };
    e.inSync = false;
    e.version++;
    this.changed(true);
  }

  /** Replaces a service's tags with the catalog's (EnableTagOverride during a full sync). */
  overrideTags(id: string, tags: readonly string[] | null): void {
    const e = this.serviceEntries.get(id);
    if (!e?.service) return;
    e.service = { ...e.service, Tags: tags ? [...tags] : [] };
    this.changed(false);
  }

  /** Cancels pending timers (deferred output syncs). */
  close(): void {
    for (const e of this.checkEntries.values()) {
      e.deferTimer?.();
      e.deferTimer = undefined;
    }
  }
}
