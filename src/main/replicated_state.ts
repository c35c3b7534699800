/**
 * The replicated state on a server: the state store as the Raft state machine, the State service
 * backend that proposes and reads it, and the leader's duties over it (session TTL timers, KV
 * tombstone GC, gossip members in the catalog). Built before the consensus node (which needs the
 * state machine) and attached to it afterwards.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { CONFIG_ENTRY_KINDS, validateDeleteInGraph, validateEntryInGraph, type ConfigEntryKind } from "../connect/index.ts";

const isConfigEntryKind = (k: string): k is ConfigEntryKind => (CONFIG_ENTRY_KINDS as readonly string[]).includes(k);
import { ProposalDroppedError, type ConsensusNode } from "../consensus/index.ts";
import type { ReadQuery } from "../http/index.ts";
import type { PoolMember } from "../membership/index.ts";
import { SERF_CHECK_ID } from "../model/index.ts";
import { cryptoRng, type Cancel, type Clock, type Logger, type Rng } from "../platform/index.ts";
import type { StateBackend } from "../rpc/index.ts";
import {
  blockingQuery, caRoots, catalogNode, catalogNodeServices, createStateMachine, createStateStore, createTombstoneGc, decodeCommand,
  encodeCommand, healthChecksInState, healthNodeChecks, lockDelayRejection, sessionGet, sessionList, WatchSet,
  type ReplicatedStateMachine, type StateCommand, type StateResult, type StateStore,
} from "../state/index.ts";
import { createConnectCa, type ConnectCa } from "./connect_ca.ts";
import { handlesMember, memberWrite, reapedNodes } from "./catalog_members.ts";
import { createSessionTimers } from "./session_timers.ts";
import { runRead } from "./state_reads.ts";
import { decodeWire, encodeWire } from "./state_wire.ts";

/** Consul's defaults: tombstones live 15 minutes, expiring in 30-second buckets. */
const TOMBSTONE_TTL_MS = 15 * 60_000;
const TOMBSTONE_GRANULARITY_MS = 30_000;

export interface ReplicatedState {
  readonly store: StateStore;
  readonly stateMachine: ReplicatedStateMachine<StateResult>;
  readonly backend: StateBackend;
  /** Connects the consensus node once it exists; nothing is proposed before. */
  attach(consensus: ConsensusNode<StateResult>): void;
  /** Starts or stops the leader's duties. */
  setLeader(leader: boolean): void;
  /** The Connect CA over this state (signing on any server, configuration on the leader). */
  readonly ca: ConnectCa;
  /** On the leader: makes the catalog agree with the LAN pool (Consul's reconcile). Serialised. */
  reconcileMembers(members: readonly PoolMember[]): Promise<void>;
}

/** Retry delay of a failed CA initialisation while this server stays leader. */
const CA_INIT_RETRY_MS = 5_000;

/**
 * `connectCa`: the leader initialises the Connect CA (cluster ID and first root) when it has none;
 * off by default so that tests of other duties see only their own proposals. `rng` (default cryptoRng)
 * draws cluster IDs and certificate serials.
 */
