/**
 * Alias checks (Consul 1.8 agent/checks CheckAlias): mirror the worst status among a node's checks and
 * one service's checks. Without AliasNode the local state is watched (every local change re-evaluates);
 * with AliasNode the catalog is, through blocking reads of the node's checks (Health.NodeChecks).
 */
import type { HealthStatus } from "../model/index.ts";
import type { Cancel, Clock } from "../platform/index.ts";
import type { LocalState } from "./local_state.ts";
import type { NodeChecksWatch } from "./ports.ts";
import { errorText, type CheckNotify, type CheckRunner } from "./runners.ts";

/** Consul's checkAliasBackoffMin: failures before the remote watch starts backing off. */
const BACKOFF_MIN = 3;
/** Consul's checkAliasBackoffMaxWait. */
const BACKOFF_MAX_MS = 60_000;
/** The remote watch's MaxQueryTime. */
export const ALIAS_QUERY_WAIT_MS = 60_000;
/**
 * Causeway's pause before asking again when an answer's index did not move past the last one (a wait
 * that ran out, or a catalog that went back): keeps a misbehaving catalog from driving a hot loop.
 */
export const ALIAS_IDLE_RETRY_MS = 1_000;

interface CheckLike {
  readonly Node: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: HealthStatus;
  readonly Output: string;
  readonly ServiceID: string;
}

/**
 * Consul's CheckAlias.processChecks: the node's own checks and the aliased service's checks count (a
 * "" service ID means node checks only); the first critical one wins, else the last warning, else
 * "All checks passing." ("No checks found." when none count). `node` "" means the local state (every
 * check is this node's; `self`, the alias check, is left out).
 */
export function aliasHealth(checks: readonly CheckLike[], self: string, node: string, serviceId: string): { status: HealthStatus; output: string } {
  let status: HealthStatus = "passing";
  let output = "No checks found.";
  for (const c of checks) {
    // Locally the alias never counts itself; the catalog's view is taken as it is, as Consul does.
    if (node === "" && c.CheckID === self) continue;
    if (node !== "" && c.Node !== node) continue;
    if (c.ServiceID !== "" && c.ServiceID !== serviceId) continue;
    if (c.Status === "critical" || c.Status === "warning") {
      status = c.Status;
      output = `Aliased check ${JSON.stringify(c.Name)} failing: ${c.Output}`;
      if (c.Status === "critical") break;
    } else if (status === "passing") {
      output = "All checks passing.";
    }
  }
  return { status, output };
}

/**
 * A local alias check (the default check of a sidecar_service, or AliasService without AliasNode):
 * re-evaluated on every local change. Critical when the aliased service is not registered here.
 */
export function startLocalAliasCheck(o: { checkId: string; serviceId: string; state: LocalState; notify: CheckNotify }): CheckRunner {
  let stopped = false;
  const evaluate = () => {
    if (stopped) return;
    let { status, output } = aliasHealth(o.state.checks(), o.checkId, "", o.serviceId);
    if (o.serviceId !== "" && !o.state.service(o.serviceId)) {
      status = "critical";
      output = `Service ${o.serviceId} could not be found on node ${o.state.nodeName}`;
    }
    o.notify(o.checkId, status, output);
  };
  const unsubscribe = o.state.onChange(evaluate);
  evaluate();
  return {
    stop() {
      stopped = true;
      unsubscribe();
    },
  };
}

/**
 * A remote alias check (AliasNode set): blocking reads of the node's checks, each from the index of
 * the last answer (at least 1, so it always blocks). A failed read after the first is reported critical
 * "Failure checking aliased node or service: <error>"; past 3 failures in a row the next read waits
 * 2^(n-3) s, at most a minute. An answer whose index did not advance is followed by a pause of
 * ALIAS_IDLE_RETRY_MS before the next read. A read in flight when stopped is abandoned.
 */
export function startRemoteAliasCheck(o: {
  checkId: string; node: string; serviceId: string; watch: NodeChecksWatch; clock: Clock; notify: CheckNotify;
}): CheckRunner {
  let stopped = false;
  let timer: Cancel | undefined;
  let minIndex = 0;
  let attempt = 0;
  const next = (idle: boolean) => {
    if (stopped) return;
    const waitMs = attempt > BACKOFF_MIN ? Math.min(2 ** Math.min(attempt - BACKOFF_MIN, 31) * 1000, BACKOFF_MAX_MS) : idle ? ALIAS_IDLE_RETRY_MS : 0;
    if (waitMs > 0) timer = o.clock.setTimer(waitMs, () => void query());
    else void query();
  };
  const query = async () => {
    timer = undefined;
    if (stopped) return;
    let idle = false;
    try {
      const out = await o.watch(o.node, minIndex, ALIAS_QUERY_WAIT_MS);
      if (stopped) return;
      attempt = 0;
      idle = out.index <= minIndex;
      minIndex = Math.max(out.index, 1);
      const { status, output } = aliasHealth(out.checks, o.checkId, o.node, o.serviceId);
      o.notify(o.checkId, status, output);
    } catch (err) {
      if (stopped) return;
      attempt++;
      if (attempt > 1) o.notify(o.checkId, "critical", `Failure checking aliased node or service: ${errorText(err)}`);
    }
    next(idle);
  };
  void query();
  return {
    stop() {
      stopped = true;
      timer?.();
    },
  };
}
