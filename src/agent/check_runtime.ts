/**
 * The running side of checks: one runner per check ID (TTL, HTTP, TCP, gRPC, Docker, script or alias),
 * what may run here (Consul's enable_script_checks / enable_local_script_checks, the ports present),
 * the reap deadlines of DeregisterCriticalServiceAfter, and Consul's minimums (interval >= 1 s,
 * deregister-after >= 1 min).
 */
import type { Clock, Logger, Rng } from "../platform/index.ts";
import { startLocalAliasCheck, startRemoteAliasCheck } from "./alias_check.ts";
import type { LocalState } from "./local_state.ts";
import type { Probes } from "./ports.ts";
import { startHttpCheck, startTcpCheck, startTtlCheck, type CheckRunner, type TtlRunner } from "./runners.ts";
import { startDockerCheck, startScriptCheck } from "./runners_exec.ts";
import { startGrpcCheck } from "./runners_grpc.ts";
import type { CheckType } from "./types.ts";
import { isAliasCheck, isDockerCheck, isScriptCheck } from "./validate.ts";

/** Consul's checks.MinInterval: shorter intervals are raised to it (with a warning). */
export const MIN_CHECK_INTERVAL_MS = 1_000;

export interface CheckRuntimeOptions {
  readonly state: LocalState;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly probes: Probes;
  readonly logger: Logger;
  /** Agent-wide cap on stored output (Consul's check_output_max_size, default 4 KiB). */
  readonly outputMaxSize: number;
  /** Shortest DeregisterCriticalServiceAfter honoured (Consul's check_deregister_interval_min, 1 minute). */
  readonly deregisterMinMs: number;
  /** Consul's enable_script_checks: script and Docker checks from any source. */
  readonly enableScriptChecks?: boolean;
  /** Consul's enable_local_script_checks: script and Docker checks from config files only. */
  readonly enableLocalScriptChecks?: boolean;
}

/** Consul's refusal of a script check from a config file (or any source) when scripts are off. */
export const SCRIPTS_DISABLED = "Scripts are disabled on this agent; to enable, configure 'enable_script_checks' or 'enable_local_script_checks' to true";
/** Consul's refusal of a script check registered through the API when only local ones are on. */
export const REMOTE_SCRIPTS_DISABLED = "Scripts are disabled on this agent from remote calls; to enable, configure 'enable_script_checks' to true";

export class CheckRuntime {
  private readonly runners = new Map<string, CheckRunner>();
  private readonly ttls = new Map<string, TtlRunner>();
  private readonly reapAfter = new Map<string, number>();

  constructor(private readonly o: CheckRuntimeOptions) {}

  /**
   * Why a validated check may not run on this agent, or undefined (Consul's Agent.addCheck refusals,
   * then Causeway's: a check kind whose port is missing, Docker without a Docker socket). `source` is
   * "config" for config files, "api" for the HTTP API and restored registrations.
   */
  refusal(c: CheckType, source: "api" | "config"): string | undefined {
    const { probes } = this.o;
    if (isScriptCheck(c)) {
      const remote = this.o.enableScriptChecks ?? false;
      if (source === "config" && !remote && !(this.o.enableLocalScriptChecks ?? false)) return SCRIPTS_DISABLED;
      if (source === "api" && !remote) return this.o.enableLocalScriptChecks ? REMOTE_SCRIPTS_DISABLED : SCRIPTS_DISABLED;
    }
    if (c.TTLMs > 0 || c.HTTP || c.TCP) return undefined;
    if (c.GRPC) return probes.grpc ? undefined : "gRPC checks cannot run on this agent: it has no gRPC prober";
    if (isDockerCheck(c)) {
      if (!probes.docker) return "Docker checks cannot run on this agent: it has no Docker Engine client";
      return probes.docker.unavailable();
    }
    if (isScriptCheck(c)) return probes.process ? undefined : "script checks cannot run on this agent: it cannot start processes";
    if (c.AliasNode && !probes.nodeChecks) return "alias checks of another node cannot run on this agent: it cannot read the catalog";
    return undefined;
  }