export function createReplicatedState(o: { clock: Clock; logger: Logger; datacenter: string; nodeName: string; connectCa?: boolean; rng?: Rng }): ReplicatedState {
  const log = o.logger;
  let consensus: ConsensusNode<StateResult> | undefined;
  let leader = false;
  const propose = async (cmd: StateCommand): Promise<StateResult> => {
    if (!consensus) throw new Error("Raft is not running yet");
    return consensus.propose(encodeCommand(cmd));
  };
  /** Proposes a duty's command; failures are logged (the duty retries on its next round). */
  const proposeDuty = (what: string, cmd: StateCommand) =>
    propose(cmd).then((r) => {
      if (r.type === "error") log.warn(`${what} was refused`, { error: r.error });
    }, (err) => log.warn(`${what} failed`, { error: err }));

  const tombstones = createTombstoneGc({
    clock: o.clock,
    ttlMs: TOMBSTONE_TTL_MS,
    granularityMs: TOMBSTONE_GRANULARITY_MS,
    onExpire: (reapIndex) => void proposeDuty("reaping KV tombstones", { type: "tombstone-reap", reapIndex }),
  });
  const store = createStateStore({
    clock: o.clock,
    onTombstone: (index) => tombstones.hint(index),
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
  const sessions = createSessionTimers({
    clock: o.clock,
    logger: log,
    expire: (id) => {
      log.info("session expired: its TTL passed without a renewal", { session: id });
      void proposeDuty("destroying an expired session", { type: "session", op: "destroy", id });
    },
  });

  const ca = createConnectCa({
    clock: o.clock,
    rng: o.rng ?? cryptoRng(),
    logger: log.named("connect-ca"),
    datacenter: o.datacenter,
    read: () => {
      // set-roots CASes on the roots table's index, which is the last set-roots' Raft index: every root
      // it writes gets that ModifyIndex (caRoots' own index also counts set-config writes).
      const r = caRoots(store, new WatchSet()).value;
      return { index: Math.max(0, ...r.roots.map((x) => x.ModifyIndex)), roots: r.roots, config: r.config };
    },
    barrier: () => consensus ? consensus.read() : Promise.reject(new Error("Raft is not running yet")),
    propose,
  });
  let caRetry: Cancel | undefined;
  /** Consul's initializeCA in establishLeadership: retried while leader until it succeeds. */
  const initializeCa = () => {
    caRetry = undefined;
    if (!leader || !o.connectCa) return;
    ca.initialize().catch((err) => {
      log.warn("initializing the Connect CA failed; will retry", { error: err });
      if (leader) caRetry = o.clock.setTimer(CA_INIT_RETRY_MS, initializeCa);
    });
  };

  /** Consul's ErrConnectNotEnabled: the CA is off unless `connect { enabled = true }` (always with -dev). */
  const requireConnect = () => {
    if (!o.connectCa) throw new ConnectError("Connect must be enabled in order to use this endpoint", Code.FailedPrecondition);
  };
  const readContext = { term: () => consensus?.status().term ?? 0 };
  const backend: StateBackend = {
    /**
     * Any server proposes: a follower's proposal reaches the leader as a Raft MsgProp (batched with
     * the rest of the Raft traffic, as etcd does), and the result comes from applying it here. The
     * lock-delay check uses this server's own delays, which every server derives from the same log.
     */
    async apply(bytes) {
      const cmd = decodeCommand(bytes);
      const rejected = lockDelayRejection(store, cmd);
      if (rejected) return encodeWire(rejected);
      try {
        return encodeWire(await consensus!.propose(bytes));
      } catch (err) {
        if (err instanceof ProposalDroppedError) throw new ConnectError(`No cluster leader (${err.message})`, Code.Unavailable);
        throw err;
      }
    },
    async query(bytes, options) {
      const q = decodeWire<ReadQuery>(bytes);
      const r = await blockingQuery({ minIndex: options.minIndex, maxWaitMs: options.maxWaitMs, clock: o.clock, run: (ws) => runRead(store, ws, q, readContext) });
      return { result: encodeWire(r.value), index: r.index };
    },
    linearizableRead: () => consensus!.read(),
    async renewSession(id) {
      const session = sessionGet(store, new WatchSet(), id).value;
      if (!session) return encodeWire([]);
      sessions.reset(session);
      return encodeWire([session]);
    },
    async signLeaf(service, csrPem) {
      requireConnect();
      return encodeWire(await ca.signLeaf(service, csrPem));
    },
    async setCAConfiguration(bytes) {
      requireConnect();
      await ca.setConfiguration(decodeWire(bytes));
      return new Uint8Array();
    },
  };

  let reconciling: Promise<void> = Promise.resolve();
  let reconcileQueued = false;
  let latestMembers: readonly PoolMember[] = [];
  const reconcileOnce = async (members: readonly PoolMember[]) => {
    const ws = new WatchSet();
    const opts = { datacenter: o.datacenter, selfName: o.nodeName };
    for (const m of members) {
      if (!leader) return;
      if (!handlesMember(m, o.datacenter)) continue;
      const node = catalogNode(store, ws, m.name).value;
      const services = node ? Object.keys(catalogNodeServices(store, ws, m.name).value?.Services ?? {}) : [];
      const serf = node ? healthNodeChecks(store, ws, m.name).value.find((c) => c.CheckID === SERF_CHECK_ID) : undefined;
      const write = memberWrite(m, { node: node ?? undefined, serviceIds: services, serfStatus: serf?.Status }, opts);
      if (!write) continue;
      log.info(write.kind === "register" ? `member ${m.status}: updating the catalog` : "member gone: deregistering", { member: m.name });
      await proposeDuty(`reconciling member ${m.name}`, write.kind === "register" ? { type: "register", req: write.request } : { type: "deregister", req: write.request });
    }
    const serfNodes = [...new Set(healthChecksInState(store, ws, "any").value.filter((c) => c.CheckID === SERF_CHECK_ID).map((c) => c.Node))];
    for (const name of reapedNodes(serfNodes, members, o.nodeName)) {
      if (!leader) return;
      log.info("member reaped: deregistering", { member: name });
      await proposeDuty(`deregistering reaped member ${name}`, { type: "deregister", req: { Datacenter: o.datacenter, Node: name } });
    }
  };

  // The leader times every new TTL session, whichever server proposed it.
  const inner = createStateMachine(store);
  const stateMachine: ReplicatedStateMachine<StateResult> = {
    apply(index, command) {
      const result = inner.apply(index, command);
      if (leader && result.type === "session") {
        const created = sessionGet(store, new WatchSet(), result.id).value;
        if (created) sessions.reset(created);
      }
      return result;
    },
    snapshot: () => inner.snapshot(),
    restore: (data) => inner.restore(data),
  };

  return {
    store,
    stateMachine,
    backend,
    ca,
    attach(c) {
      consensus = c;
    },
    setLeader(now) {
      if (now === leader) return;
      leader = now;
      tombstones.setEnabled(now);
      if (!now) {
        sessions.clearAll();
        caRetry?.();
        caRetry = undefined;
        return;
      }
      initializeCa();
      // A new leader becomes the authority for expiries: time every TTL session afresh, and start the
      // tombstone clock for whatever tombstones exist (Consul's establishLeadership).
      for (const s of sessionList(store, new WatchSet()).value) sessions.reset(s);
      tombstones.hint(store.lastIndex());
    },
    reconcileMembers(members) {
      // Coalesced: a run in progress picks up only the latest member list afterwards.
      latestMembers = members;
      if (!reconcileQueued) {
        reconcileQueued = true;
        reconciling = reconciling.then(async () => {
          reconcileQueued = false;
          if (!leader || !consensus) return;
          // Like Consul's barrier after winning an election: apply everything committed first, so
          // decisions are made on the latest catalog.
          await consensus.read();
          await reconcileOnce(latestMembers);
        }).catch((err) => log.warn("member reconcile failed; will retry", { error: err }));
      }
      return reconciling;
    },
  };
}
