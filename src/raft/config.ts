import type { Rng } from "../platform/index.ts";
import { ConfigError } from "./errors.ts";
import { NO_LIMIT } from "./log.ts";
import type { ReadOnlyOption } from "./read_only.ts";
import type { Storage } from "./storage.ts";

/** Parameters of a Raft node (etcd raft.Config). Times are in ticks. */
export interface Config {
  /** This node's ID; non-empty. */
  readonly id: string;
  /**
   * Ticks without hearing from a leader before a follower campaigns. The actual timeout is drawn
   * uniformly from [electionTick, 2*electionTick) after every state change (Raft §5.2). Must be > heartbeatTick.
   */
  readonly electionTick: number;
  /** Ticks between leader heartbeats. */
  readonly heartbeatTick: number;
  readonly storage: Storage;
  /** Last applied index when restarting (entries up to it are not handed out again). */
  readonly applied?: number;
  /** Maximum payload bytes per MsgApp (at least one entry is always sent). Default: no limit. */
  readonly maxSizePerMsg?: number;
  /** Maximum payload bytes of committedEntries per Ready. Default: no limit. */
  readonly maxCommittedSizePerReady?: number;
  /**
   * Largest payload of one proposed entry (entryPayloadSize). A MsgProp holding a bigger entry is refused
   * with ErrProposalTooLarge wherever it is stepped (the proposing node, a forwarding follower, the
   * leader), so it is never appended, and a refused forwarded one is answered with MsgPropTooLarge.
   * Set it below what the transport carries in one message. Default: no limit.
   */
  readonly maxEntryBytes?: number;
  /** Leader drops proposals once this many uncommitted payload bytes are in its log. Default: no limit. */
  readonly maxUncommittedEntriesSize?: number;
  /** In-flight append window per follower in Replicate state. Required, > 0. */
  readonly maxInflightMsgs: number;
  /** Leader steps down when it has not heard from a quorum for an election timeout (thesis §6.2). */
  readonly checkQuorum?: boolean;
  /** Two-phase election to avoid disruption by partitioned nodes (thesis §9.6). */
  readonly preVote?: boolean;
  /** Default "Safe". "LeaseBased" requires checkQuorum. */
  readonly readOnlyOption?: ReadOnlyOption;
  /** Followers drop proposals instead of forwarding them to the leader. */
  readonly disableProposalForwarding?: boolean;
  /** A leader removed from the configuration steps down when the change is applied (etcd StepDownOnRemoval). */
  readonly stepDownOnRemoval?: boolean;
  /** Randomness for election timeouts; inject `seededRng` for deterministic runs. */
  readonly rng: Rng;
}

/** Config with defaults filled in. */
export type ResolvedConfig = Required<Config>;

/** Validates a Config and fills defaults. Throws ConfigError with a precise message. */
export function validateConfig(c: Config): ResolvedConfig {
  if (typeof c.id !== "string" || c.id === "") throw new ConfigError("cannot use empty string as id");
  const posInt = (name: string, v: number) => {
    if (!Number.isInteger(v) || v <= 0) throw new ConfigError(`${name} must be a positive integer, got ${v}`);
  };
  posInt("heartbeatTick", c.heartbeatTick);
  posInt("electionTick", c.electionTick);
  if (c.electionTick <= c.heartbeatTick) throw new ConfigError("electionTick must be greater than heartbeatTick");
  posInt("maxInflightMsgs", c.maxInflightMsgs);
  if (!c.storage) throw new ConfigError("storage cannot be undefined");
  if (!c.rng) throw new ConfigError("rng cannot be undefined");
  const readOnlyOption = c.readOnlyOption ?? "Safe";
  if (readOnlyOption === "LeaseBased" && !c.checkQuorum) {
    throw new ConfigError("checkQuorum must be enabled when readOnlyOption is LeaseBased");
  }
  for (const [name, v] of [["maxSizePerMsg", c.maxSizePerMsg], ["maxCommittedSizePerReady", c.maxCommittedSizePerReady], ["maxUncommittedEntriesSize", c.maxUncommittedEntriesSize], ["maxEntryBytes", c.maxEntryBytes], ["applied", c.applied]] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new ConfigError(`${name} must be a non-negative integer, got ${v}`);
  }
  return {
    id: c.id,
    electionTick: c.electionTick,
    heartbeatTick: c.heartbeatTick,
    storage: c.storage,
    applied: c.applied ?? 0,
    maxSizePerMsg: c.maxSizePerMsg ?? NO_LIMIT,
    maxCommittedSizePerReady: c.maxCommittedSizePerReady || NO_LIMIT,
    maxUncommittedEntriesSize: c.maxUncommittedEntriesSize || NO_LIMIT,
    maxEntryBytes: c.maxEntryBytes || NO_LIMIT,
    maxInflightMsgs: c.maxInflightMsgs,
    checkQuorum: c.checkQuorum ?? false,
    preVote: c.preVote ?? false,
    readOnlyOption,
    disableProposalForwarding: c.disableProposalForwarding ?? false,
    stepDownOnRemoval: c.stepDownOnRemoval ?? false,
    rng: c.rng,
  };
}
