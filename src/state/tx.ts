/**
 * A write transaction over the tables: every change records its undo and the watch topics it fires.
 * `rollback` restores the tables exactly; the store fires topics and sets lock-delays only on commit,
 * so an aborted command is invisible (memdb's Txn.Abort).
 */
import type {
  AutopilotConfig, CAConfiguration, CARoot, ConfigEntry, CoordinateEntry, DirEntry, FederationState, HealthCheck, Intention, Node, PreparedQuery, Session,
} from "../model/index.ts";
import {
  configEntryKey, connectName, deleteCoordinate, deletePreparedQuery, lower, putCoordinate, putPreparedQuery, type StoredService, type Tables,
} from "./tables.ts";
import { topic } from "./topics.ts";

/** A command-level failure: the store rolls back and answers `{type: "error", error: message}`. */
export class StateError extends Error {
  override readonly name = "StateError";
}

/** One command's write transaction over `db` at Raft index `idx`. */
export class Tx {
  private readonly undo: (() => void)[] = [];
  /** Watch topics fired by the changes so far. */
  readonly topics = new Set<string>();
  /** KV keys changed so far (their exact and prefix watchers fire on commit). */
  readonly kvChanged: string[] = [];
  /** Keys to put under lock-delay on commit, with the delay in milliseconds. */
  readonly lockDelays: [string, number][] = [];
  /** Whether a tombstone was written (the tombstone GC gets a hint on commit). */
  tombstoned = false;

  constructor(
    readonly db: Tables,
    /** The Raft index of the command. */
    readonly idx: number,
  ) {}

  rollback(): void {
    for (let i = this.undo.length - 1; i >= 0; i--) this.undo[i]!();
    this.undo.length = 0;
  }

  /** Raises index-table entry `name` to at least `value` (Consul's indexUpdateMaxTxn). */
  bumpIndex(name: string, value = this.idx): void {
    const db = this.db;
    const old = db.indexes.get(name);
    this.topics.add(topic.index(name));
    if (old !== undefined && old >= value) return;
    db.indexes.set(name, value);
    this.undo.push(() => (old === undefined ? db.indexes.delete(name) : db.indexes.set(name, old)));
  }

  /** Removes index-table entry `name` (the per-service entry when its last instance goes). */
  dropIndex(name: string): void {
    const db = this.db;
    const old = db.indexes.get(name);
    if (old === undefined) return;
    db.indexes.delete(name);
    this.topics.add(topic.index(name));
    this.undo.push(() => db.indexes.set(name, old));
  }

  putNode(n: Node): void {
    const db = this.db;
    const key = lower(n.Node);
    const old = db.nodes.get(key);
    db.putNode(n);
    this.undo.push(() => (old ? db.putNode(old) : db.deleteNode(key)));
    this.topics.add(topic.node(key));
  }

  deleteNode(key: string): void {
    const db = this.db;
    const old = db.nodes.get(key);
    if (!old) return;
    db.deleteNode(key);
    this.undo.push(() => db.putNode(old));
    this.topics.add(topic.node(key));
  }

  putService(s: StoredService): void {
    const db = this.db;
    const nk = lower(s.node);
    const id = lower(s.svc.ID);
    const old = db.services.get(nk)?.get(id);
    db.putService(s);
    this.undo.push(() => (old ? db.putService(old) : db.deleteService(nk, id)));
    this.serviceTopics(nk, s);
    if (old) this.serviceTopics(nk, old);
  }

  deleteService(nk: string, id: string): void {
    const db = this.db;
    const old = db.services.get(nk)?.get(id);
    if (!old) return;
    db.deleteService(nk, id);
    this.undo.push(() => db.putService(old));
    this.serviceTopics(nk, old);
  }

  private serviceTopics(nk: string, s: StoredService): void {
    this.topics.add(topic.nodeServices(nk));
    const c = connectName(s.svc);
    if (c !== undefined) this.topics.add(topic.connect(lower(c)));
  }

  putCheck(c: HealthCheck): void {
    const db = this.db;
    const nk = lower(c.Node);
    const id = lower(c.CheckID);
    const old = db.checks.get(nk)?.get(id);
    db.putCheck(c);
    this.undo.push(() => (old ? db.putCheck(old) : db.deleteCheck(nk, id)));
    this.checkTopics(nk, c);
    if (old) this.checkTopics(nk, old);
  }

  deleteCheck(nk: string, id: string): void {
    const db = this.db;
    const old = db.checks.get(nk)?.get(id);
    if (!old) return;
    db.deleteCheck(nk, id);
    this.undo.push(() => db.putCheck(old));
    this.checkTopics(nk, old);
  }

  private checkTopics(nk: string, c: HealthCheck): void {
    this.topics.add(topic.nodeChecks(nk));
    this.topics.add(topic.status(c.Status));
    if (c.ServiceName) this.topics.add(topic.serviceChecks(lower(c.ServiceName)));
  }

  putSession(s: Session): void {
    const db = this.db;
    const id = lower(s.ID);
    const old = db.sessions.get(id);
    db.putSession(s);
    this.undo.push(() => (old ? db.putSession(old) : db.deleteSession(id)));
    this.topics.add(topic.session(id));
    this.topics.add(topic.nodeSessions(lower(s.Node)));
  }

  deleteSession(id: string): void {
    const db = this.db;
    const old = db.sessions.get(id);
    if (!old) return;
    db.deleteSession(id);
    this.undo.push(() => db.putSession(old));
    this.topics.add(topic.session(id));
    this.topics.add(topic.nodeSessions(lower(old.Node)));
  }

