/**
 * The replicated log's state commands and their results (Consul's FSM message types for the
 * catalog, KV, sessions, transactions and tombstone reaping).
 *
 * Everything non-deterministic (session IDs, "now") is decided by the proposer and carried in the
 * command: applying a command is a pure function of the state and the command. The one exception is
 * the KV lock-delay, which each server keeps in memory from its own clock (see Consul's delay.go):
 * apply never consults it; a proposer checks it before proposing (`lockDelayRejection`).
 */
import type {
  DeregisterRequest,
  KVWrite,
  KVWriteVerb,
  RegisterRequest,
  Session,
  TxnError,
  TxnOp,
  TxnResult,
  Unindexed,
} from "../model/index.ts";

/** A session to create: all of Session but the Raft indexes; `ID` is chosen by the proposer. */
export type SessionCreate = Unindexed<Session>;

/**
 * A state command, discriminated by `type`:
 * - `register` / `deregister`: catalog writes (Consul's RegisterRequestType / DeregisterRequestType).
 * - `kv`: one KV write (KVSRequestType) with the verb in `op`.
 * - `session`: create (with a precomputed ID) or destroy (SessionRequestType).
 * - `txn`: KV operations applied atomically (TxnRequestType): all succeed or nothing changes.
 * - `tombstone-reap`: drops KV tombstones with an index <= `reapIndex` (TombstoneRequestType).
 * - `restore`: replaces the whole state with a snapshot's (`StateStore.snapshot()` bytes) on every
 *   server: the user-driven `/v1/snapshot` restore. Indexes inside the tables come from the snapshot.
 */
export type StateCommand =
  | { readonly type: "register"; readonly req: RegisterRequest }
  | { readonly type: "deregister"; readonly req: DeregisterRequest }
  | { readonly type: "kv"; readonly op: KVWriteVerb; readonly entry: KVWrite }
  | { readonly type: "session"; readonly op: "create"; readonly session: SessionCreate }
  | { readonly type: "session"; readonly op: "destroy"; readonly id: string }
  | { readonly type: "txn"; readonly ops: readonly TxnOp[] }
  | { readonly type: "tombstone-reap"; readonly reapIndex: number }
  | { readonly type: "restore"; readonly data: Uint8Array };

/** The `type` values of StateCommand. */
export type StateCommandType = StateCommand["type"];

/**
 * The result of applying a command, discriminated by `type`:
 * - `ok`: register, deregister, session destroy, tombstone-reap and restore succeeded.
 * - `kv`: a KV write; `ok` is false when a cas/delete-cas index did not match, a lock is held by
 *   another session, or an unlock was not by the holder (set, delete, delete-tree are always true).
 * - `session`: the created session's ID.
 * - `txn`: Consul's TxnResponse shape: on success `Results` (one per op that returns an entry, in
 *   order; `Errors` null), on failure `Errors` (every failing op; `Results` null) and no change.
 * - `error`: the command was rejected and changed nothing; `error` is Consul's message where Consul
 *   has one ("Missing node registration", "invalid session \"x\"", ...). Undecodable log entries
 *   also yield this.
 */
export type StateResult =
  | { readonly type: "ok" }
  | { readonly type: "kv"; readonly ok: boolean }
  | { readonly type: "session"; readonly id: string }
  | { readonly type: "txn"; readonly Results: readonly TxnResult[] | null; readonly Errors: readonly TxnError[] | null }
  | { readonly type: "error"; readonly error: string };

/** Thrown by decodeCommand for bytes that are not a valid StateCommand; the message says what is wrong. */
export class StateCommandError extends Error {
  override readonly name = "StateCommandError";
}
