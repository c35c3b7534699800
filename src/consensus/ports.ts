/**
 * Ports of the consensus driver: where the Raft log is kept and how Raft messages and snapshots travel.
 * Implementations: the durable log store (log_store.ts) over the platform file port, the TCP transport
 * (transport_tcp.ts), and in tests the simulated disk and network of test/harness.
 */
import type { Entry, HardState, Message, Snapshot } from "../raft/index.ts";

/** What a restarted node reads back: everything that was durably synced, nothing else. */
export interface RecoveredLog {
  readonly hardState: HardState;
  /** Metadata of the latest durable snapshot; `index === 0` when there is none. */
  readonly snapshot: Snapshot;
  /** Contiguous entries after `snapshot.index`. */
  readonly entries: readonly Entry[];
}

/**
 * The durable Raft log: entries, hard state and snapshots.
 *
 * Writes are buffered by `save` and made durable, in order, by `sync` (group commit: every `save` made
 * before a `sync` starts is covered by it). Torn or truncated unsynced tails are dropped by `recover`
 * with a log line; corruption inside synced data makes `recover` throw {@link LogCorruptionError}.
 */
export interface LogStore {
  /** Reads the durable state. Called once, before any write. */
  recover(): RecoveredLog;
  /**
   * Records `hardState` (if given) and `entries`. Entries whose index is at or below an existing entry's
   * replace that entry and everything after it (a Raft log conflict). Not durable until `sync` resolves.
   */
  save(hardState: HardState | undefined, entries: readonly Entry[]): void;
  /** Resolves when everything saved before the call is durable. */
  sync(): Promise<void>;
  /**
   * Durably installs a snapshot (metadata and bytes); entries at or below `meta.index` are no longer
   * needed and may be dropped. Resolves when durable.
   */
  saveSnapshot(meta: Snapshot, data: Uint8Array): Promise<void>;
  /**
   * The first half of saveSnapshot, for a snapshot taken here while the log goes on: durably writes the
   * snapshot's file from its data in parts, and may run while entries are saved and synced. The log
   * does not use the file until `recordSnapshot(meta)`. `pause`, when given, is awaited between
   * slices of CPU work (checksums) so that the caller's event loop keeps running.
   */
  writeSnapshot(meta: Snapshot, parts: readonly Uint8Array[], pause?: () => Promise<void>): Promise<void>;
  /** The second half: makes the snapshot written by `writeSnapshot(meta, ...)` the log's, as saveSnapshot does. */
  recordSnapshot(meta: Snapshot): Promise<void>;
  /** The latest durable snapshot with its bytes, or undefined. */
  loadSnapshot(): { readonly meta: Snapshot; readonly data: Uint8Array } | undefined;
  /** loadSnapshot with the file read asynchronously (for streaming it to a follower while serving). */
  readSnapshot(): Promise<{ readonly meta: Snapshot; readonly data: Uint8Array } | undefined>;
  /** Allows dropping entries at or below `index` (covered by a saved snapshot) from disk. */
  compact(index: number): void;
  close(): void;
}

/** Thrown by `LogStore.recover` when synced data fails its checksum. Names the file and the entry index. */
export class LogCorruptionError extends Error {
  constructor(readonly file: string, readonly index: number, detail: string) {
    super(`raft log corrupt in ${file} at index ${index}: ${detail}`);
    this.name = "LogCorruptionError";
  }
}

/**
 * Moves Raft messages and snapshots between servers. Delivery is best effort: messages may be lost,
 * duplicated or reordered, and Raft copes. Snapshots are streamed in chunks and either arrive whole or
 * not at all.
 */
export interface Transport {
  /** Queues `msg` for `msg.to`. Never throws; never blocks on the network. */
  send(msg: Message): void;
  /**
   * Streams a snapshot to `to`; resolves true once the receiver holds all of it (then the receiver's
   * `onSnapshot` has run), false on any failure.
   */
  sendSnapshot(to: string, msg: Message & { type: "MsgSnap" }, data: Uint8Array): Promise<boolean>;
  /** Registers the receiver of incoming messages (not MsgSnap). */
  onMessage(handler: (msg: Message) => void): void;
  /** Registers the receiver of complete incoming snapshots: the MsgSnap and its bytes. */
  onSnapshot(handler: (msg: Message & { type: "MsgSnap" }, data: Uint8Array) => void): void;
  close(): Promise<void>;
}
