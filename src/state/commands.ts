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
  AclAuthMethod,
  AclBindingRule,
  AclPolicy,
  AclRole,
  AclTokenRecord,
  AutopilotConfig,
  CAConfiguration,
  CARoot,
  ConfigEntry,
  CoordinateEntry,
  DeregisterRequest,
  FederationStateWrite,
  Intention,
  KVWrite,
  PreparedQuery,
  KVWriteVerb,
  RegisterRequest,
  Session,
  TxnError,
  TxnOp,
  TxnResult,
  Unindexed,
} from "../model/index.ts";

/** A prepared query to write: all of PreparedQuery but the Raft indexes; `ID` is chosen by the proposer. */
export type PreparedQueryWrite = Omit<PreparedQuery, "CreateIndex" | "ModifyIndex">;

/** ACL objects as commands carry them: complete but for the Raft indexes (the proposer chose IDs, times and hashes). */
export type AclTokenWrite = Omit<AclTokenRecord, "CreateIndex" | "ModifyIndex"> & { readonly ModifyIndex?: number };
export type AclPolicyWrite = Omit<AclPolicy, "CreateIndex" | "ModifyIndex">;
export type AclRoleWrite = Omit<AclRole, "CreateIndex" | "ModifyIndex">;
export type AclAuthMethodWrite = Omit<AclAuthMethod, "CreateIndex" | "ModifyIndex">;
export type AclBindingRuleWrite = Omit<AclBindingRule, "CreateIndex" | "ModifyIndex">;

/** A session to create: all of Session but the Raft indexes; `ID` is chosen by the proposer. */
export type SessionCreate = Unindexed<Session>;

