/**
 * The replicated state on a server: the state store as the Raft state machine, the State service
 * backend that proposes and reads it, and the leader routines over it (session TTLs, KV tombstone GC,
 * the Connect CA, gossip members in the catalog). Built before the consensus node (which needs the
 * state machine) and attached to it afterwards; the server starts and stops the routines with
 * leadership.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { validateDeleteInGraph, validateEntryInGraph } from "../connect/index.ts";
import type { ConsensusNode } from "../consensus/index.ts";
import type { AclAccess, AclResource } from "../acl/index.ts";
import type { ReadQuery, ReadValue } from "../model/index.ts";
import { REPLICATION_DISABLED } from "./leader_acl_replication.ts";
import { cryptoRng, nextTimerTurn, uuidFrom, type Clock, type Logger, type Rng } from "../platform/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import { decodeWire, encodeWire, encodeWireInSlices, type StateBackend } from "../rpc/index.ts";
import {
  aclBootstrapState, acquiresLock, blockingQuery, caRoots, createStateMachine, createStateStore, decodeCommand, encodeCommand, lockDelayRejection, sessionGet, WatchSet,
  type ReplicatedStateMachine, type StateCommand, type StateResult, type StateStore,
} from "../state/index.ts";
import { createConnectCa, type ConnectCa } from "./connect_ca.ts";
import { createCoordinateBatcher, type CoordinateBatcher, type CoordinateBatcherOptions } from "./coordinate_batcher.ts";
import { connectCaRoutine } from "./leader_ca.ts";
import { memberReconcileRoutine, type MemberReconcileRoutine } from "./leader_members.ts";
import { dutyProposer, type LeaderRoutine } from "./leader_routines.ts";
import { sessionTtlRoutine } from "./leader_session_ttl.ts";
import { tombstoneGcRoutine } from "./leader_tombstone_gc.ts";
import { stagedRestoreGcRoutine } from "./leader_restore_gc.ts";
import { checkRestore, isConfigEntryKind, proposalError, restoreChunkBytes, restoreInChunks } from "./staged_restore.ts";
import { runRead } from "./run_read.ts";
import { commandTimings } from "./state_metrics.ts";
import { aclInitRoutine, aclTokenReaperRoutine } from "./leader_acl.ts";
import { createAclEnforcement, type AclEnforcementOptions } from "./acl_enforcement.ts";
import type { BootstrapResetFile } from "./acl_bootstrap_file.ts";

export interface ReplicatedState {
  readonly store: StateStore;
  readonly stateMachine: ReplicatedStateMachine<StateResult>;
  readonly backend: StateBackend;
  /** Connects the consensus node once it exists; nothing is proposed before. */
  attach(consensus: ConsensusNode<StateResult>): void;
  /**
   * With ACLs: resolves `token` (asking the primary from a secondary) and throws ConnectError unless it
   * has `access` on `resource`; for the RPC services outside the State service. Absent without ACLs.
   */
  readonly aclCheck?: (token: string, resource: AclResource, access: AclAccess, segment?: string) => Promise<void>;
  /** The leader routines over this state, in start order (the server runs them with leadership). */
  readonly leaderRoutines: readonly LeaderRoutine[];
  /** The Connect CA over this state (signing on any server, configuration on the leader). */
  readonly ca: ConnectCa;
  /** The catalog-members routine: feed it the LAN pool's members. */
  readonly members: MemberReconcileRoutine;
  /** Calls `fn` after a user restore replaced the whole state (from inside the apply: defer real work). */
  onRestored(fn: () => void): void;
  /** Coordinate updates received by this server, proposed in batches once started (the server starts it). */
  readonly coordinates: CoordinateBatcher;
}

/**
 * `connectCa`: the leader initialises the Connect CA (cluster ID and first root) when it has none;
 * off by default so that tests of other duties see only their own proposals. `rng` (default cryptoRng)
 * draws cluster IDs and certificate serials.
 */