  putKV(e: DirEntry): void {
    const db = this.db;
    const old = db.kvs.get(e.Key);
    db.putKV(e);
    this.undo.push(() => (old ? db.putKV(old) : db.deleteKV(e.Key)));
    this.kvChanged.push(e.Key);
  }

  deleteKV(key: string): void {
    const db = this.db;
    const old = db.kvs.get(key);
    if (!old) return;
    db.deleteKV(key);
    this.undo.push(() => db.putKV(old));
    this.kvChanged.push(key);
  }

  putTombstone(key: string, index: number): void {
    const db = this.db;
    const old = db.tombstones.get(key);
    db.putTombstone(key, index);
    this.tombstoned = true;
    this.undo.push(() => (old === undefined ? db.deleteTombstone(key) : db.putTombstone(key, old)));
  }

  deleteTombstone(key: string): void {
    const db = this.db;
    const old = db.tombstones.get(key);
    if (old === undefined) return;
    db.deleteTombstone(key);
    this.undo.push(() => db.putTombstone(key, old));
  }

  putConfigEntry(e: ConfigEntry): void {
    const db = this.db;
    const key = configEntryKey(e.Kind, e.Name);
    const old = db.configEntries.get(key);
    db.configEntries.set(key, e);
    this.undo.push(() => (old ? db.configEntries.set(key, old) : db.configEntries.delete(key)));
    this.topics.add(topic.configEntry(key));
  }

  deleteConfigEntry(key: string): void {
    const db = this.db;
    const old = db.configEntries.get(key);
    if (!old) return;
    db.configEntries.delete(key);
    this.undo.push(() => db.configEntries.set(key, old));
    this.topics.add(topic.configEntry(key));
  }

  putIntention(x: Intention): void {
    const db = this.db;
    const id = lower(x.ID);
    const old = db.intentions.get(id);
    db.putIntention(x);
    this.undo.push(() => (old ? db.putIntention(old) : db.deleteIntention(id)));
    this.topics.add(topic.intention(id));
  }

  deleteIntention(id: string): void {
    const db = this.db;
    const old = db.intentions.get(id);
    if (!old) return;
    db.deleteIntention(id);
    this.undo.push(() => db.putIntention(old));
    this.topics.add(topic.intention(id));
  }

  /**
   * Puts (`value`) or deletes (undefined) the row at `key` of ACL table `table` through its put/delete
   * (which keep the secondary indexes), recording the undo. Fires the table's index topic.
   */
  aclChange<T>(put: (v: T) => void, del: (key: string) => void, rows: ReadonlyMap<string, T>, key: string, value: T | undefined, indexName: string): void {
    const old = rows.get(key);
    if (value === undefined) {
      if (old === undefined) return;
      del(key);
    } else put(value);
    this.undo.push(() => (old === undefined ? del(key) : put(old)));
    this.topics.add(topic.index(indexName));
  }

  /** Replaces the whole CA roots table. */
  replaceCaRoots(roots: ReadonlyMap<string, CARoot>): void {
    const db = this.db;
    const old = db.caRoots;
    db.caRoots = new Map(roots);
    this.undo.push(() => (db.caRoots = old));
  }

  setCaConfig(c: CAConfiguration): void {
    const db = this.db;
    const old = db.caConfig;
    db.caConfig = c;
    this.undo.push(() => (db.caConfig = old));
  }

  putPreparedQuery(q: PreparedQuery): void {
    const db = this.db;
    const id = lower(q.ID);
    const old = db.preparedQueries.get(id);
    putPreparedQuery(db, q);
    this.undo.push(() => (old ? putPreparedQuery(db, old) : deletePreparedQuery(db, id)));
  }

  deletePreparedQuery(id: string): void {
    const db = this.db;
    const old = db.preparedQueries.get(id);
    if (!old) return;
    deletePreparedQuery(db, id);
    this.undo.push(() => putPreparedQuery(db, old));
  }

  setAutopilotConfig(c: AutopilotConfig): void {
    const db = this.db;
    const old = db.autopilotConfig;
    db.autopilotConfig = c;
    this.undo.push(() => (db.autopilotConfig = old));
  }

  /** Stores a federation state under lower(Datacenter), replacing the one there (readers watch the table index). */
  putFederationState(f: FederationState): void {
    const m = this.db.federationStates;
    const key = lower(f.Datacenter);
    const old = m.get(key);
    m.set(key, f);
    this.undo.push(() => (old ? m.set(key, old) : m.delete(key)));
  }

  /** Removes the federation state at a lowercase datacenter key; missing: no-op. */
  deleteFederationState(key: string): void {
    const m = this.db.federationStates;
    const old = m.get(key);
    if (!old) return;
    m.delete(key);
    this.undo.push(() => m.set(key, old));
  }

  /** Upserts a node's coordinate in its segment (no watch topic of its own: readers watch the coordinates index). */
  putCoordinate(c: CoordinateEntry): void {
    const db = this.db;
    const nk = lower(c.Node), sk = lower(c.Segment);
    const old = db.coordinates.get(nk)?.get(sk);
    putCoordinate(db, c);
    this.undo.push(() => (old ? putCoordinate(db, old) : deleteCoordinate(db, nk, sk)));
  }

  /** Removes a coordinate by node and segment keys; missing: no-op. */
  deleteCoordinate(nk: string, sk: string): void {
    const db = this.db;
    const old = db.coordinates.get(nk)?.get(sk);
    if (!old) return;
    deleteCoordinate(db, nk, sk);
    this.undo.push(() => putCoordinate(db, old));
  }
}
