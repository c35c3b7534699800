/**
 * The replicated state store: applies commands at Raft indexes, answers queries (queries.ts) and
 * wakes blocking queries (watch.ts). Single-threaded: apply is synchronous, so a query never sees a
 * half-applied command.
 */
import type { ConfigEntry } from "../model/index.ts";
import type { Clock } from "../platform/index.ts";
import { deregister, ensureRegistration } from "./catalog_write.ts";
import type { StateCommand, StateResult } from "./commands.ts";
import {
  casConfigEntry,
  deleteConfigEntry,
  deleteIntention,
  setCaConfig,
  setCaRoots,
  setConfigEntry,
  upsertIntention,
} from "./connect_write.ts";
import { coordinateBatchUpdate } from "./coordinate_write.ts";
import { deleteFederationState, upsertFederationState } from "./federation_state_write.ts";
import {
  aclBootstrap, deleteAclAuthMethod, deleteAclBindingRule, deleteAclPolicy, deleteAclRole, deleteAclToken, setAclAuthMethod, setAclBindingRule, setAclPolicy,
  setAclRole, setAclToken,
} from "./acl_write.ts";
import { kvCas, kvDelete, kvDeleteCas, kvDeleteTree, kvLock, kvSet, kvUnlock, reapTombstones } from "./kv_write.ts";
import { LockDelays } from "./lock_delay.ts";
import { deletePreparedQueryChecked, setAutopilotConfig, setPreparedQuery } from "./prepared_query_write.ts";
import { createSession, destroySession } from "./session_write.ts";
import { RestoreStaging, type StagedRestoreInfo } from "./restore_staging.ts";
import { restoreTables, snapshotTables, snapshotTablesInSlices } from "./snapshot.ts";
import { Tables } from "./tables.ts";
import { runTxnOps } from "./txn.ts";
import { StateError, Tx } from "./tx.ts";
import { WatchHub } from "./watch.ts";

/** What a store needs from its server. */
export interface StateStoreOptions {
  /** Time source for lock-delays (this server's own view; never used by apply). */
  readonly clock: Clock;
  /**
   * Called after a committed write that left a KV tombstone, with its Raft index (Consul's
   * TombstoneGC.Hint); the leader's tombstone GC later proposes a `tombstone-reap`.
   */
  readonly onTombstone?: (index: number) => void;
  /**
   * Called after a `restore` (or a staged restore's commit) replaced the whole state, with its Raft
   * index: a leader's duties must start over on the new state (Consul re-runs establishLeadership).
   */
  readonly onRestored?: (index: number) => void;
  /**
   * Called after a committed write that put keys under lock-delay (a session invalidated while holding
   * them), with its Raft index, and on a restore that cleared the delays this server had. For logs only.
   */
  readonly onLockDelays?: (change: LockDelayChange) => void;
  /**
   * Checks a config-entry write against all stored entries at apply time (Consul validates the graph
   * inside the state store transaction, so concurrent writes cannot together form a cycle or a
   * protocol mismatch). Returns the refusal message, or undefined to accept. Must be deterministic:
   * every server runs it on the same log. Without it, entries are stored unchecked.
   */
  readonly checkConfigEntries?: (entries: readonly ConfigEntry[], change: ConfigEntryChange) => string | undefined;
}

/** What onLockDelays reports. */
export type LockDelayChange =
  | { readonly op: "start"; readonly index: number; readonly keys: readonly (readonly [string, number])[] }
  | { readonly op: "clear"; readonly index: number; readonly dropped: number };

/** A config-entry write as the graph check sees it. */
export type ConfigEntryChange =
  | { readonly op: "set"; readonly entry: ConfigEntry }
  | { readonly op: "delete"; readonly kind: string; readonly name: string };

const OK: StateResult = { type: "ok" };
const kvResult = (ok: boolean): StateResult => ({ type: "kv", ok });
const casResult = (ok: boolean): StateResult => ({ type: "cas", ok });

/**
 * One server's copy of the replicated state. Read it with the query functions (catalog*, health*,
 * kv*, session*, configEntry*, intention*, caRoots); change it only through `apply` (via the Raft log) or `restore`.
 */
export class StateStore {
  /** @internal The tables; queries read them, only apply and restore change them. */
  db = new Tables();
  /** @internal Blocking-query registry. */
  readonly hub = new WatchHub((fn) => void this.opts.clock.setTimer(0, fn));
  private last = 0;
  private readonly delays: LockDelays;
  private readonly staging = new RestoreStaging();

  constructor(private readonly opts: StateStoreOptions) {
    this.delays = new LockDelays(opts.clock);
  }

  /** Raft index of the last applied command or restored snapshot (0 when empty). */
  lastIndex(): number {
    return this.last;
  }

