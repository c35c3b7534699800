/**
 * KV write and transaction shapes (Consul's api.KVOp, api.NodeOp, api.ServiceOp and api.CheckOp verbs,
 * structs.TxnOp, structs.TxnResult and structs.TxnError, v1.8). Values are raw bytes here; the HTTP
 * layer maps base64 on the wire.
 */
import type { Uint64 } from "../lib/index.ts";
import type { HealthCheck, Node, NodeService } from "./catalog.ts";
import type { DirEntry } from "./kv.ts";
import type { Unindexed } from "./requests.ts";

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

/** The verbs of Node, Service and Check operations (api.NodeOp, api.ServiceOp, api.CheckOp: the same five). */
export type TxnCatalogVerb = "set" | "cas" | "get" | "delete" | "delete-cas";

/**
 * A Node operation (structs.TxnNodeOp). `get` finds the node by `Node.ID` when it is set, else by name;
 * the other verbs use the name. `Index` is the compare index of `cas` (0: only if absent) and
 * `delete-cas` (Consul carries it as Node.ModifyIndex).
 */
export interface TxnNodeOp {
  readonly Verb: TxnCatalogVerb;
  readonly Node: Unindexed<Node>;
  readonly Index?: Uint64;
}

/**
 * A Service operation (structs.TxnServiceOp): the instance `Service.ID` on node `Node`. For `set` and
 * `cas` `Service` is the whole registration (the store fills defaults as for a catalog register); the
 * other verbs only use its ID. `Index` as for TxnNodeOp (Consul's Service.ModifyIndex).
 */
export interface TxnServiceOp {
  readonly Verb: TxnCatalogVerb;
  readonly Node: string;
  readonly Service: Partial<Unindexed<NodeService>> & { readonly ID: string };
  readonly Index?: Uint64;
}

/**
 * A Check operation (structs.TxnCheckOp): check `Check.CheckID` on node `Check.Node`. For `set` and
 * `cas` `Check` is the whole check (Status "" becomes critical; ServiceName and ServiceTags come from
 * the service); the other verbs only use Node and CheckID. `Index` as for TxnNodeOp.
 */
export interface TxnCheckOp {
  readonly Verb: TxnCatalogVerb;
  readonly Check: Partial<Unindexed<HealthCheck>> & { readonly Node: string; readonly CheckID: string };
  readonly Index?: Uint64;
}

/** A transaction operation (structs.TxnOp): exactly one of KV, Node, Service or Check. */
export type TxnOp =
  | { readonly KV: TxnKVOp; readonly Node?: undefined; readonly Service?: undefined; readonly Check?: undefined }
  | { readonly Node: TxnNodeOp; readonly KV?: undefined; readonly Service?: undefined; readonly Check?: undefined }
  | { readonly Service: TxnServiceOp; readonly KV?: undefined; readonly Node?: undefined; readonly Check?: undefined }
  | { readonly Check: TxnCheckOp; readonly KV?: undefined; readonly Node?: undefined; readonly Service?: undefined };

/**
 * One result of a transaction (structs.TxnResult: one of its fields is set). For KV write verbs
 * `KV.Value` is null (Consul blanks it); reads keep it. Catalog results are the stored objects, after
 * the write for set and cas.
 */
export type TxnResult =
  | { readonly KV: DirEntry; readonly Node?: undefined; readonly Service?: undefined; readonly Check?: undefined }
  | { readonly Node: Node; readonly KV?: undefined; readonly Service?: undefined; readonly Check?: undefined }
  | { readonly Service: NodeService; readonly KV?: undefined; readonly Node?: undefined; readonly Check?: undefined }
  | { readonly Check: HealthCheck; readonly KV?: undefined; readonly Node?: undefined; readonly Service?: undefined };

/** Why an operation of a transaction failed; `OpIndex` is its position in the request. */
export interface TxnError {
  readonly OpIndex: number;
  readonly What: string;
}
