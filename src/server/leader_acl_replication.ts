/**
 * Leader routine: ACL replication on a secondary datacenter's leader (Consul 1.8
 * agent/consul/acl_replication.go: replicateACLPolicies, replicateACLRoles, replicateACLTokens). Three
 * replicators, policies and roles always and global tokens with `acl.enable_token_replication`, each
 * paced by a token bucket: a blocking read of the primary's list from the last remote index (made with
 * the replication token), a hash diff against the local objects (diffReplicated; local tokens are never
 * touched), and the difference written through Raft, deletions first, in batches at most `applyLimit`
 * per second. Roles and tokens are written with missing links allowed, since the replicators run
 * independently. A failed round forces a full resync and waits before the next. `status()` is what
 * `/v1/acl/replication` shows.
 */
import { ACL_REPLICATION, diffReplicated, REDACTED_TOKEN } from "../acl/index.ts";
import type { AclPolicy, AclRole, AclTokenRecord, ReadQuery } from "../model/index.ts";
import type { Clock, Logger, Rng } from "../platform/index.ts";
import { decodeWire, encodeWire, type StateCaller } from "../rpc/index.ts";
import { aclPolicyList, aclRoleList, aclTokenList, encodeCommand, WatchSet, type StateCommand, type StateResult, type StateStore } from "../state/index.ts";
import { abortableLoop, retryWaiterMs, RoutineStopped, sleep, tokenBucket, untilStopped } from "./leader_federation_pace.ts";
import type { LeaderRoutine } from "./leader_routines.ts";

export type AclReplicationKind = "policies" | "roles" | "tokens";

/** The objects of each kind, as the primary lists them and this server holds them. */
export interface AclReplicationObjects {
  policies: readonly AclPolicy[];
  roles: readonly AclRole[];
  tokens: readonly AclTokenRecord[];
}

export interface AclReplicationOptions {
  /**
   * The primary's list of `kind`: a blocking stale read in the primary datacenter made with the
   * replication token, returning once its index exceeds `minIndex` (at once for 0). `signal` aborts on
   * stop(); nothing answered after that is applied.
   */
  fetch<K extends AclReplicationKind>(kind: K, minIndex: number, signal: AbortSignal): Promise<{ readonly index: number; readonly items: AclReplicationObjects[K] }>;
  /** This server's objects of `kind` now. */
  local<K extends AclReplicationKind>(kind: K): AclReplicationObjects[K];
  /** Writes a command through Raft here; rejects when it fails or is refused. */
  apply(command: StateCommand): Promise<void>;
  /** `acl.enable_token_replication`. */
  readonly tokenReplication: boolean;
  /** The primary datacenter's name (SourceDatacenter). */
  readonly sourceDatacenter: string;
  /** Checked at each start (leadership): Consul replicates only with a replication token set. Default: on. */
  readonly enabled?: () => boolean;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /** Overrides of Consul's pacing (ACL_REPLICATION), for tests. */
  readonly applyLimit?: number;
  readonly batchSize?: number;
}

/** `/v1/acl/replication` (structs.ACLReplicationStatus). */
export interface AclReplicationStatus {
  readonly Enabled: boolean;
  readonly Running: boolean;
  readonly SourceDatacenter: string;
  readonly ReplicationType: "" | "policies" | "tokens";
  readonly ReplicatedIndex: number;
  readonly ReplicatedRoleIndex: number;
  readonly ReplicatedTokenIndex: number;
  readonly LastSuccess: string;
  readonly LastError: string;
}

export const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/** What a primary (or a datacenter without replication) answers. */
export const REPLICATION_DISABLED: AclReplicationStatus = {
  Enabled: false, Running: false, SourceDatacenter: "", ReplicationType: "", ReplicatedIndex: 0, ReplicatedRoleIndex: 0, ReplicatedTokenIndex: 0,
  LastSuccess: GO_ZERO_TIME, LastError: GO_ZERO_TIME,
};

export interface AclReplicationRoutine extends LeaderRoutine {
  status(): AclReplicationStatus;
}

const strip = <T extends { CreateIndex?: number; ModifyIndex?: number }>(t: T): Omit<T, "CreateIndex" | "ModifyIndex"> => {
  const { CreateIndex: _c, ModifyIndex: _m, ...rest } = t;
  return rest;
};

/** The commands that write `ids` deleted and `items` set, in batches of `size`. */
function commandsOf(kind: AclReplicationKind, deletions: readonly string[], updates: readonly unknown[], size: number): StateCommand[] {
  const out: StateCommand[] = [];
  for (let i = 0; i < deletions.length; i += size) {
    const ids = deletions.slice(i, i + size);
    out.push(kind === "tokens" ? { type: "acl-token", op: "delete", accessorIds: ids } : { type: kind === "policies" ? "acl-policy" : "acl-role", op: "delete", ids });
  }
  for (let i = 0; i < updates.length; i += size) {
    const batch = updates.slice(i, i + size);
    if (kind === "policies") out.push({ type: "acl-policy", op: "set", policies: (batch as AclPolicy[]).map(strip) });
    else if (kind === "roles") out.push({ type: "acl-role", op: "set", roles: (batch as AclRole[]).map(strip), allowMissingLinks: true });
    else out.push({ type: "acl-token", op: "set", tokens: (batch as AclTokenRecord[]).map(strip), allowMissingLinks: true });
  }
  return out;
}