  /**
   * Applies `cmd` at Raft index `index` and returns its result. Deterministic given the state and the
   * command. A rejected command changes nothing and yields `{type: "error"}`; apply itself never throws.
   * Watches fire (and lock-delays start) only after the change is complete.
   */
  apply(index: number, cmd: StateCommand): StateResult {
    if (index > this.last) this.last = index;
    if (cmd.type === "restore") return this.restoreCommand(index, cmd.data);
    if (cmd.type === "restore-stage") return this.stage(index, cmd);
    const tx = new Tx(this.db, index);
    let result: StateResult;
    try {
      result = this.dispatch(tx, cmd);
    } catch (e) {
      tx.rollback();
      return { type: "error", error: e instanceof StateError ? e.message : `internal error: ${String(e instanceof Error ? e.message : e)}` };
    }
    if (result.type === "txn" && result.Errors) {
      tx.rollback();
      return result;
    }
    for (const [key, ms] of tx.lockDelays) this.delays.set(key, ms);
    if (tx.lockDelays.length) this.opts.onLockDelays?.({ op: "start", index, keys: tx.lockDelays });
    this.hub.fire(tx.topics, tx.kvChanged);
    if (tx.tombstoned) this.opts.onTombstone?.(index);
    return result;
  }

  /** Records that a log entry at `index` was applied without a command (an undecodable entry). */
  skip(index: number): void {
    if (index > this.last) this.last = index;
  }

  private dispatch(tx: Tx, cmd: StateCommand): StateResult {
    switch (cmd.type) {
      case "register":
        ensureRegistration(tx, cmd.req);
        return OK;
      case "deregister":
        deregister(tx, cmd.req);
        return OK;
      case "session":
        if (cmd.op === "create") return { type: "session", id: createSession(tx, cmd.session) };
        destroySession(tx, cmd.id);
        return OK;
      case "tombstone-reap":
        reapTombstones(tx, cmd.reapIndex);
        return OK;
      case "txn": {
        const { Results, Errors } = runTxnOps(tx, cmd.ops);
        return Errors.length ? { type: "txn", Results: null, Errors } : { type: "txn", Results, Errors: null };
      }
      case "kv":
        return this.kv(tx, cmd);
      case "config-entry": {
        const refusal = this.opts.checkConfigEntries?.(
          [...this.db.configEntries.values()],
          cmd.op === "delete" ? { op: "delete", kind: cmd.kind, name: cmd.name } : { op: "set", entry: cmd.entry },
        );
        if (refusal !== undefined) throw new StateError(refusal);
        if (cmd.op === "cas") return casResult(casConfigEntry(tx, cmd.entry, cmd.index));
        if (cmd.op === "set") setConfigEntry(tx, cmd.entry);
        else deleteConfigEntry(tx, cmd.kind, cmd.name);
        return OK;
      }
      case "intention":
        if (cmd.op === "upsert") upsertIntention(tx, cmd.intention);
        else deleteIntention(tx, cmd.id);
        return OK;
      case "ca":
        if (cmd.op === "set-roots") return casResult(setCaRoots(tx, cmd.roots, cmd.index, cmd.config));
        setCaConfig(tx, cmd.config);
        return OK;
      case "prepared-query":
        if (cmd.op === "delete") deletePreparedQueryChecked(tx, cmd.id);
        else setPreparedQuery(tx, cmd.op, cmd.query);
        return OK;
      case "coordinate-batch":
        coordinateBatchUpdate(tx, cmd.updates);
        return OK;
      case "autopilot": {
        const wrote = setAutopilotConfig(tx, cmd.config, cmd.cas);
        return cmd.cas === undefined ? OK : casResult(wrote);
      }
      case "federation-state": {
        const wrote = cmd.op === "upsert" ? upsertFederationState(tx, cmd.state, cmd.cas) : deleteFederationState(tx, cmd.datacenter, cmd.cas);
        return cmd.cas === undefined ? OK : casResult(wrote);
      }
      case "acl-token": {
        if (cmd.op === "delete") {
          for (const id of cmd.accessorIds) deleteAclToken(tx, id);
          return OK;
        }
        let all = true;
        for (const t of cmd.tokens) all = setAclToken(tx, t, cmd) && all;
        return cmd.cas ? casResult(all) : OK;
      }
      case "acl-bootstrap":
        aclBootstrap(tx, cmd.token, cmd.resetIndex);
        return OK;
      case "acl-policy":
        if (cmd.op === "delete") for (const id of cmd.ids) deleteAclPolicy(tx, id);
        else for (const p of cmd.policies) setAclPolicy(tx, p);
        return OK;
      case "acl-role":
        if (cmd.op === "delete") for (const id of cmd.ids) deleteAclRole(tx, id);
        else for (const r of cmd.roles) setAclRole(tx, r, cmd.allowMissingLinks);
        return OK;
      case "acl-auth-method":
        if (cmd.op === "delete") deleteAclAuthMethod(tx, cmd.name);
        else setAclAuthMethod(tx, cmd.method);
        return OK;
      case "acl-binding-rule":
        if (cmd.op === "delete") deleteAclBindingRule(tx, cmd.id);
        else setAclBindingRule(tx, cmd.rule);
        return OK;
      default:
        throw new StateError(`unknown command type ${JSON.stringify((cmd as { type: unknown }).type)}`);
    }
  }

