/**
 * Value types of the Raft core: entries, states, snapshots (metadata only), conf changes, messages.
 *
 * Node IDs are non-empty strings; {@link NONE} (the empty string) means "no node". Indexes and terms are
 * plain numbers (safe up to 2^53, far beyond any log). Every value here is a readonly plain object so that
 * a Ready batch can be handed to the driver without copying.
 */

/** "No node": no leader known, no vote cast, no sender for a local message. */
export const NONE = "";

/** Kind of an entry. */
export type EntryType = "Normal" | "ConfChange";

interface EntryBase {
  readonly term: number;
  readonly index: number;
}

/** An application entry. An empty `data` is the no-op a new leader appends (Raft thesis §6.4). */
export interface NormalEntry extends EntryBase {
  readonly type: "Normal";
  readonly data: Uint8Array;
}

/** A membership change. Once committed, the application applies it with `RawNode.applyConfChange`. */
export interface ConfChangeEntry extends EntryBase {
  readonly type: "ConfChange";
  readonly change: ConfChange;
}

export type Entry = NormalEntry | ConfChangeEntry;

/** Persistent state that must reach stable storage before messages of the same Ready are sent. */
export interface HardState {
  readonly term: number;
  readonly vote: string;
  readonly commit: number;
}

export const EMPTY_HARD_STATE: HardState = { term: 0, vote: NONE, commit: 0 };

export type StateType = "Follower" | "Candidate" | "Leader" | "PreCandidate";

/** Volatile state, useful for logging and for the driver (who is leader). Not persisted. */
export interface SoftState {
  readonly lead: string;
  readonly raftState: StateType;
}

/**
 * Membership as persisted with snapshots. `votersOutgoing` is non-empty only in a joint configuration
 * (Raft thesis §4.3); `learnersNext` are voters of the outgoing half that become learners on leaving.
 * All lists are sorted.
 */
export interface ConfState {
  readonly voters: readonly string[];
  readonly learners: readonly string[];
  readonly votersOutgoing: readonly string[];
  readonly learnersNext: readonly string[];
  readonly autoLeave: boolean;
}

export const EMPTY_CONF_STATE: ConfState = { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false };

/**
 * Snapshot METADATA. The core never holds snapshot bytes: the application (driver) owns them, streams
 * them to followers out of band (in chunks of any size), and installs them into its state machine.
 * `index === 0` means "no snapshot".
 */
export interface Snapshot {
  readonly index: number;
  readonly term: number;
  readonly confState: ConfState;
}

export const EMPTY_SNAPSHOT: Snapshot = { index: 0, term: 0, confState: EMPTY_CONF_STATE };

export type ConfChangeType = "AddNode" | "AddLearnerNode" | "RemoveNode";

export interface ConfChangeSingle {
  readonly type: ConfChangeType;
  readonly nodeId: string;
}

/**
 * How a conf change moves between configurations (etcd ConfChangeTransition):
 * - "Auto": a single change is applied directly (one-server change, Raft thesis §4.1); several changes
 *   enter a joint configuration which the leader leaves automatically once it is applied.
 * - "JointImplicit": always joint, left automatically.
 * - "JointExplicit": always joint, the application must propose an empty change to leave.
 */
export type ConfChangeTransition = "Auto" | "JointImplicit" | "JointExplicit";

/**
 * A membership change (etcd ConfChangeV2). An empty `changes` list with transition "Auto" means
 * "leave the joint configuration".
 */
export interface ConfChange {
  readonly transition: ConfChangeTransition;
  readonly changes: readonly ConfChangeSingle[];
  /** Opaque to the core; carried for the application. */
  readonly context?: Uint8Array;
}

/** True if `cc` asks to leave a joint configuration. */
export function confChangeLeavesJoint(cc: ConfChange): boolean {
  return cc.transition === "Auto" && cc.changes.length === 0;
}

/**
 * If `cc` enters a joint configuration, returns whether it is left automatically; otherwise undefined
 * (a one-server change or a leave-joint).
 */
export function confChangeEntersJoint(cc: ConfChange): boolean | undefined {
  if (cc.transition !== "Auto" || cc.changes.length > 1) return cc.transition !== "JointExplicit";
  return undefined;
}

/** A proposal of this node that another node refused for its size (from a {@link MsgPropTooLarge}). */
export interface RefusedProposal {
  readonly context: string;
  readonly size: number;
  readonly limit: number;
}

/** Result of a ReadIndex request: reads may be served once the local applied index reaches `index`. */
export interface ReadState {
  readonly index: number;
  readonly requestCtx: string;
}

// ---------------------------------------------------------------------------------------------------
// Messages. Local messages (never sent on the wire) have term 0 and to === NONE.

interface MsgBase {
  readonly from: string;
  readonly to: string;
  /** 0 for local messages and for MsgProp/MsgReadIndex forwarded to the leader (etcd behaviour). */
  readonly term: number;
}

/** Local: start an election (campaign). */
export interface MsgHup extends MsgBase { readonly type: "MsgHup" }
/** Local: the leader should broadcast heartbeats. */
export interface MsgBeat extends MsgBase { readonly type: "MsgBeat" }
/** Local: the leader should check it heard from a quorum in the last election timeout. */
export interface MsgCheckQuorum extends MsgBase { readonly type: "MsgCheckQuorum" }
/** Local (via reportUnreachable): `from` could not be reached. */
export interface MsgUnreachable extends MsgBase { readonly type: "MsgUnreachable" }
/** Local (via reportSnapshot): outcome of streaming a snapshot to `from`. */
export interface MsgSnapStatus extends MsgBase { readonly type: "MsgSnapStatus"; readonly reject: boolean }
/**
 * A proposal; forwarded by followers to the leader with term 0. `context` (optional, opaque) names the
 * proposal to its proposer: a node that refuses a forwarded proposal for its size answers with a
 * {@link MsgPropTooLarge} carrying it.
 */
