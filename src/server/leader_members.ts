/**
 * Leader routine: gossip members in the catalog (Consul's leader reconcile loop). On gaining
 * leadership, whenever the LAN pool changes, and every minute (Consul's reconcile_interval) the
 * leader makes the catalog agree with the pool: the writes come from the pure decisions in
 * catalog_members.ts. Runs are serialised and coalesced: a run in progress is followed by at most one
 * more, with the latest member list.
 */
import type { SampleHandle } from "../telemetry/index.ts";
import type { PoolMember } from "../membership/index.ts";
import { SERF_CHECK_ID } from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import { catalogNode, catalogNodeServices, healthChecksInState, healthNodeChecks, WatchSet, type StateStore } from "../state/index.ts";
import { handlesMember, memberWrite, reapedNodes } from "./catalog_members.ts";
import type { DutyProposer, LeaderRoutine } from "./leader_routines.ts";

/** Consul's reconcile_interval: repairs anything a missed event left behind. */
export const MEMBER_RECONCILE_INTERVAL_MS = 60_000;

export interface MemberReconcileRoutine extends LeaderRoutine {
  /** The LAN pool's members now; reconciled at once while leader, remembered otherwise. Resolves when the run is done. */
  update(members: readonly PoolMember[]): Promise<void>;
}

export function memberReconcileRoutine(o: {
  clock: Clock;
  logger: Logger;
  store: StateStore;
  datacenter: string;
  nodeName: string;
  proposeDuty: DutyProposer;
  /** Resolves once everything committed before the call is applied here (Consul's barrier after an election). */
  barrier: () => Promise<void>;
  /** Consul's `leader.reconcile`: the time of one reconciliation pass (barrier included). */
  reconcileTime?: SampleHandle;
}): MemberReconcileRoutine {
  const log = o.logger;
  let active = false;
  let interval: Cancel | undefined;
  let latest: readonly PoolMember[] = [];
  let running: Promise<void> = Promise.resolve();
  let queued = false;

  const reconcileOnce = async (members: readonly PoolMember[]) => {
    const ws = new WatchSet();
    const opts = { datacenter: o.datacenter, selfName: o.nodeName };
    for (const m of members) {
      if (!active) return;
      if (!handlesMember(m, o.datacenter)) continue;
      const node = catalogNode(o.store, ws, m.name).value;
      const services = node ? Object.keys(catalogNodeServices(o.store, ws, m.name).value?.Services ?? {}) : [];
      const serf = node ? healthNodeChecks(o.store, ws, m.name).value.find((c) => c.CheckID === SERF_CHECK_ID) : undefined;
      const write = memberWrite(m, { node: node ?? undefined, serviceIds: services, serfStatus: serf?.Status }, opts);
      if (!write) continue;
      log.info(write.kind === "register" ? `member ${m.status}: updating the catalog` : "member gone: deregistering", { member: m.name });
      await o.proposeDuty(`reconciling member ${m.name}`, write.kind === "register" ? { type: "register", req: write.request } : { type: "deregister", req: write.request });
    }
    const serfNodes = [...new Set(healthChecksInState(o.store, ws, "any").value.filter((c) => c.CheckID === SERF_CHECK_ID).map((c) => c.Node))];
    for (const name of reapedNodes(serfNodes, members, o.nodeName)) {
      if (!active) return;
      log.info("member reaped: deregistering", { member: name });
      await o.proposeDuty(`deregistering reaped member ${name}`, { type: "deregister", req: { Datacenter: o.datacenter, Node: name } });
    }
  };

  const reconcile = (): Promise<void> => {
    if (!queued) {
      queued = true;
      running = running.then(async () => {
        queued = false;
        if (!active) return;
        // Decisions are made on the latest catalog: apply everything committed first.
        const startedAt = o.clock.monotonic();
        await o.barrier();
        await reconcileOnce(latest);
        o.reconcileTime?.observe(o.clock.monotonic() - startedAt);
      }).catch((err) => log.warn("member reconcile failed; will retry", { error: err }));
    }
    return running;
  };

  return {
    name: "catalog members",
    start() {
      active = true;
      interval = o.clock.setInterval(MEMBER_RECONCILE_INTERVAL_MS, () => void reconcile());
      void reconcile();
    },
    stop() {
      active = false;
      interval?.();
      interval = undefined;
    },
    update(members) {
      latest = members;
      return reconcile();
    },
  };
}