/**
 * A state command, discriminated by `type`:
 * - `register` / `deregister`: catalog writes (Consul's RegisterRequestType / DeregisterRequestType).
 * - `kv`: one KV write (KVSRequestType) with the verb in `op`.
 * - `session`: create (with a precomputed ID) or destroy (SessionRequestType).
 * - `txn`: KV, Node, Service and Check operations applied atomically (TxnRequestType), in order, each
 *   seeing the writes before it: all succeed or nothing changes.
 * - `tombstone-reap`: drops KV tombstones with an index <= `reapIndex` (TombstoneRequestType).
 * - `config-entry`: Consul's ConfigEntryRequestType. `set` upserts (CreateIndex kept on update,
 *   ModifyIndex = the Raft index); `cas` does so only if `index` is 0 and no entry exists, or `index`
 *   equals the stored ModifyIndex (ConfigEntry.CAS); `delete` removes kind/name (missing: no-op).
 *   Kind and name are matched case-insensitively (memdb's lowercase id index). Graph validation
 *   (protocols, cycles) is the proposer's: apply stores what it is given.
 * - `intention`: Consul's IntentionRequestType. `upsert` keeps CreateIndex and CreatedAt of an existing
 *   intention with the same ID, sets ModifyIndex, forces a null Meta to {}, and fails with "duplicate
 *   intention found: ..." when another ID has the same source and destination (case-insensitive).
 *   `delete` removes by ID (missing: no-op). Precedence, Hash and UpdatedAt are the proposer's.
 * - `ca`: Consul's ConnectCARequestType. `set-config` stores the CA configuration (CreateIndex kept,
 *   ModifyIndex = the Raft index; an empty ClusterID keeps the stored one). `set-roots` replaces every
 *   root atomically only if the roots table index equals `index` (0 before the first set), and then
 *   also stores `config` if given (CASetRoots / CAOpSetRootsAndConfig); exactly one root must be Active.
 * - `prepared-query`: Consul's PreparedQueryRequestType. `create` stores a query under a new ID (the
 *   proposer's), `update` replaces an existing one (CreateIndex kept), `delete` removes one; update and
 *   delete of a missing ID fail ("Cannot modify non-existent prepared query: 'id'"). Name and template
 *   conflicts and the bound session are checked with Consul's texts; templates are compiled (and refused)
 *   by the proposer. Destroying a session deletes the queries bound to it.
 * - `autopilot`: Consul's AutopilotRequestType. `set-config` stores the configuration (CreateIndex kept,
 *   ModifyIndex = the Raft index); with `cas`, only if `cas` is 0 and none is stored or `cas` equals the
 *   stored ModifyIndex (AutopilotCASConfig).
 * - `coordinate-batch`: Consul's CoordinateBatchUpdateType: upserts LAN coordinates by (Node, Segment),
 *   skipping updates with a non-finite component and those for nodes the catalog does not have; the
 *   coordinates index moves regardless. A node's coordinates go when the node is deregistered.
 * - `federation-state`: Consul's FederationStateRequestType. `upsert` stores a datacenter's state
 *   (CreateIndex kept when one exists, ModifyIndex = the Raft index, a PrimaryModifyIndex of 0 set to the
 *   Raft index: a write in the primary; "missing datacenter on federation state" when Datacenter is "");
 *   `delete` removes one (missing: no-op). Datacenters are matched case-insensitively (memdb's lowercase id
 *   index). With `cas`, an upsert writes only if `cas` is 0 and none exists or `cas` equals the stored
 *   ModifyIndex, and a delete removes only a state whose ModifyIndex equals `cas` (Causeway's addition:
 *   Consul 1.8 has no CAS here). UpdatedAt is the proposer's (FederationState.Apply sets it).
 * - `acl-token`: Consul's ACLTokenSetRequestType / ACLTokenDeleteRequestType, in batches. `set` stores
 *   each token under its AccessorID (a token whose SecretID is taken by another accessor, or whose
 *   accessor exists with another SecretID or auth method, is refused; CreateIndex kept on update); every
 *   policy and role it links must exist unless `allowMissingLinks` (replication); with `cas`, a token is
 *   written only if its `ModifyIndex` is 0 and none exists, or equals the stored one (others are skipped).
 *   `delete` removes tokens by accessor (missing: no-op; the anonymous token: refused).
 * - `acl-bootstrap`: Consul's ACLBootstrapRequestType: stores `token` and marks bootstrap done at this
 *   index, only while bootstrap was never done or `resetIndex` equals the index it was done at.
 * - `acl-policy` / `acl-role`: set (IDs and names unique, names case-insensitively; a role's policies
 *   must exist; the built-in global-management policy keeps its Rules and has no Datacenters) and delete
 *   (missing: no-op; global-management: refused), in batches.
 * - `acl-auth-method` / `acl-binding-rule`: set and delete; deleting a method deletes its binding rules
 *   and the tokens it made; a binding rule's method must exist.
 * - `restore`: replaces the whole state with a snapshot's (`StateStore.snapshot()` bytes) on every
 *   server: the user-driven `/v1/snapshot` restore. Indexes inside the tables come from the snapshot.
 *   Only for snapshots that fit in one Raft entry; servers restore through `restore-stage`.
 * - `restore-stage`: a restore in chunks (restore_staging.ts). `begin` opens restore `id` of `chunks`
 *   chunks, `size` bytes in all, with the SHA-256 `sha256` (lowercase hex), dropping any other staged
 *   restore; `chunk` stores chunk `seq` (0-based); `commit` checks that every chunk arrived and the size
 *   and checksum match, then replaces the whole state as `restore` does, or changes nothing and fails;
 *   `abort` drops the staged chunks. Staged chunks change no table.
 */
