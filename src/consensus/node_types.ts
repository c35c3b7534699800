/**
 * The consensus driver's public types: the state machine it applies to, its options, its status and
 * the node handle. The implementation is in node.ts.
 */
import type { MetricsRegistry } from "../telemetry/index.ts";
import type { Clock, Logger, Rng } from "../platform/index.ts";
import type { Config as RaftConfig, ConfChange, ConfState, RawNode, SoftState } from "../raft/index.ts";
import type { LogStore, Transport } from "./ports.ts";

/** The replicated state machine. `apply` must be deterministic: every server applies the same sequence. */
export interface StateMachine<R> {
  /** Applies a committed command at `index`; the result goes back to the proposer. */
  apply(index: number, command: Uint8Array): R;
  /** Serialises the state as of the last applied index. */
  snapshot(): Uint8Array;
  /**
   * Optional, for a large state: captures the state as of the last applied index at the call, then
   * resolves to snapshot()'s bytes of that moment in parts, awaiting `pause()` between slices of
   * encoding so that the event loop keeps running. Commands applied meanwhile must not show in it.
   */
  snapshotInSlices?(pause: () => Promise<void>): Promise<readonly Uint8Array[]>;
  /** Replaces the state with a snapshot's. */
  restore(data: Uint8Array): void;
}

export interface ConsensusOptions<R> {
  readonly id: string;
  readonly clock: Clock;
  /**
   * Must draw a different sequence in every incarnation of the node (cryptoRng in production; distinct
   * seeds in simulations): proposal ids and read contexts come from it, and a restarted node that
   * reused its predecessor's would see its new proposals skipped as duplicates.
   */
  readonly rng: Rng;
  readonly logger: Logger;
  readonly log: LogStore;
  /**
   * Opens the same durable log again. Given, a full disk (ENOSPC, EDQUOT) does not stop the node: it refuses requests with StorageFailedError, leaves the cluster, and retries
   * (after storageRetryMs, doubling up to 30 s) to reopen the log and start again from what is durable,
   * as a restart would. Absent, such a failure stops the node.
   */
  readonly reopenLog?: () => LogStore;
  /** First wait before reopening a failed log; default 1000 ms. */
  readonly storageRetryMs?: number;
  readonly transport: Transport;
  readonly stateMachine: StateMachine<R>;
  /** Voters to start with when the log is empty (a new cluster). A node joining an existing cluster passes none. */
  readonly bootstrapVoters?: readonly string[];
  /** Milliseconds per Raft tick. Default 100. */
  readonly tickMs?: number;
  /** Ticks before a follower campaigns (randomised up to 2x). Default 10. */
  readonly electionTicks?: number;
  readonly heartbeatTicks?: number;
  /** Take a snapshot and compact after this many applied entries. Default 8192. */
  readonly snapshotEntries?: number;
  /**
   * With this set, a snapshot due by `snapshotEntries` waits until this long has passed since the
   * previous one (Consul's raft SnapshotInterval, 120 s): snapshots serialise the whole state on the
   * event loop, so under sustained writes they come at most this often. Beyond 8 x snapshotEntries
   * unsnapshotted entries one is taken anyway, which bounds the log. Default 0: by entries only.
   */
  readonly snapshotIntervalMs?: number;
  /** Entries kept in the log behind a snapshot, so slow followers can catch up without one. Default 1024. */
  readonly keepEntries?: number;
  /**
   * The log is held in memory from the last snapshot on, so its size is bounded in bytes too: a snapshot
   * is taken once this many bytes of commands were applied since the last one, whatever the entry count
   * and interval say (default 64 MiB); and the entries kept behind a snapshot are at most
   * `keepBytes` (default 16 MiB, always at least the last entry).
   */
  readonly snapshotBytes?: number;
  readonly keepBytes?: number;
  readonly requestTimeoutMs?: number;
  readonly maxSizePerMsg?: number;
  readonly maxInflightMsgs?: number;
  /**
   * Largest Raft entry (the command plus its 16-byte proposal envelope) this node proposes, forwards or,
   * as leader, appends; default DEFAULT_MAX_ENTRY_BYTES. `propose` refuses a bigger command at once, and
   * the leader refuses one forwarded by a follower (which may be older or configured otherwise) and tells
   * that follower, so its proposer fails with ProposalTooLargeError instead of timing out. Keep it below
   * the transport's frame limit: an entry that no message can carry would wedge replication.
   */
  readonly maxEntryBytes?: number;
  /**
   * Builds the Raft core from its config. Production leaves this unset; the simulation uses it to run
   * deliberately broken variants and prove its checkers catch them.
   */
  readonly createRawNode?: (config: RaftConfig) => RawNode;
  /** Where the node records Raft's metrics (raft_metrics.ts); absent: nothing is recorded. */
  readonly metrics?: MetricsRegistry;
}