export interface MsgProp extends MsgBase { readonly type: "MsgProp"; readonly entries: readonly Entry[]; readonly context?: string }
/**
 * Sent (with term 0, like the forwarded MsgProp it answers) to the proposer of a forwarded MsgProp that
 * was refused because an entry in it is larger than the refusing node's `maxEntryBytes`. Only this drop
 * is reported: it depends on the proposal alone, so every copy of a duplicated MsgProp meets it and the
 * proposer may treat it as definite. Drops that depend on timing (no leader, a transfer in progress)
 * are not reported, since another copy of the same MsgProp may still be appended.
 */
export interface MsgPropTooLarge extends MsgBase {
  readonly type: "MsgPropTooLarge";
  /** The refused MsgProp's context. */
  readonly context: string;
  /** Payload bytes of the refused entry, and the refusing node's limit. */
  readonly size: number;
  readonly limit: number;
}
export interface MsgApp extends MsgBase {
  readonly type: "MsgApp";
  /** Index and term of the entry preceding `entries`. */
  readonly index: number;
  readonly logTerm: number;
  readonly entries: readonly Entry[];
  readonly commit: number;
}
export interface MsgAppResp extends MsgBase {
  readonly type: "MsgAppResp";
  /** On success the follower's last matching index; on reject the rejected `MsgApp.index`. */
  readonly index: number;
  readonly reject: boolean;
  /** On reject: the follower's guess of the last index that may match (etcd findConflictByTerm). */
  readonly rejectHint: number;
  /** On reject: the follower's term at `rejectHint` (0 if unknown). */
  readonly logTerm: number;
}
export interface MsgVote extends MsgBase {
  readonly type: "MsgVote" | "MsgPreVote";
  readonly index: number;
  readonly logTerm: number;
  /** Campaign triggered by leadership transfer: bypasses the leader lease (etcd campaignTransfer). */
  readonly transfer: boolean;
}
export interface MsgVoteResp extends MsgBase { readonly type: "MsgVoteResp" | "MsgPreVoteResp"; readonly reject: boolean }
/**
 * Install a snapshot. Carries only metadata: the leader's driver streams the bytes separately and the
 * follower's driver steps this message only after it holds the complete snapshot data.
 */
export interface MsgSnap extends MsgBase { readonly type: "MsgSnap"; readonly snapshot: Snapshot }
export interface MsgHeartbeat extends MsgBase {
  readonly type: "MsgHeartbeat";
  readonly commit: number;
  /** ReadIndex context being confirmed ("" if none). */
  readonly context: string;
}
export interface MsgHeartbeatResp extends MsgBase { readonly type: "MsgHeartbeatResp"; readonly context: string }
/** Ask the leader (`to`) to transfer leadership to `from` (the transferee), as in etcd. */
export interface MsgTransferLeader extends MsgBase { readonly type: "MsgTransferLeader" }
/** Tells the transferee to campaign immediately (Raft thesis §3.10). */
export interface MsgTimeoutNow extends MsgBase { readonly type: "MsgTimeoutNow" }
export interface MsgReadIndex extends MsgBase { readonly type: "MsgReadIndex"; readonly context: string }
export interface MsgReadIndexResp extends MsgBase {
  readonly type: "MsgReadIndexResp";
  readonly index: number;
  readonly context: string;
}

export type Message =
  | MsgHup | MsgBeat | MsgCheckQuorum | MsgUnreachable | MsgSnapStatus | MsgProp | MsgPropTooLarge | MsgApp | MsgAppResp
  | MsgVote | MsgVoteResp | MsgSnap | MsgHeartbeat | MsgHeartbeatResp | MsgTransferLeader | MsgTimeoutNow
  | MsgReadIndex | MsgReadIndexResp;

export type MessageType = Message["type"];

/** Messages that only ever originate locally and must never be accepted from the network. */
export function isLocalMsg(t: MessageType): boolean {
  return t === "MsgHup" || t === "MsgBeat" || t === "MsgCheckQuorum" || t === "MsgUnreachable" || t === "MsgSnapStatus";
}

/** Responses: stepping one from a node outside the configuration is refused. */
export function isResponseMsg(t: MessageType): boolean {
  return t === "MsgAppResp" || t === "MsgVoteResp" || t === "MsgPreVoteResp" || t === "MsgHeartbeatResp" ||
    t === "MsgReadIndexResp" || t === "MsgUnreachable" || t === "MsgSnapStatus";
}

/** Payload size used for flow control (maxSizePerMsg, uncommitted limit): data bytes of an entry. */
export function entryPayloadSize(e: Entry): number {
  if (e.type === "Normal") return e.data.length;
  return 16 + 40 * e.change.changes.length + (e.change.context?.length ?? 0);
}

/** Keeps a prefix of `ents` whose total payload is at most `maxSize`, but always at least one entry. */
export function limitSize(ents: readonly Entry[], maxSize: number): readonly Entry[] {
  if (ents.length === 0) return ents;
  let size = entryPayloadSize(ents[0]!);
  let limit = 1;
  for (; limit < ents.length; limit++) {
    size += entryPayloadSize(ents[limit]!);
    if (size > maxSize) break;
  }
  return limit === ents.length ? ents : ents.slice(0, limit);
}

/** Sorted copy of ids using code-unit order (deterministic, locale-independent). */
export function sortedIds(ids: Iterable<string>): string[] {
  return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