export type StateCommand =
  | { readonly type: "register"; readonly req: RegisterRequest }
  | { readonly type: "deregister"; readonly req: DeregisterRequest }
  | { readonly type: "kv"; readonly op: KVWriteVerb; readonly entry: KVWrite }
  | { readonly type: "session"; readonly op: "create"; readonly session: SessionCreate }
  | { readonly type: "session"; readonly op: "destroy"; readonly id: string }
  | { readonly type: "txn"; readonly ops: readonly TxnOp[] }
  | { readonly type: "tombstone-reap"; readonly reapIndex: number }
  | { readonly type: "config-entry"; readonly op: "set"; readonly entry: ConfigEntry }
  | { readonly type: "config-entry"; readonly op: "cas"; readonly entry: ConfigEntry; readonly index: number }
  | { readonly type: "config-entry"; readonly op: "delete"; readonly kind: string; readonly name: string }
  | { readonly type: "intention"; readonly op: "upsert"; readonly intention: Intention }
  | { readonly type: "intention"; readonly op: "delete"; readonly id: string }
  | { readonly type: "ca"; readonly op: "set-config"; readonly config: CAConfiguration }
  | {
    readonly type: "ca";
    readonly op: "set-roots";
    readonly roots: readonly CARoot[];
    readonly config?: CAConfiguration;
    readonly index: number;
  }
  | { readonly type: "prepared-query"; readonly op: "create" | "update"; readonly query: PreparedQueryWrite }
  | { readonly type: "prepared-query"; readonly op: "delete"; readonly id: string }
  | {
    readonly type: "autopilot";
    readonly op: "set-config";
    readonly config: Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex">;
    readonly cas?: number;
  }
  | { readonly type: "coordinate-batch"; readonly updates: readonly CoordinateEntry[] }
  | { readonly type: "federation-state"; readonly op: "upsert"; readonly state: FederationStateWrite; readonly cas?: number }
  | { readonly type: "federation-state"; readonly op: "delete"; readonly datacenter: string; readonly cas?: number }
  | { readonly type: "acl-token"; readonly op: "set"; readonly tokens: readonly AclTokenWrite[]; readonly cas?: boolean; readonly allowMissingLinks?: boolean }
  | { readonly type: "acl-token"; readonly op: "delete"; readonly accessorIds: readonly string[] }
  | { readonly type: "acl-bootstrap"; readonly token: AclTokenWrite; readonly resetIndex: number }
  | { readonly type: "acl-policy"; readonly op: "set"; readonly policies: readonly AclPolicyWrite[] }
  | { readonly type: "acl-policy"; readonly op: "delete"; readonly ids: readonly string[] }
  | { readonly type: "acl-role"; readonly op: "set"; readonly roles: readonly AclRoleWrite[]; readonly allowMissingLinks?: boolean }
  | { readonly type: "acl-role"; readonly op: "delete"; readonly ids: readonly string[] }
  | { readonly type: "acl-auth-method"; readonly op: "set"; readonly method: AclAuthMethodWrite }
  | { readonly type: "acl-auth-method"; readonly op: "delete"; readonly name: string }
  | { readonly type: "acl-binding-rule"; readonly op: "set"; readonly rule: AclBindingRuleWrite }
  | { readonly type: "acl-binding-rule"; readonly op: "delete"; readonly id: string }
  | { readonly type: "restore"; readonly data: Uint8Array }
  | RestoreStageCommand;

/** The `restore-stage` commands (see StateCommand). */
export type RestoreStageCommand =
  | { readonly type: "restore-stage"; readonly op: "begin"; readonly id: string; readonly chunks: number; readonly size: number; readonly sha256: string }
  | { readonly type: "restore-stage"; readonly op: "chunk"; readonly id: string; readonly seq: number; readonly data: Uint8Array }
  | { readonly type: "restore-stage"; readonly op: "commit" | "abort"; readonly id: string };

/** The `type` values of StateCommand. */
export type StateCommandType = StateCommand["type"];

/**
 * The result of applying a command, discriminated by `type`:
 * - `ok`: register, deregister, session destroy, tombstone-reap, restore, restore-stage, config-entry
 *   set/delete, intention upsert/delete, ca set-config, prepared-query, coordinate-batch, and autopilot
 *   set-config and federation-state without `cas` succeeded.
 * - `kv`: a KV write; `ok` is false when a cas/delete-cas index did not match, a lock is held by
 *   another session, or an unlock was not by the holder (set, delete, delete-tree are always true).
 * - `cas`: config-entry cas, ca set-roots, and autopilot set-config and federation-state with `cas`; `ok`
 *   is false when the index did not match (nothing changed).
 * - `session`: the created session's ID.
 * - `txn`: Consul's TxnResponse shape: on success `Results` (one per KV entry or Node, Service or Check
 *   object an op returns, in order; `Errors` null), on failure `Errors` (every failing op; `Results` null)
 *   and no change.
 * - `error`: the command was rejected and changed nothing; `error` is Consul's message where Consul
 *   has one ("Missing node registration", "invalid session \"x\"", ...). Undecodable log entries
 *   also yield this.
 */
export type StateResult =
  | { readonly type: "ok" }
  | { readonly type: "kv"; readonly ok: boolean }
  | { readonly type: "cas"; readonly ok: boolean }
  | { readonly type: "session"; readonly id: string }
  | { readonly type: "txn"; readonly Results: readonly TxnResult[] | null; readonly Errors: readonly TxnError[] | null }
  | { readonly type: "error"; readonly error: string };

/** Thrown by decodeCommand for bytes that are not a valid StateCommand; the message says what is wrong. */
export class StateCommandError extends Error {
  override readonly name = "StateCommandError";
}