export function createReplicatedState(o: {
  clock: Clock; logger: Logger; datacenter: string; nodeName: string; connectCa?: boolean; rng?: Rng;
  /** `primary_datacenter`; a secondary's CA follows the primary's (see connect_ca.ts). */
  primaryDatacenter?: string;
  /** Snapshot bytes per chunk of a restore; default: the most that fits in one entry, up to 4 MiB. */
  restoreChunkBytes?: number;
  /** Coordinate update batching (Consul's coordinate_update_* settings); Consul's defaults when absent. */
  coordinateUpdate?: Pick<CoordinateBatcherOptions, "periodMs" | "batchSize" | "maxBatches">;
  /** Where write timings (state_metrics.ts) and the leader routines' metrics go; absent: not recorded. */
  metrics?: MetricsRegistry;
  /**
   * With ACLs enabled: the leader initializes them (in the primary) and reaps expired tokens
   * (leader_acl.ts), and every command and read served on a request's behalf is checked against its
   * token (acl_enforcement.ts).
   */
  acl?: {
    readonly masterToken: string; readonly defaultPolicy: "allow" | "deny"; readonly defaultToken: () => string; readonly enableKeyListPolicy: boolean;
    /** The data dir's bootstrap reset file (acl_bootstrap_file.ts); absent: no reset is possible. */
    readonly bootstrapReset?: BootstrapResetFile;
    /** Told when the leader has just written the builtin ACL objects or the master token. */
    readonly onInitialized?: () => void;
    /** In a secondary: how tokens this server does not hold are resolved through the primary (acl_enforcement.ts). */
    readonly remote?: AclEnforcementOptions["remote"];
    /** What the `acl-replication-status` read answers (the leader's replication routine); absent: not replicating. */
    readonly replicationStatus?: () => ReadValue<{ type: "acl-replication-status" }>;
  };
}): ReplicatedState {
  const log = o.logger;
  const rng = o.rng ?? cryptoRng();
  const timings = commandTimings(o.metrics);
  /** Leaf certificates this server signed, and how long each took (ms). */
  const leafSign = o.metrics?.sample("connect.ca.leaf.sign");
  let consensus: ConsensusNode<StateResult> | undefined;
  const propose = async (cmd: StateCommand): Promise<StateResult> => {
    if (!consensus) throw new Error("Raft is not running yet");
    const timing = timings(cmd.type);
    const startedAt = timing ? o.clock.monotonic() : 0;
    try {
      return await consensus.propose(encodeCommand(cmd));
    } finally {
      timing?.observe(o.clock.monotonic() - startedAt);
    }
  };
  const barrier = () => (consensus ? consensus.read() : Promise.reject(new Error("Raft is not running yet")));
  const proposeDuty = dutyProposer(propose, log);

  const tombstones = tombstoneGcRoutine({ clock: o.clock, proposeDuty, lastIndex: () => store.lastIndex() });
  const restoredListeners: (() => void)[] = [];
  const store = createStateStore({
    clock: o.clock,
    onTombstone: (index) => tombstones.hint(index),
    onRestored: () => restoredListeners.forEach((fn) => fn()),
    onLockDelays: (c) => {
      if (c.op === "start") log.info("lock-delay started", { index: c.index, keys: c.keys.map(([k, ms]) => `${k} ${ms} ms`).join(", ") });
      else log.warn("restore dropped running lock-delays", { index: c.index, dropped: c.dropped });
    },
    checkConfigEntries: (entries, change) => {
      try {
        // Deleting an entry of a kind that cannot exist changes nothing to check.
        if (change.op === "delete") {
          if (isConfigEntryKind(change.kind)) validateDeleteInGraph(entries, change.kind, change.name);
        }
        else validateEntryInGraph(entries, change.entry);
        return undefined;
      } catch (err) {
        return err instanceof Error ? err.message : String(err);
      }
    },
  });
  const sessions = sessionTtlRoutine({
    clock: o.clock, logger: log, store, proposeDuty,
    ...(o.metrics ? { metrics: { active: o.metrics.gauge("session_ttl.active"), invalidate: o.metrics.sample("session_ttl.invalidate") } } : {}),
  });
  const ca = createConnectCa({
    clock: o.clock,
    rng,
    logger: log.named("connect-ca"),
    datacenter: o.datacenter,
    ...(o.primaryDatacenter ? { primaryDatacenter: o.primaryDatacenter } : {}),
    read: () => {
      // set-roots CASes on the roots table's index, which is the last set-roots' Raft index: every root
      // it writes gets that ModifyIndex (caRoots' own index also counts set-config writes).
      const r = caRoots(store, new WatchSet()).value;
      return { index: Math.max(0, ...r.roots.map((x) => x.ModifyIndex)), roots: r.roots, config: r.config };
    },
    barrier,
    propose,
  });
  const coordinates = createCoordinateBatcher({ clock: o.clock, logger: log.named("coordinate"), propose, ...o.coordinateUpdate });
  const stagedRestores = stagedRestoreGcRoutine({ clock: o.clock, proposeDuty, staged: () => store.stagedRestore() });
  const members = memberReconcileRoutine({
    clock: o.clock, logger: log, store, datacenter: o.datacenter, nodeName: o.nodeName, proposeDuty, barrier,
    ...(o.metrics ? { reconcileTime: o.metrics.sample("leader.reconcile") } : {}),
  });

  /** Consul's ErrConnectNotEnabled: the CA is off unless `connect { enabled = true }` (always with -dev). */
  const requireConnect = () => {
    if (!o.connectCa) throw new ConnectError("Connect must be enabled in order to use this endpoint", Code.FailedPrecondition);
  };
  const readContext = { term: () => consensus?.status().term ?? 0, datacenter: o.datacenter, random: () => rng.next(), now: () => o.clock.now() };
  const queued = () => encodeWire({ type: "ok" } satisfies StateResult);
  /** Commands applyPolicy decoded, so apply does not decode the same bytes again. */
  const decoded = new WeakMap<Uint8Array, StateCommand>();
  const backend: StateBackend = {
    /**
     * Any server proposes: a follower's proposal reaches the leader as a Raft MsgProp (batched with
     * the rest of the Raft traffic, as etcd does), and the result comes from applying it here. The
     * lock-delay check uses this server's own delays, which every server derives from the same log.
     * A command whose entry would exceed the Raft entry limit is refused here (ResourceExhausted)
     * before anything is proposed; a restore is checked here (InvalidArgument) and proposed in chunks.
     * Coordinate updates are queued for this server's next batch (Consul's Coordinate.Update answers as
     * soon as the update is queued); a refused coordinate is InvalidArgument with Consul's text.
     */
    // Lock acquisitions go to the leader: its lock-delays are the newest (see acquiresLock). An
    // undecodable command is left to apply, which refuses it with the decoder's message.
    applyPolicy(bytes) {
      try {
        const cmd = decodeCommand(bytes);
        decoded.set(bytes, cmd);
        return acquiresLock(cmd) ? "leader" : "local";
      } catch {
        return "local";
      }
    },
    async apply(bytes, token) {
      // Kept in `decoded` (a WeakMap: gone with the bytes) for this server's own apply of it.
      const cmd = decoded.get(bytes) ?? decodeCommand(bytes);
      decoded.set(bytes, cmd);
      // On a request's behalf (a token given): what its ACL token may do. This server's own duties pass no token.
      if (token !== undefined) await aclEnforcement?.resolve(token);
      const refused = token !== undefined ? aclEnforcement?.checkCommand(cmd, token) : undefined;
      if (refused) return encodeWire(refused);
      if (cmd.type === "acl-bootstrap" && token !== undefined) return encodeWire(await bootstrap(cmd));
      if (cmd.type === "coordinate-batch") {
        try {
          coordinates.submit(cmd.updates);
        } catch (err) {
          throw new ConnectError((err as Error).message, Code.InvalidArgument);
        }
        return queued();
      }
      if (cmd.type === "restore-stage") throw new ConnectError("restore-stage commands are proposed by the server a restore reaches", Code.InvalidArgument);
      if (cmd.type === "restore") checkRestore(cmd.data);
      const rejected = lockDelayRejection(store, cmd);
      if (rejected) return encodeWire(rejected);
      if (!consensus) throw new ConnectError("Raft is not running yet", Code.Unavailable);
      const c = consensus;
      // The write's time, from here to its result, under the command's metric (state_metrics.ts).
      const timing = timings(cmd.type);
      const startedAt = timing ? o.clock.monotonic() : 0;
      try {
        if (cmd.type !== "restore") return encodeWire(await c.propose(bytes));
        const chunkBytes = o.restoreChunkBytes ?? restoreChunkBytes(c.maxCommandBytes);
        return encodeWire(await restoreInChunks(cmd.data, { propose: (x) => c.propose(encodeCommand(x)), rng, chunkBytes }));
      } catch (err) {
        throw proposalError(err);
      } finally {
        timing?.observe(o.clock.monotonic() - startedAt);
      }
    },
    async query(bytes, options) {
      const q = decodeWire<ReadQuery>(bytes);
      if (q.type === "snapshot") {
        // The whole state: captured now, encoded in slices while the server goes on (never blocks).
        const index = store.lastIndex();
        const term = readContext.term();
        const pause = () => nextTimerTurn(o.clock);
        const state = await store.snapshotInSlices(pause);
        return { result: await encodeWireInSlices({ state, index, term }, pause), index };
      }
      if (q.type === "acl-replication-status") {
        return { result: encodeWire(o.acl?.replicationStatus?.() ?? REPLICATION_DISABLED), index: Math.max(1, store.lastIndex()) };
      }
      const token = options.token;
      const enforce = token !== undefined ? aclEnforcement : undefined;
      // An unknown token, or a key it may not read, is refused before anything blocks (Consul checks before the lookup).
      if (enforce) {
        await enforce.resolve(token);
        enforce.authorizer(token);
        if (q.type === "kv-get") enforce.filterRead(q, null, token);
      }
      const r = await blockingQuery({ minIndex: options.minIndex, maxWaitMs: options.maxWaitMs, clock: o.clock, signal: options.signal, run: (ws) => runRead(store, ws, q, readContext) });
      return { result: encodeWire(enforce ? enforce.filterRead(q, r.value as never, token) : r.value), index: r.index };
    },
    linearizableRead: () => consensus!.read(),
    // The calls below check their token as Consul 1.8's endpoints do (Session.Renew, ConnectCA.Sign,
    // ConnectCA.ConfigurationSet, ConnectCA.SignIntermediate); an undefined token is the server's own duty.
    async renewSession(id, token) {
      const session = sessionGet(store, new WatchSet(), id).value;
      if (token !== undefined && aclEnforcement) {
        await aclEnforcement.resolve(token);
        aclEnforcement.authorizer(token);
        if (session) aclEnforcement.require(token, "session", "write", session.Node);
      }
      if (!session) return encodeWire([]);
      sessions.renewed(session);
      return encodeWire([session]);
    },
    async signLeaf(service, csrPem, token) {
      requireConnect();
      if (token !== undefined) await aclEnforcement?.resolve(token);
      if (token !== undefined) aclEnforcement?.require(token, "service", "write", service);
      const startedAt = o.clock.monotonic();
      const leaf = await ca.signLeaf(service, csrPem);
      leafSign?.observe(o.clock.monotonic() - startedAt);
      return encodeWire(leaf);
    },
    async setCAConfiguration(bytes, token) {
      requireConnect();
      if (token !== undefined) await aclEnforcement?.resolve(token);
      if (token !== undefined) aclEnforcement?.require(token, "operator", "write");
      await ca.setConfiguration(decodeWire(bytes));
      return new Uint8Array();
    },
    async signIntermediate(csrPem, token) {
      requireConnect();
      if (token !== undefined) await aclEnforcement?.resolve(token);
      if (token !== undefined) aclEnforcement?.require(token, "operator", "write");
      return ca.signIntermediate(csrPem);
    },
  };

  function aclRoutines(): LeaderRoutine[] {
    if (!o.acl) return [];
    const acl = {
      store, propose, barrier, primary: (o.primaryDatacenter ?? o.datacenter) === o.datacenter, masterToken: o.acl.masterToken,
      newUuid: () => uuidFrom(rng), clock: o.clock, logger: log.named("acl"), ...(o.acl.onInitialized ? { onInitialized: o.acl.onInitialized } : {}),
    };
    return [aclInitRoutine(acl), aclTokenReaperRoutine(acl)];
  }

  /**
   * ACL.BootstrapTokens on a request's behalf: refused once bootstrap is used up, unless the data dir's
   * reset file names the index it was used up at (the file is removed once read and matched).
   */
  const bootstrap = async (cmd: Extract<StateCommand, { type: "acl-bootstrap" }>): Promise<StateResult> => {
    if (!o.acl) throw new ConnectError("ACL support disabled", Code.FailedPrecondition);
    const state = aclBootstrapState(store);
    let resetIndex = 0;
    if (!state.allowed) {
      const specified = o.acl.bootstrapReset?.read() ?? 0;
      if (specified === 0) throw new ConnectError(`Permission denied: ACL bootstrap no longer allowed (reset index: ${state.resetIndex})`, Code.PermissionDenied);
      if (specified !== state.resetIndex) throw new ConnectError(`Invalid bootstrap reset index (specified ${specified}, reset index: ${state.resetIndex})`, Code.InvalidArgument);
      resetIndex = specified;
    }
    o.acl.bootstrapReset?.remove();
    return propose({ ...cmd, resetIndex });
  };

  const aclEnforcement = o.acl
    ? createAclEnforcement({
      store, datacenter: o.datacenter, defaultPolicy: o.acl.defaultPolicy, defaultToken: o.acl.defaultToken, enableKeyListPolicy: o.acl.enableKeyListPolicy, clock: o.clock,
      ...(o.acl.remote ? { remote: o.acl.remote } : {}),
    })
    : undefined;

  const inner = createStateMachine(store, decoded);
  const stateMachine: ReplicatedStateMachine<StateResult> = {
    apply(index, command) {
      const result = inner.apply(index, command);
      sessions.applied(result);
      return result;
    },
    snapshot: () => inner.snapshot(),
    snapshotInSlices: (pause) => inner.snapshotInSlices!(pause),
    restore: (data) => inner.restore(data),
  };

  return {
    store,
    stateMachine,
    backend,
    ca,
    members,
    coordinates,
    // Consul's establishLeadership order: timers and GC first, then the CA, then the catalog.
    leaderRoutines: [
      sessions, tombstones, stagedRestores, connectCaRoutine({ ca, enabled: o.connectCa ?? false, clock: o.clock, logger: log }), members, ...aclRoutines(),
    ],
    attach(c) {
      consensus = c;
    },
    ...(aclEnforcement ? {
      aclCheck: async (token: string, resource: AclResource, access: AclAccess, segment?: string) => {
        await aclEnforcement.resolve(token);
        aclEnforcement.require(token, resource, access, segment);
      },
    } : {}),
    onRestored: (fn) => void restoredListeners.push(fn),
  };
}