export function aclReplicationRoutine(o: AclReplicationOptions): AclReplicationRoutine {
  const applyGapMs = 1000 / (o.applyLimit ?? ACL_REPLICATION.applyLimit);
  const batchSize = o.batchSize ?? 100;
  const index: Record<AclReplicationKind, number> = { policies: 0, roles: 0, tokens: 0 };
  let lastSuccess = GO_ZERO_TIME;
  let lastError = GO_ZERO_TIME;
  let running = false;
  let enabled = false;

  /** One round of `kind`; returns the remote index it synced to. */
  const replicate = async (kind: AclReplicationKind, last: number, signal: AbortSignal): Promise<number> => {
    const remote = await untilStopped(o.fetch(kind, last, signal), signal);
    // The remote index moving backwards (the primary restored a snapshot) makes this a full resync.
    if (remote.index < last) o.logger.warn("ACL replication remote index moved backwards, forcing a full sync", { kind, from: last, to: remote.index });
    const remoteItems = kind === "tokens" ? (remote.items as readonly AclTokenRecord[]).filter((t) => !t.Local) : remote.items;
    const localItems = kind === "tokens" ? (o.local("tokens") as readonly AclTokenRecord[]).filter((t) => !t.Local) : o.local(kind);
    type Replicated = { readonly ID?: string; readonly AccessorID?: string; readonly Hash: string };
    const idOf = (x: Replicated) => (kind === "tokens" ? x.AccessorID! : x.ID!);
    const diff = diffReplicated(localItems as readonly Replicated[], remoteItems as readonly Replicated[], idOf, (x) => x.Hash);
    if (diff.deletions.length || diff.updates.length) o.logger.debug("ACL replication", { kind, deletions: diff.deletions.length, updates: diff.updates.length });
    const commands = commandsOf(kind, diff.deletions, diff.updates, batchSize);
    for (let i = 0; i < commands.length; i++) {
      if (i > 0) await sleep(o.clock, applyGapMs, signal);
      await untilStopped(o.apply(commands[i]!), signal);
    }
    return Math.max(1, remote.index);
  };

  const replicator = (kind: AclReplicationKind) =>
    abortableLoop(async (signal) => {
      const bucket = tokenBucket(o.clock, ACL_REPLICATION.rate, ACL_REPLICATION.burst);
      let failures = 0;
      index[kind] = 0;
      for (;;) {
        await sleep(o.clock, bucket.reserve(), signal);
        try {
          index[kind] = await replicate(kind, index[kind], signal);
          failures = 0;
          lastSuccess = new Date(o.clock.now()).toISOString();
        } catch (err) {
          if (err instanceof RoutineStopped || signal.aborted) throw new RoutineStopped();
          index[kind] = 0;
          failures++;
          lastError = new Date(o.clock.now()).toISOString();
          o.logger.warn("ACL replication error (will retry if still leader)", { kind, error: err });
          await sleep(o.clock, retryWaiterMs(failures, ACL_REPLICATION.maxRetryWaitMs, o.rng), signal);
        }
      }
    }, (err) => o.logger.error("ACL replication stopped unexpectedly", { kind, error: err }));

  const loops = (["policies", "roles", ...(o.tokenReplication ? ["tokens" as const] : [])] as const).map(replicator);
  return {
    name: "ACL replication",
    start() {
      enabled = o.enabled?.() ?? true;
      if (!enabled) {
        o.logger.info("ACL replication is off: no replication token (acl.tokens.replication) is set");
        return;
      }
      running = true;
      for (const l of loops) l.start();
    },
    stop() {
      running = false;
      for (const l of loops) l.stop();
    },
    status: () => ({
      Enabled: enabled, Running: running, SourceDatacenter: o.sourceDatacenter, ReplicationType: o.tokenReplication ? "tokens" : "policies",
      ReplicatedIndex: index.policies, ReplicatedRoleIndex: index.roles, ReplicatedTokenIndex: index.tokens, LastSuccess: lastSuccess, LastError: lastError,
    }),
  };
}

/** The reads of each kind, in the primary and here. */
const LIST_QUERIES = { policies: { type: "acl-policy-list" }, roles: { type: "acl-role-list" }, tokens: { type: "acl-token-list" } } as const satisfies Record<AclReplicationKind, ReadQuery>;

/**
 * The routine over a server: the primary's lists through `state()` (the leader's StateCaller, which adds
 * the replication token to calls to other datacenters), the local ones from `store`, writes through
 * `state()` as this server's own duty.
 */
export function aclReplicationOver(o: {
  readonly state: () => StateCaller | undefined;
  readonly store: StateStore;
  readonly primaryDc: string;
  readonly tokenReplication: boolean;
  readonly enabled: () => boolean;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
}): AclReplicationRoutine {
  const caller = () => {
    const c = o.state();
    if (!c) throw new Error("the server's RPC is not running yet");
    return c;
  };
  return aclReplicationRoutine({
    async fetch(kind, minIndex, signal) {
      const out = await caller().query(encodeWire(LIST_QUERIES[kind]), {
        datacenter: o.primaryDc, consistency: "stale", minIndex, maxWaitMs: ACL_REPLICATION.blockingWaitMs, signal,
      });
      const items = decodeWire<AclReplicationObjects[typeof kind]>(out.result);
      if (kind === "tokens" && (items as readonly AclTokenRecord[]).some((t) => t.SecretID === REDACTED_TOKEN)) {
        throw new Error('the replication token may not read token secrets: token replication needs acl = "write"');
      }
      return { index: out.index, items };
    },
    local(kind) {
      const ws = new WatchSet();
      const items = kind === "policies" ? aclPolicyList(o.store, ws).value : kind === "roles" ? aclRoleList(o.store, ws).value : aclTokenList(o.store, ws).value;
      return items as never;
    },
    async apply(command) {
      const r = decodeWire<StateResult>(await caller().apply(encodeCommand(command)));
      if (r.type === "error") throw new Error(r.error);
    },
    tokenReplication: o.tokenReplication,
    enabled: o.enabled,
    sourceDatacenter: o.primaryDc,
    clock: o.clock,
    rng: o.rng,
    logger: o.logger,
  });
}
