/**
 * The running agent's reload (PUT /v1/agent/reload, `causeway reload`, SIGHUP): reads the configuration
 * again and applies what reload_plan.ts says changes at run time. A configuration that does not read or
 * validate changes nothing and fails with its reason; definitions the local agent refuses fail the reload
 * after the others are applied, and are tried again at the next reload.
 */
import type { LocalAgent } from "../agent/index.ts";
import { parseLogLevel, type Logger, type LogLevelSetting } from "../platform/index.ts";
import type { AgentTokens } from "./agent_tokens.ts";
import type { RuntimeConfig } from "./config.ts";
import { planReload, runningAfterReload } from "./reload_plan.ts";

export interface AgentReloadParts {
  /** The configuration the agent started with. */
  readonly initial: RuntimeConfig;
  /** Reads and builds the configuration again, as at start; throws with the reason when it cannot. */
  readonly reread: () => RuntimeConfig;
  readonly localAgent: Pick<LocalAgent, "registerService" | "registerCheck" | "deregisterService" | "deregisterCheck"> | undefined;
  readonly agentTokens: Pick<AgentTokens, "reloadConfigured">;
  /** The root logger's level; absent: log_level changes need a restart. */
  readonly logLevel?: LogLevelSetting;
  readonly logger: Logger;
}

export function createAgentReload(p: AgentReloadParts): () => Promise<void> {
  let running = p.initial;
  let queue: Promise<void> = Promise.resolve();
  const reloadOnce = (): void => {
    p.logger.info("Reloading configuration...");
    let next: RuntimeConfig;
    try {
      next = p.reread();
    } catch (err) {
      throw new Error(`Failed to reload configs: ${(err as Error).message}`);
    }
    const plan = planReload(running, next);
    const failed = { services: new Set<string>(), checks: new Set<string>() };
    const problems: string[] = [];
    const agent = p.localAgent;
    if (agent) {
      const gone = (f: () => void) => {
        try {
          f();
        } catch {
          // Already gone (deregistered through the API, or with its service): nothing to undo.
        }
      };
      for (const id of plan.removeChecks) gone(() => agent.deregisterCheck(id));
      for (const id of plan.removeServices) gone(() => agent.deregisterService(id));
      // Registering again keeps the services' other checks (API ones, maintenance) and carries the
      // statuses of the embedded ones over; the embedded checks a new definition dropped go after.
      for (const d of plan.registerServices) {
        try {
          for (const warning of agent.registerService(d.reg, { source: "config", token: d.token })) p.logger.warn("service definition", { warning });
        } catch (err) {
          failed.services.add(d.id);
          problems.push(`service ${JSON.stringify(d.id)}: ${(err as Error).message}`);
        }
      }
      for (const id of plan.removeServiceChecks) gone(() => agent.deregisterCheck(id));
      for (const d of plan.registerChecks) {
        try {
          for (const warning of agent.registerCheck(d.reg, { source: "config", token: d.token, keepStatus: true })) p.logger.warn("check definition", { warning });
        } catch (err) {
          failed.checks.add(d.id);
          problems.push(`check ${JSON.stringify(d.id)}: ${(err as Error).message}`);
        }
      }
    }
    const level = plan.logLevel === undefined ? undefined : parseLogLevel(plan.logLevel);
    if (level && p.logLevel) p.logLevel.level = level;
    if (plan.tokens) p.agentTokens.reloadConfigured(plan.tokens);
    const restartNeeded = [...plan.restartNeeded, ...(level && !p.logLevel ? ["log_level"] : [])];
    if (restartNeeded.length) p.logger.warn("reload: these settings changed and apply only after a restart", { settings: restartNeeded.join(", ") });
    running = runningAfterReload(running, next, failed);
    p.logger.info("configuration reloaded", {
      services: plan.registerServices.length - failed.services.size, services_changed: plan.changed.services, services_removed: plan.removeServices.length,
      checks: plan.registerChecks.length - failed.checks.size, checks_changed: plan.changed.checks, checks_removed: plan.removeChecks.length,
    });
    if (problems.length) throw new Error(`Failed reloading services and checks: ${problems.join("; ")}`);
  };
  // One reload at a time (a SIGHUP and an API call together apply in turn).
  return () => {
    const done = queue.then(reloadOnce);
    queue = done.catch(() => {});
    return done;
  };
}
