/**
 * Errors of the Raft core. Storage and the core report expected conditions by THROWING these specific
 * classes (etcd's sentinel errors); callers test with `instanceof`. Anything else thrown is a bug
 * (an invariant violation, like etcd's panics) and must crash the node.
 */

/** Base class of all expected Raft errors. */
export class RaftError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The requested index is older than the first retained entry (it was compacted into a snapshot). */
export class ErrCompacted extends RaftError {
  constructor() { super("requested index is unavailable due to compaction"); }
}

/** The requested entry is not (yet) in storage. */
export class ErrUnavailable extends RaftError {
  constructor() { super("requested entry at index is unavailable"); }
}

/** Applying or creating a snapshot older than the existing one. */
export class ErrSnapOutOfDate extends RaftError {
  constructor() { super("requested index is older than the existing snapshot"); }
}

/** Storage cannot produce a snapshot right now; the leader retries later (etcd behaviour). */
export class ErrSnapshotTemporarilyUnavailable extends RaftError {
  constructor() { super("snapshot is temporarily unavailable"); }
}

/** A proposal was dropped: no leader known, leadership transfer in progress, removed leader, or too big. */
export class ErrProposalDropped extends RaftError {
  constructor(reason = "raft proposal dropped") { super(reason); }
}

/**
 * A proposal was refused because an entry in it is larger than `Config.maxEntryBytes`. Unlike the other
 * drops this one is a property of the proposal itself: every node with the same limit refuses every copy
 * of it, so it is definite (the entry was not and will not be appended).
 */
export class ErrProposalTooLarge extends ErrProposalDropped {
  constructor(readonly size: number, readonly limit: number) {
    super(`proposal entry of ${size} bytes exceeds the ${limit}-byte limit`);
  }
}

/** A local-only message type was passed to `RawNode.step`. */
export class ErrStepLocalMsg extends RaftError {
  constructor() { super("raft: cannot step raft local message"); }
}

/** A response message arrived from a node that is not in the configuration. */
export class ErrStepPeerNotFound extends RaftError {
  constructor() { super("raft: cannot step as peer not found"); }
}

/** Invalid configuration passed to the core. */
export class ConfigError extends RaftError {}

/** A conf change that cannot be applied to the current configuration. */
export class ConfChangeError extends RaftError {}