  private kv(tx: Tx, cmd: Extract<StateCommand, { type: "kv" }>): StateResult {
    const e = cmd.entry;
    switch (cmd.op) {
      case "set":
        kvSet(tx, e);
        return kvResult(true);
      case "cas":
        return kvResult(kvCas(tx, e) !== undefined);
      case "lock":
        return kvResult(kvLock(tx, e) !== undefined);
      case "unlock":
        return kvResult(kvUnlock(tx, e) !== undefined);
      case "delete":
        kvDelete(tx, e.Key);
        return kvResult(true);
      case "delete-cas":
        return kvResult(kvDeleteCas(tx, e.Key, e.ModifyIndex ?? 0));
      case "delete-tree":
        kvDeleteTree(tx, e.Key);
        return kvResult(true);
      default:
        throw new StateError(`Invalid KVS operation '${String((cmd as { op: unknown }).op)}'`);
    }
  }

  /** A `restore-stage` command: chunks wait in the staging area; a commit applies them as `restore` does. */
  private stage(index: number, cmd: Extract<StateCommand, { type: "restore-stage" }>): StateResult {
    try {
      switch (cmd.op) {
        case "begin":
          this.staging.begin(index, cmd);
          return OK;
        case "chunk":
          this.staging.chunk(index, cmd);
          return OK;
        case "abort":
          this.staging.abort(cmd.id);
          return OK;
        case "commit":
          return this.restoreCommand(index, this.staging.take(cmd.id));
      }
    } catch (e) {
      if (e instanceof StateError) return { type: "error", error: e.message };
      throw e;
    }
  }

  /** The restore being staged, if any (the leader aborts one that stops making progress). */
  stagedRestore(): StagedRestoreInfo | undefined {
    return this.staging.info();
  }

  /** The `restore` command: like restore(), but the store is now at the command's own index. */
  private restoreCommand(index: number, data: Uint8Array): StateResult {
    let db: Tables;
    try {
      db = restoreTables(data).db;
    } catch (e) {
      return { type: "error", error: e instanceof Error ? e.message : String(e) };
    }
    this.replace(db, index);
    this.opts.onRestored?.(index);
    return OK;
  }

  private replace(db: Tables, lastIndex: number): void {
    this.db = db;
    this.last = lastIndex;
    const dropped = this.delays.clear();
    if (dropped) this.opts.onLockDelays?.({ op: "clear", index: lastIndex, dropped });
    this.hub.fireAll();
  }

  /** Milliseconds left of `key`'s lock-delay on this server; 0 when a lock may be proposed. */
  lockDelayRemainingMs(key: string): number {
    return this.delays.remainingMs(key);
  }

  /**
   * Serialises every table, the index table and tombstones; the same state always gives the same bytes.
   * The user's snapshot (`/v1/snapshot`): without a staged restore.
   */
  snapshot(): Uint8Array {
    return snapshotTables(this.db, this.last);
  }

  /** The Raft snapshot of this replica: `snapshot()` plus any staged restore, which `restore` brings back. */
  replicaSnapshot(): Uint8Array {
    return snapshotTables(this.db, this.last, { restoreStaging: this.staging.toJson(), lockDelays: this.delays.running() });
  }

  /**
   * replicaSnapshot()'s bytes as of this call, in parts, encoded in slices with `pause()` awaited
   * between them; the store takes writes meanwhile (see snapshotTablesInSlices).
   */
  replicaSnapshotInSlices(pause: () => Promise<void>): Promise<Uint8Array[]> {
    return snapshotTablesInSlices(this.db, this.last, { restoreStaging: this.staging.toJson(), lockDelays: this.delays.running() }, pause);
  }

  /** snapshot()'s bytes as of this call, in parts, encoded like replicaSnapshotInSlices. */
  snapshotInSlices(pause: () => Promise<void>): Promise<Uint8Array[]> {
    return snapshotTablesInSlices(this.db, this.last, {}, pause);
  }

  /**
   * Replaces the whole state with a snapshot's and wakes every blocking query. A replica snapshot also
   * brings back its staged restore and its running lock-delays (each starting again from now, see
   * lock_delay.ts); the delays this server had are dropped. Throws on a malformed snapshot, leaving the
   * state as it was.
   */
  restore(data: Uint8Array): void {
    const { db, lastIndex, restoreStaging, lockDelays } = restoreTables(data);
    this.staging.load(restoreStaging);
    this.replace(db, lastIndex);
    for (const [key, ms] of lockDelays) this.delays.set(key, ms);
    if (lockDelays.length) this.opts.onLockDelays?.({ op: "start", index: lastIndex, keys: lockDelays });
  }
}

/** Creates an empty state store. */
export function createStateStore(opts: StateStoreOptions): StateStore {
  return new StateStore(opts);
}