export interface ConsensusStatus {
  readonly id: string;
  readonly leader: string;
  readonly role: SoftState["raftState"];
  readonly term: number;
  readonly commit: number;
  readonly applied: number;
  readonly lastIndex: number;
  /** Term of the entry at `lastIndex` as stored here (0 for an empty log); Consul's raft `last_log_term`. */
  readonly lastLogTerm: number;
  readonly config: ConfState;
  /**
   * Milliseconds since this node last heard from the current leader: 0 on the leader itself, undefined
   * when no leader is known or none has been heard from yet (Consul's X-Consul-LastContact).
   */
  readonly lastLeaderContactMs: number | undefined;
}

/** The leader's view of one server of the configuration (autopilot's server health reads it). */
export interface PeerProgress {
  /** Highest index known to be replicated on the server. */
  readonly match: number;
  readonly isLearner: boolean;
  /**
   * Term of this leader's entry at `match`, i.e. the server's last log term as far as the leader knows
   * (Log Matching); undefined when that entry is compacted away (the server needs a snapshot) or no
   * longer stored. For the leader itself: its own last log term.
   */
  readonly matchTerm: number | undefined;
  /**
   * Milliseconds since this leader last received a message from the server while leading (0 for the
   * leader itself); undefined when it has not heard from it since it became leader.
   */
  readonly lastContactMs: number | undefined;
}

export interface ConsensusNode<R> {
  /** Replays the durable log into the state machine and starts ticking. */
  start(): Promise<void>;
  /**
   * Bootstraps a new cluster with `voters` if this node started with an empty log and has not heard
   * from a cluster since (for bootstrap_expect: start first, bootstrap once enough servers are seen).
   * Resolves true if it bootstrapped. Every bootstrapping server must pass the same voters.
   */
  bootstrap(voters: readonly string[]): Promise<boolean>;
  /**
   * Replicates `command`; resolves with the state machine's result once applied here. Rejects with
   * ProposalTooLargeError, before anything is proposed, when `command` exceeds `maxCommandBytes`, and
   * with it too when the leader refuses the entry for its size; with ProposalDroppedError when no leader
   * took it; with ProposalTimeoutError (outcome unknown) when no result arrived in time.
   */
  propose(command: Uint8Array): Promise<R>;
  /** The largest command `propose` accepts: maxEntryBytes less the proposal envelope. */
  readonly maxCommandBytes: number;
  /** Resolves at a linearizable point: everything committed before the call is applied locally (ReadIndex). */
  read(): Promise<void>;
  /** Proposes a membership change; resolves with the new configuration once applied here. */
  changeMembership(cc: ConfChange): Promise<ConfState>;
  campaign(): void;
  transferLeadership(to: string): void;
  status(): ConsensusStatus;
  /** On the leader: how far `id`'s log is known to match the leader's; undefined elsewhere or for unknown ids. */
  progress(id: string): PeerProgress | undefined;
  /** Called with every leader change ("" when the leader is unknown). */
  onLeaderChange(fn: (leader: string, term: number) => void): void;
  /** Stops ticking and handling events; pending requests fail with NodeStoppedError. Does not close the log or transport. */
  stop(): Promise<void>;
}
