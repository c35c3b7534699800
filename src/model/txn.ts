/**
 * KV write and transaction shapes (Consul's api.KVOp verbs, api.KVTxnOp, structs.TxnResult and
 * structs.TxnError, v1.8). Values are raw bytes here; the HTTP layer maps base64 on the wire.
 */
import type { Uint64 } from "../lib/index.ts";
import type { DirEntry } from "./kv.ts";

/** Verbs of a single-key write through `/v1/kv` (the subset of api.KVOp the KV endpoint proposes). */
export type KVWriteVerb = "set" | "cas" | "lock" | "unlock" | "delete" | "delete-cas" | "delete-tree";

/** Every verb a KV operation of `/v1/txn` may carry (api.KVOp). */
export type TxnKVVerb =
  | KVWriteVerb
  | "get"
  | "get-tree"
  | "check-index"
  | "check-session"
  | "check-not-exists";

/** Txn verbs that only read: a transaction made of these alone needs no Raft round (Consul's Txn.Read). */
export const TXN_READ_VERBS: ReadonlySet<TxnKVVerb> = new Set<TxnKVVerb>(["get", "get-tree", "check-index", "check-session", "check-not-exists"]);

/** Consul's default cap on operations in one transaction (`txn_max_req_len` aside). */
export const TXN_MAX_OPS = 64;

/**
 * The entry a KV write carries (Consul's KVSRequest.DirEnt). `ModifyIndex` is the compare index for
 * `cas` and `delete-cas`; `Session` is required for `lock` and `unlock` and ignored by `set`.
 * `Key` is the prefix for `delete-tree`.
 */
export interface KVWrite {
  readonly Key: string;
  readonly Flags?: Uint64;
  readonly Value?: Uint8Array | null;
  readonly Session?: string;
  /** Compared with a stored index; one past 2^53 (a bigint) never matches, as no stored index gets there. */
  readonly ModifyIndex?: Uint64;
}

/** One KV operation of a transaction, in Consul's api.KVTxnOp shape (`Index` is the compare index). */
export interface TxnKVOp {
  readonly Verb: TxnKVVerb;
  readonly Key: string;
  readonly Value?: Uint8Array | null;
  readonly Flags?: Uint64;
  readonly Index?: Uint64;
  readonly Session?: string;
}

/** A transaction operation. Only KV operations are supported (Consul also has Node/Service/Check). */
export interface TxnOp {
  readonly KV: TxnKVOp;
}

/** One result of a transaction. For write verbs `KV.Value` is null (Consul blanks it); reads keep it. */
export interface TxnResult {
  readonly KV: DirEntry;
}

/** Why an operation of a transaction failed; `OpIndex` is its position in the request. */
export interface TxnError {
  readonly OpIndex: number;
  readonly What: string;
}
