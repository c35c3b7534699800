/**
 * What `causeway reload` (PUT /v1/agent/reload, SIGHUP) changes in a running agent, as a pure plan from the
 * running configuration and the one just read again (Consul's reloadConfigInternal):
 * - the service and check definitions of the config files: removed ones deregistered, new and changed
 *   ones registered again (a changed service replaces its checks; unchanged definitions are not touched,
 *   so their checks keep their status);
 * - `log_level`;
 * - the agent's ACL tokens from `acl.tokens` (tokens set through the API and persisted still win).
 * Every other setting takes effect only at the next start: the plan names those that changed, so the
 * agent can say so instead of silently ignoring them.
 */
import type { CheckRegistration, ServiceRegistration } from "../agent/index.ts";
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
  readonly registerServices: readonly Definition<ServiceRegistration>[];
  readonly removeChecks: readonly string[];
  readonly registerChecks: readonly Definition<CheckRegistration>[];
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

/** Removed IDs (in `before`'s order) and new or changed definitions (in `after`'s order). */
function diff<R>(before: Map<string, Definition<R>>, after: Map<string, Definition<R>>): { remove: string[]; register: Definition<R>[] } {
  const same = (a: Definition<R>, b: Definition<R>) => a.token === b.token && JSON.stringify(a.reg) === JSON.stringify(b.reg);
  return {
    remove: [...before.keys()].filter((id) => !after.has(id)),
    register: [...after.values()].filter((d) => !before.has(d.id) || !same(before.get(d.id)!, d)),
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
  const services = diff(
    definitionsOf(running.definitions.services, running.definitions.serviceTokens, serviceId),
    definitionsOf(next.definitions.services, next.definitions.serviceTokens, serviceId),
  );
  const checks = diff(
    definitionsOf(running.definitions.checks, running.definitions.checkTokens, checkId),
    definitionsOf(next.definitions.checks, next.definitions.checkTokens, checkId),
  );
  return {
    removeServices: services.remove,
    registerServices: services.register,
    removeChecks: checks.remove,
    registerChecks: checks.register,
    ...(next.logLevel !== running.logLevel ? { logLevel: next.logLevel } : {}),
    ...(JSON.stringify(next.acl.tokens) !== JSON.stringify(running.acl.tokens) ? { tokens: next.acl.tokens } : {}),
    restartNeeded: changedSettings(running, next),
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
    acl: { ...running.acl, tokens: next.acl.tokens },
    definitions: { services: services.regs, checks: checks.regs, serviceTokens: services.tokens, checkTokens: checks.tokens },
  };
}
