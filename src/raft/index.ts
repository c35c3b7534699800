/**
 * Public face of the pure Raft core (modelled on go.etcd.io/raft). Synchronous, deterministic, no I/O:
 * time advances only through `RawNode.tick()`, randomness comes from the injected Rng.
 *
 * Snapshot design: the core handles snapshot METADATA only (index, term, ConfState). When a follower
 * needs a compacted prefix, the leader's Ready carries a `MsgSnap` naming the snapshot; the leader's
 * driver streams the bytes in chunks out of band and reports the outcome with `reportSnapshot`. The
 * follower's driver assembles the chunks and steps the `MsgSnap` only once it holds the complete
 * snapshot; the follower's next Ready then carries `snapshot` for the driver to install.
 */
export type { Config, ResolvedConfig } from "./config.ts";
export { validateConfig } from "./config.ts";
export * from "./errors.ts";
export * from "./types.ts";
export type { InitialState, Storage } from "./storage.ts";
export { MemoryStorage } from "./storage.ts";
export { RawNode } from "./rawnode.ts";
export type { ProgressStatus, Ready, SnapshotStatus, Status } from "./rawnode.ts";
export { Raft } from "./raft.ts";
export type { CampaignType } from "./raft.ts";
export type { ReadOnlyOption } from "./read_only.ts";
export type { ProgressState } from "./progress.ts";
export type { AckedIndexer, JointConfig, MajorityConfig, VoteResult } from "./quorum.ts";
export { jointCommittedIndex, jointVoteResult, majorityCommittedIndex, majorityVoteResult } from "./quorum.ts";
export { describeConfChange, describeEntries, describeEntry, describeHardState, describeMessage, describeSnapshot } from "./describe.ts";
