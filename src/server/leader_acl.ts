/**
 * Leader routines for ACLs (Consul 1.8 agent/consul/leader.go initializeACLs and the token reaper):
 * - on gaining leadership in the primary datacenter, after a barrier: the built-in global-management
 *   policy is created, or rewritten when its rules are not this build's (keeping a renamed name and
 *   description); the anonymous token is created if missing; a configured `tokens.master` secret
 *   becomes a management token ("Master Token"), through the bootstrap command first (so it uses up
 *   `/v1/acl/bootstrap`) and as a plain token write when bootstrap is no longer allowed. A failed step
 *   is retried after INIT_RETRY_MS while leader.
 * - every REAP_INTERVAL_MS, tokens whose ExpirationTime has passed are deleted: local tokens in every
 *   datacenter, global ones in the primary only (secondaries get theirs through replication).
 */
import { policyHash, RESERVED_ID_PREFIX, tokenHash } from "../acl/index.ts";
import {
  ANONYMOUS_TOKEN_ACCESSOR_ID, ANONYMOUS_TOKEN_DESCRIPTION, ANONYMOUS_TOKEN_SECRET, GLOBAL_MANAGEMENT_POLICY_DESCRIPTION, GLOBAL_MANAGEMENT_POLICY_ID,
  GLOBAL_MANAGEMENT_POLICY_NAME, GLOBAL_MANAGEMENT_RULES,
} from "../model/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import { aclPolicyGet, aclTokenGetBySecret, aclTokenList, WatchSet, type StateCommand, type StateResult, type StateStore } from "../state/index.ts";
import type { LeaderRoutine } from "./leader_routines.ts";

export const INIT_RETRY_MS = 10_000;
export const REAP_INTERVAL_MS = 5_000;
/** Tokens deleted per reaping command (Consul's aclBatchDeleteSize is 4096). */
export const REAP_BATCH = 4096;

export interface AclLeaderOptions {
  readonly store: StateStore;
  readonly propose: (command: StateCommand) => Promise<StateResult>;
  /** Resolves once everything committed before the call is applied here. */
  readonly barrier: () => Promise<void>;
  readonly primary: boolean;
  /** `acl.tokens.master` ("" for none). */
  readonly masterToken: string;
  /** A fresh random UUID per call (for the master token's accessor). */
  readonly newUuid: () => string;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Called after a run that wrote something (a fresh cluster's policy, anonymous token or master token):
   * the agent then syncs at once, since a sync made just before with the master token was refused.
   */
  readonly onInitialized?: () => void;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** What initializeACLs still has to write, in order (each a command), given the state now. */
export function aclInitCommands(o: Pick<AclLeaderOptions, "store" | "primary" | "masterToken" | "newUuid">, nowMs: number): { what: string; command: StateCommand }[] {
  if (!o.primary) return [];
  const ws = new WatchSet();
  const out: { what: string; command: StateCommand }[] = [];
  const gm = aclPolicyGet(o.store, ws, GLOBAL_MANAGEMENT_POLICY_ID).value;
  if (!gm || gm.Rules !== GLOBAL_MANAGEMENT_RULES) {
    const p = { ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: gm?.Name ?? GLOBAL_MANAGEMENT_POLICY_NAME, Description: gm?.Description ?? GLOBAL_MANAGEMENT_POLICY_DESCRIPTION, Rules: GLOBAL_MANAGEMENT_RULES };
    out.push({ what: "creating the global-management policy", command: { type: "acl-policy", op: "set", policies: [{ ...p, Hash: policyHash(p) }] } });
  }
  if (!aclTokenGetBySecret(o.store, ws, ANONYMOUS_TOKEN_SECRET).value) {
    const t = { AccessorID: ANONYMOUS_TOKEN_ACCESSOR_ID, SecretID: ANONYMOUS_TOKEN_SECRET, Description: ANONYMOUS_TOKEN_DESCRIPTION, Local: false, CreateTime: iso(nowMs) };
    out.push({ what: "creating the anonymous token", command: { type: "acl-token", op: "set", tokens: [{ ...t, Hash: tokenHash(t) }], cas: true } });
  }
  if (o.masterToken && !aclTokenGetBySecret(o.store, ws, o.masterToken).value) {
    let accessor: string;
    do accessor = o.newUuid(); while (accessor.startsWith(RESERVED_ID_PREFIX) || aclTokenGetBySecret(o.store, ws, accessor).value);
    const t = {
      AccessorID: accessor, SecretID: o.masterToken, Description: "Master Token", Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "" }], Local: false,
      CreateTime: iso(nowMs), Type: "management" as const,
    };
    out.push({ what: "creating the master token", command: { type: "acl-bootstrap", token: { ...t, Hash: tokenHash(t) }, resetIndex: 0 } });
  }
  return out;
}

export function aclInitRoutine(o: AclLeaderOptions): LeaderRoutine {
  let active = false;
  let retry: Cancel | undefined;
  const run = async () => {
    retry = undefined;
    try {
      await o.barrier();
      const steps = aclInitCommands(o, o.clock.now());
      for (const step of steps) {
        if (!active) return;
        let r = await o.propose(step.command);
        // Bootstrap already used up: the master token is written as a plain token (Consul does the same).
        if (r.type === "error" && step.command.type === "acl-bootstrap") {
          r = await o.propose({ type: "acl-token", op: "set", tokens: [step.command.token] });
        }
        if (r.type === "error") throw new Error(`${step.what}: ${r.error}`);
        o.logger.info(`ACLs: ${step.what.replace(/^creating/, "created")}`);
      }
      if (steps.length > 0 && active) o.onInitialized?.();
    } catch (err) {
      if (!active) return;
      o.logger.warn("ACL initialization failed; will retry", { error: err, retryInMs: INIT_RETRY_MS });
      retry = o.clock.setTimer(INIT_RETRY_MS, () => void run());
    }
  };
  return {
    name: "ACL initialization",
    start() {
      active = true;
      void run();
    },
    stop() {
      active = false;
      retry?.();
      retry = undefined;
    },
  };
}

/** The accessors of tokens expired at `nowMs` that this datacenter reaps (local ones; global ones too in the primary). */
export function expiredTokens(store: StateStore, primary: boolean, nowMs: number): string[] {
  return aclTokenList(store, new WatchSet(), primary ? {} : { global: false })
    .value.filter((t) => t.ExpirationTime !== undefined && Date.parse(t.ExpirationTime) <= nowMs)
    .map((t) => t.AccessorID);
}

export function aclTokenReaperRoutine(o: Pick<AclLeaderOptions, "store" | "propose" | "primary" | "clock" | "logger">): LeaderRoutine {
  let stopTimer: Cancel | undefined;
  let reaping = false;
  const reap = async () => {
    if (reaping) return;
    reaping = true;
    try {
      const expired = expiredTokens(o.store, o.primary, o.clock.now());
      for (let i = 0; i < expired.length; i += REAP_BATCH) {
        const batch = expired.slice(i, i + REAP_BATCH);
        const r = await o.propose({ type: "acl-token", op: "delete", accessorIds: batch });
        if (r.type === "error") throw new Error(r.error);
        o.logger.info("ACLs: reaped expired tokens", { count: batch.length });
      }
    } catch (err) {
      o.logger.warn("reaping expired ACL tokens failed; will retry", { error: err });
    } finally {
      reaping = false;
    }
  };
  return {
    name: "ACL token reaping",
    start() {
      stopTimer = o.clock.setInterval(REAP_INTERVAL_MS, () => void reap());
    },
    stop() {
      stopTimer?.();
      stopTimer = undefined;
    },
  };
}