  /**
   * Starts the runner for a check already added to the state (replacing any previous runner of that
   * ID) and records its reap deadline. Returns warnings about values raised to Consul's minimums.
   */
  start(checkId: string, c: CheckType): string[] {
    this.stop(checkId);
    const warnings: string[] = [];
    const { state, clock, rng, probes } = this.o;
    const notify = (id: string, status: "passing" | "warning" | "critical", output: string) => state.updateCheck(id, status, output);
    const outputMaxSize = c.OutputMaxSize > 0 ? Math.min(c.OutputMaxSize, this.o.outputMaxSize) : this.o.outputMaxSize;
    let intervalMs = c.IntervalMs;
    if ((c.HTTP || c.TCP || c.GRPC || isScriptCheck(c)) && c.TTLMs <= 0 && intervalMs < MIN_CHECK_INTERVAL_MS) {
      warnings.push(`check ${JSON.stringify(checkId)} has interval below minimum of 1s`);
      intervalMs = MIN_CHECK_INTERVAL_MS;
    }
    const common = {
      checkId, intervalMs, timeoutMs: c.TimeoutMs, clock, rng, notify,
      successBeforePassing: c.SuccessBeforePassing, failuresBeforeCritical: c.FailuresBeforeCritical,
    };
    if (c.TTLMs > 0) {
      const ttl = startTtlCheck({ checkId, ttlMs: c.TTLMs, clock, notify, outputMaxSize });
      this.ttls.set(checkId, ttl);
      this.runners.set(checkId, ttl);
    } else if (c.HTTP) {
      this.runners.set(checkId, startHttpCheck({
        ...common, probe: probes.http, url: c.HTTP, method: c.Method, header: c.Header, body: c.Body,
        tlsSkipVerify: c.TLSSkipVerify, outputMaxSize,
      }));
    } else if (c.TCP) {
      this.runners.set(checkId, startTcpCheck({ ...common, probe: probes.tcp, addr: c.TCP }));
    } else if (c.GRPC && probes.grpc) {
      this.runners.set(checkId, startGrpcCheck({
        ...common, probe: probes.grpc, target: c.GRPC, useTls: c.GRPCUseTLS ?? false, tlsSkipVerify: c.TLSSkipVerify,
      }));
    } else if (isDockerCheck(c) && probes.docker) {
      this.runners.set(checkId, startDockerCheck({
        ...common, docker: probes.docker, containerId: c.DockerContainerID!, args: c.ScriptArgs!, outputMaxSize,
      }));
    } else if (isScriptCheck(c) && probes.process) {
      this.runners.set(checkId, startScriptCheck({ ...common, spawn: probes.process, args: c.ScriptArgs!, outputMaxSize }));
    } else if (c.AliasNode && probes.nodeChecks) {
      this.runners.set(checkId, startRemoteAliasCheck({
        checkId, node: c.AliasNode, serviceId: c.AliasService ?? "", watch: probes.nodeChecks, clock, notify,
      }));
    } else if (isAliasCheck(c)) {
      this.runners.set(checkId, startLocalAliasCheck({ checkId, serviceId: c.AliasService ?? "", state, notify }));
    }
    if (c.DeregisterCriticalServiceAfterMs > 0) {
      let after = c.DeregisterCriticalServiceAfterMs;
      if (after < this.o.deregisterMinMs) {
        warnings.push(`check ${JSON.stringify(checkId)} has deregister interval below minimum of ${this.o.deregisterMinMs / 60_000}m0s`);
        after = this.o.deregisterMinMs;
      }
      this.reapAfter.set(checkId, after);
    }
    for (const w of warnings) this.o.logger.warn(w);
    return warnings;
  }

  /** Stops a check's runner and forgets its reap deadline. */
  stop(checkId: string): void {
    this.runners.get(checkId)?.stop();
    this.runners.delete(checkId);
    this.ttls.delete(checkId);
    this.reapAfter.delete(checkId);
  }

  /** The TTL runner of a check, if it is a TTL check. */
  ttl(checkId: string): TtlRunner | undefined {
    return this.ttls.get(checkId);
  }

  /**
   * Consul's reapServicesInternal: the services with a check critical for longer than its
   * DeregisterCriticalServiceAfter, each listed once with the check that condemned it.
   */
  servicesToReap(): { serviceId: string; checkId: string }[] {
    const out: { serviceId: string; checkId: string }[] = [];
    const seen = new Set<string>();
    for (const [checkId, after] of [...this.reapAfter].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const check = this.o.state.check(checkId);
      if (!check || check.ServiceID === "" || seen.has(check.ServiceID)) continue;
      const critical = this.o.state.criticalForMs(checkId);
      if (critical !== undefined && critical > after) {
        seen.add(check.ServiceID);
        out.push({ serviceId: check.ServiceID, checkId });
      }
    }
    return out;
  }

  /** Stops every runner. */
  stopAll(): void {
    for (const id of [...this.runners.keys()]) this.stop(id);
    this.reapAfter.clear();
  }
}
