/**
 * Types shared by the SWIM core: member states, gossip messages (a discriminated union), stream
 * messages for push-pull state sync, and the events the core reports upward.
 */

/** A member's state as memberlist tracks it (state.go: StateAlive, StateSuspect, StateDead, StateLeft). */
export type MemberState = "alive" | "suspect" | "dead" | "left";

/** A member as seen by the local node. `meta` is opaque (the serf layer puts encoded tags here). */
export interface Member {
  readonly name: string;
  /** Opaque transport address ("host:port"); the core never parses it. */
  readonly addr: string;
  readonly meta: Uint8Array;
  readonly incarnation: number;
  readonly state: MemberState;
  /** Time (ms, caller's clock) of the last state change. */
  readonly stateChange: number;
}

/** Direct probe. `target` names the node the sender believes it is pinging; a mismatch is ignored. */
export interface PingMsg { readonly type: "ping"; readonly seq: number; readonly target: string; readonly sourceNode: string; readonly sourceAddr: string }
/** Ask the receiver to probe `target` on the sender's behalf and relay the ack (or a nack if `nack`). */
export interface IndirectPingMsg {
  readonly type: "indirect-ping";
  readonly seq: number;
  readonly target: string;
  readonly targetAddr: string;
  readonly nack: boolean;
  readonly sourceNode: string;
  readonly sourceAddr: string;
}
/**
 * Answer to a ping. `payload` is the responder's ping delegate's bytes (serf: its network coordinate),
 * absent when empty: older nodes send none, and relayed (indirect) acks never carry one (memberlist).
 */
export interface AckMsg { readonly type: "ack"; readonly seq: number; readonly payload?: Uint8Array }
/** Lifeguard: an intermediary could not reach the target in time (so the prober is not the slow one). */
export interface NackMsg { readonly type: "nack"; readonly seq: number }
export interface SuspectMsg { readonly type: "suspect"; readonly incarnation: number; readonly node: string; readonly from: string }
export interface AliveMsg { readonly type: "alive"; readonly incarnation: number; readonly node: string; readonly addr: string; readonly meta: Uint8Array }
/** `from === node` means the node left gracefully. */
export interface DeadMsg { readonly type: "dead"; readonly incarnation: number; readonly node: string; readonly from: string }
/** Opaque payload for a layer above (serf user events, queries). `key` names it for queue invalidation. */
export interface UserMsg { readonly type: "user"; readonly key: string; readonly payload: Uint8Array }

/** Everything that travels in a gossip packet. */
export type Message = PingMsg | IndirectPingMsg | AckMsg | NackMsg | SuspectMsg | AliveMsg | DeadMsg | UserMsg;
export type MessageType = Message["type"];

/** One member's entry in a push-pull exchange. */
export interface PushNodeState {
  readonly name: string;
  readonly addr: string;
  readonly meta: Uint8Array;
  readonly incarnation: number;
  readonly state: MemberState;
}

/**
 * Full-state exchange over a stream (memberlist pushPullMsg). The initiator sends `reply: false`;
 * the receiver answers with its own state, `reply: true`. `userState` is the layer above's (a StateDelegate's).
 */
export interface PushPullMsg {
  readonly type: "push-pull";
  readonly reply: boolean;
  readonly join: boolean;
  readonly nodes: readonly PushNodeState[];
  readonly userState: Uint8Array;
}
/**
 * memberlist's TCP ping (sendPingAndWaitForAck): a probe that got no ack by its timeout also pings
 * the target over a stream, which the target answers with a stream-ack on the same stream. A second,
 * independent path: a stream is a fresh connection where packets may share a broken one.
 */
export interface StreamPingMsg {
  readonly type: "stream-ping";
  readonly seq: number;
  /** The member meant; "" for any. */
  readonly target: string;
}
export interface StreamAckMsg {
  readonly type: "stream-ack";
  readonly seq: number;
}
export type StreamMessage = PushPullMsg | StreamPingMsg | StreamAckMsg;

/**
 * Failure-detection moments an operator wants in the log (memberlist logs each of them): the driver
 * logs them with memberlist's wording. They change nothing; the events above carry the state.
 */
export type MemberNotice =
  /** A probe of `node` got no ack, direct or indirect, within its interval: `node` is now suspect here. */
  | { readonly type: "probe-failed"; readonly node: string }
  /** A probe of `node` was answered only over a stream: its packets are not getting through. */
  | { readonly type: "probe-stream-only"; readonly node: string }
  /** `node`'s suspicion ran out unrefuted: it is declared failed, with `confirmations` other accusers. */
  | { readonly type: "suspect-timeout"; readonly node: string; readonly confirmations: number }
  /** This node was accused (`accusation`) by `from` (empty when unknown) and refuted with a new incarnation. */
  | { readonly type: "refute"; readonly accusation: "suspect" | "dead" | "alive"; readonly from: string };

/** Membership events for the layer above, in the order they happened. */
export type MemberEvent =
  | { readonly type: "join"; readonly member: Member }
  | { readonly type: "update"; readonly member: Member }
  /** Left gracefully (dead-by-self). */
  | { readonly type: "leave"; readonly member: Member }
  /** Declared dead by failure detection. */
  | { readonly type: "failed"; readonly member: Member }
  /** A user message arrived (every copy: the layer above deduplicates and decides whether to re-broadcast). */
  | { readonly type: "user"; readonly key: string; readonly payload: Uint8Array }
  /**
   * A push-pull brought the peer's non-empty `userState` (memberlist Delegate.MergeRemoteState), after the
   * membership it carried was merged; `join` is the exchange's join flag. Only with a StateDelegate.
   */
  | { readonly type: "remote-state"; readonly state: Uint8Array; readonly join: boolean };

/**
 * Restricts which members process a query (serf filterNode / filterTag): all filters must pass.
 * `tag`'s `expr` is a regular expression searched (not anchored) in the member's tag value.
 */
export type QueryFilter =
  | { readonly type: "nodes"; readonly nodes: readonly string[] }
  | { readonly type: "tag"; readonly tag: string; readonly expr: string };

/**
 * A serf query (messageQuery): gossiped to every member, Lamport-stamped; `(ltime, id)` identifies it.
 * Members that pass the filters answer directly to `sourceAddr`. `timeoutMs` is how long the
 * originator listens; a member may answer until that long after it first saw the query.
 */
export interface QueryMsg {
  readonly ltime: number;
  readonly id: number;
  readonly sourceNode: string;
  /** The originator's gossip address (opaque to the core), where responses go. */
  readonly sourceAddr: string;
  /** Ask every member that passes the filters for a delivery ack (serf queryFlagAck). */
  readonly requestAck: boolean;
  /** Members do not re-gossip it (serf queryFlagNoBroadcast). */
  readonly noBroadcast: boolean;
  readonly timeoutMs: number;
  readonly filters: readonly QueryFilter[];
  readonly name: string;
  readonly payload: Uint8Array;
}

/** A member's answer to a query (messageQueryResponse), sent straight to the originator. */
export interface QueryResponseMsg {
  readonly ltime: number;
  readonly id: number;
  readonly from: string;
  /** A delivery ack (no payload) rather than a response. */
  readonly ack: boolean;
  readonly payload: Uint8Array;
}
