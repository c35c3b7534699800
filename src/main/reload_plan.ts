/**
 * What `causeway reload` (PUT /v1/agent/reload, SIGHUP) changes in a running agent, as a pure plan from the
 * running configuration and the one just read again (Consul's reloadConfigInternal):
 * - the service and check definitions of the config files: removed ones deregistered; every one in the
 *   files registered again, as Consul's reload does (so one removed or overwritten through the API since
 *   comes back), each check keeping its status; a changed service loses the embedded checks its new
 *   definition no longer has, and nothing else (checks added through the API, or by a check definition
 *   naming it, and its maintenance check stay);
 * - `log_level`;
 * - the agent's ACL tokens from `acl.tokens` (tokens set through the API and persisted still win).
 * Every other setting takes effect only at the next start: the plan names those that changed, so the
 * agent can say so instead of silently ignoring them.
 */
import { serviceCheckIds, type CheckRegistration, type ServiceRegistration } from "../agent/index.ts";
import type { AclTokens } from "./acl_config.ts";
import type { RuntimeConfig } from "./config.ts";

export interface Definition<R> {
  readonly id: string;
  readonly reg: R;
  readonly token: string;
}

export interface ReloadPlan {
  /** IDs of config-file services to deregister (their checks and sidecars go with them). */
  readonly removeServices: readonly string[];
  /** Every service definition of the files, to register again. */
  readonly registerServices: readonly Definition<ServiceRegistration>[];
  /** IDs of the embedded checks a still-defined service's new definition dropped. */
  readonly removeServiceChecks: readonly string[];
  readonly removeChecks: readonly string[];
  /** Every check definition of the files, to register again keeping its status. */
  readonly registerChecks: readonly Definition<CheckRegistration>[];
  /** How many of the registered definitions are new or changed (for the log). */
  readonly changed: { readonly services: number; readonly checks: number };
  /** The new log level, when it changed. */
  readonly logLevel?: string;
  /** The new configured ACL tokens, when they changed. */
  readonly tokens?: AclTokens;
  /** Settings (config paths, e.g. `ports.http`, `datacenter`) that changed but apply only at the next start. */
  readonly restartNeeded: readonly string[];
}

const serviceId = (reg: ServiceRegistration) => reg.ID || reg.Name;
const checkId = (reg: CheckRegistration) => reg.CheckID || reg.Name;

function definitionsOf<R>(regs: readonly R[], tokens: readonly string[] | undefined, idOf: (r: R) => string): Map<string, Definition<R>> {
  return new Map(regs.map((reg, i) => [idOf(reg), { id: idOf(reg), reg, token: tokens?.[i] ?? "" }]));
}

/** Removed IDs (in `before`'s order), every definition of `after` (in its order), and how many of them are new or changed. */
function diff<R>(before: Map<string, Definition<R>>, after: Map<string, Definition<R>>): { remove: string[]; register: Definition<R>[]; changed: number } {
  const same = (a: Definition<R>, b: Definition<R>) => a.token === b.token && JSON.stringify(a.reg) === JSON.stringify(b.reg);
  return {
    remove: [...before.keys()].filter((id) => !after.has(id)),
    register: [...after.values()],
    changed: [...after.values()].filter((d) => !before.has(d.id) || !same(before.get(d.id)!, d)).length,
  };
}

/** What reload applies of itself; everything else is compared for `restartNeeded`. */
const RELOADED: ReadonlySet<string> = new Set(["definitions", "logLevel", "acl.tokens"]);

/** `serfLan` as the config file spells it, `serf_lan`. */
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Config paths (one level into objects) whose values differ, reloaded ones left out. */
function changedSettings(before: RuntimeConfig, after: RuntimeConfig): string[] {
  const out: string[] = [];
  const record = before as unknown as Record<string, unknown>;
  const next = after as unknown as Record<string, unknown>;
  for (const key of new Set([...Object.keys(record), ...Object.keys(next)])) {
    if (RELOADED.has(key)) continue;
    const a = record[key], b = next[key];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    const nested = a !== null && b !== null && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b);
    if (!nested) {
      out.push(snake(key));
      continue;
    }
    const ao = a as Record<string, unknown>, bo = b as Record<string, unknown>;
    for (const sub of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
      if (RELOADED.has(`${key}.${sub}`) || JSON.stringify(ao[sub]) === JSON.stringify(bo[sub])) continue;
      out.push(`${snake(key)}.${snake(sub)}`);
    }
  }
  return out.sort();
}

export function planReload(running: RuntimeConfig, next: RuntimeConfig): ReloadPlan {
  const before = definitionsOf(running.definitions.services, running.definitions.serviceTokens, serviceId);
  const services = diff(before, definitionsOf(next.definitions.services, next.definitions.serviceTokens, serviceId));
  const removeServiceChecks = services.register.flatMap((d) => {
    const old = before.get(d.id);
    if (!old) return [];
    const kept = new Set(serviceCheckIds(d.reg));
    return serviceCheckIds(old.reg).filter((id) => !kept.has(id));
  });
  const checks = diff(
    definitionsOf(running.definitions.checks, running.definitions.checkTokens, checkId),
    definitionsOf(next.definitions.checks, next.definitions.checkTokens, checkId),
  );
  return {
    removeServices: services.remove,
    registerServices: services.register,
    removeServiceChecks,
    removeChecks: checks.remove,
    registerChecks: checks.register,
    changed: { services: services.changed, checks: checks.changed },
    ...(next.logLevel !== running.logLevel ? { logLevel: next.logLevel } : {}),
    ...(JSON.stringify(next.acl.tokens) !== JSON.stringify(running.acl.tokens) ? { tokens: next.acl.tokens } : {}),
    // acl.tokens.master seeds the global-management token when a leader first takes office: a reload
    // cannot apply it (Consul's reload does not either).
    restartNeeded: [...changedSettings(running, next), ...(next.acl.tokens.master !== running.acl.tokens.master ? ["acl.tokens.master"] : [])].sort(),
  };
}

/**
 * The configuration the agent runs after a reload: `next`'s reloaded parts over `running`'s others, with
 * the definitions of `failed` services and checks (their IDs) as they were, so that the next reload tries
 * them again.
 */
export function runningAfterReload(running: RuntimeConfig, next: RuntimeConfig, failed: { services: ReadonlySet<string>; checks: ReadonlySet<string> }): RuntimeConfig {
  const pick = <R>(
    before: readonly R[], beforeTokens: readonly string[] | undefined, after: readonly R[], afterTokens: readonly string[] | undefined, idOf: (r: R) => string, bad: ReadonlySet<string>,
  ) => {
    const old = definitionsOf(before, beforeTokens, idOf);
    const kept: Definition<R>[] = [];
    for (const d of definitionsOf(after, afterTokens, idOf).values()) {
      if (!bad.has(d.id)) kept.push(d);
      else if (old.has(d.id)) kept.push(old.get(d.id)!);
    }
    return { regs: kept.map((d) => d.reg), tokens: kept.map((d) => d.token) };
  };
  const d0 = running.definitions, d1 = next.definitions;
  const services = pick(d0.services, d0.serviceTokens, d1.services, d1.serviceTokens, serviceId, failed.services);
  const checks = pick(d0.checks, d0.checkTokens, d1.checks, d1.checkTokens, checkId, failed.checks);
  return {
    ...running,
    logLevel: next.logLevel,
    acl: { ...running.acl, tokens: { ...next.acl.tokens, master: running.acl.tokens.master } }, // master is not reloaded (see planReload)
    definitions: { services: services.regs, checks: checks.regs, serviceTokens: services.tokens, checkTokens: checks.tokens },
  };
}
