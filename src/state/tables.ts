/**
 * The store's tables and their secondary indexes (Consul's memdb schema for nodes, services, checks,
 * sessions, session_checks, kvs, tombstones, config-entries, connect-intentions, connect-ca-roots,
 * connect-ca-config, prepared-queries, autopilot-config, coordinates, federation-states and index). Raw
 * operations here keep every index in step and do nothing else: no Raft indexes, no watches, no undo
 * (tx.ts adds those).
 *
 * Keys follow memdb's indexers: node names, service IDs, check IDs, service names and session IDs are
 * compared case-insensitively (lowercase keys), as are config entry kind/name, intention IDs and the
 * intention source/destination tuple; KV keys and CA root IDs exactly. Compound keys join parts with "\0",
 * so they sort like memdb's null-terminated compound indexes.
 */
import type {
  AutopilotConfig, CAConfiguration, CARoot, ConfigEntry, CoordinateEntry, DirEntry, FederationState, HealthCheck, Intention, Node, NodeService, PreparedQuery,
  Session,
} from "../model/index.ts";
import { AclTables } from "./acl_tables.ts";
import { SortedKeys } from "./sorted_keys.ts";

/** A service instance as stored: the node name it was registered under and the service itself. */
export interface StoredService {
  readonly node: string;
  readonly svc: NodeService;
}

/** memdb's lowercase indexers. */
export const lower = (s: string): string => s.toLowerCase();
/** A compound key (memdb's null-terminated CompoundIndex order). */
export const pair = (a: string, b: string): string => `${a}\0${b}`;

/** A config entry's table key: pair(lower kind, lower name) (memdb's config-entries "id" index). */
export const configEntryKey = (kind: string, name: string): string => pair(lower(kind), lower(name));

/** An intention's source/destination key, lowercase (memdb's "source_destination" index). */
export function intentionTupleKey(x: Intention): string {
  return [x.SourceNS, x.SourceName, x.DestinationNS, x.DestinationName].map(lower).join("\0");
}

/** The service name a Connect query for it finds this instance under, if any (memdb's "connect" index). */
export function connectName(svc: NodeService): string | undefined {
  if (svc.Kind === "connect-proxy") return svc.Proxy.DestinationServiceName || undefined;
  if (svc.Connect.Native) return svc.Service;
  return undefined;
}

function addTo<V>(m: Map<string, Map<string, V>>, k: string, sub: string, v: V): void {
  let inner = m.get(k);
  if (!inner) m.set(k, (inner = new Map()));
  inner.set(sub, v);
}

function removeFrom<V>(m: Map<string, Map<string, V>>, k: string, sub: string): void {
  const inner = m.get(k);
  if (inner && inner.delete(sub) && inner.size === 0) m.delete(k);
}

function addSet(m: Map<string, Set<string>>, k: string, v: string): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}

function removeSet(m: Map<string, Set<string>>, k: string, v: string): void {
  const s = m.get(k);
  if (s && s.delete(v) && s.size === 0) m.delete(k);
}

/**
 * The KV and tombstone tables as of one moment, readable while writes go on (copy-on-write by key):
 * the keys in order then, and for each key written since, the value it had then (undefined: absent).
 * Rows are never changed in place (writes replace them; tx.ts's undo relies on that too), so a row
 * read through the pin is the row of that moment.
 */
export class KvPin {
  /** Keys written since the pin -> their entry at the pin. */
  readonly kvBefore = new Map<string, DirEntry | undefined>();
  /** Tombstone keys written since the pin -> their deletion index at the pin. */
  readonly tombstonesBefore = new Map<string, number | undefined>();

  constructor(
    private readonly db: Tables,
    /** KV keys at the pin, sorted, in chunks (SortedKeys.frozen). */
    readonly kvKeys: readonly (readonly string[])[],
    /** Tombstone keys at the pin, sorted, in chunks. */
    readonly tombstoneKeys: readonly (readonly string[])[],
    /** Stops recording; the pin must not be read afterwards. */
    readonly release: () => void,
  ) {}

  /** The entry of a key of `kvKeys` at the pin. */
  kv(key: string): DirEntry {
    return (this.kvBefore.has(key) ? this.kvBefore.get(key) : this.db.kvs.get(key))!;
  }

  /** The deletion index of a key of `tombstoneKeys` at the pin. */
  tombstone(key: string): number {
    return (this.tombstonesBefore.has(key) ? this.tombstonesBefore.get(key) : this.db.tombstones.get(key))!;
  }
}

/** All tables of one state; `db` of a StateStore. */
export class Tables {
  /** lower(node name) -> node. */
  readonly nodes = new Map<string, Node>();
  /** lower(node ID) -> lower(node name). */
  readonly nodeIds = new Map<string, string>();
  /** lower(node) -> lower(service ID) -> instance. */
  readonly services = new Map<string, Map<string, StoredService>>();
  /** lower(service name) -> pair(lower node, lower service ID) -> instance. */
  readonly servicesByName = new Map<string, Map<string, StoredService>>();
  /** kind ("" for typical) -> pair(lower node, lower service ID) -> instance. */
  readonly servicesByKind = new Map<string, Map<string, StoredService>>();
  /**
   * Service name as registered (exact) -> its instance count and, per tag, the instances carrying it:
   * `/v1/catalog/services` without a node-meta filter reads this instead of scanning every instance.
   */
  readonly serviceTags = new Map<string, { instances: number; readonly tags: Map<string, number> }>();
  /** lower(connect destination name) -> pair(lower node, lower service ID) -> instance. */
  readonly servicesByConnect = new Map<string, Map<string, StoredService>>();
  /** lower(node) -> lower(check ID) -> check. */
  readonly checks = new Map<string, Map<string, HealthCheck>>();
  /** lower(service name) -> pair(lower node, lower check ID) -> check. */
  readonly checksByService = new Map<string, Map<string, HealthCheck>>();
  /** status -> pair(lower node, lower check ID) -> check. */
  readonly checksByStatus = new Map<string, Map<string, HealthCheck>>();
  /** lower(session ID) -> session. */
  readonly sessions = new Map<string, Session>();
  /** lower(node) -> lower(session IDs). */
  readonly sessionsByNode = new Map<string, Set<string>>();
  /** pair(lower node, lower check ID) -> lower(session IDs) tied to that check. */
  readonly sessionChecks = new Map<string, Set<string>>();
  readonly kvs = new Map<string, DirEntry>();
  readonly kvKeys = new SortedKeys();
  /** lower(session ID) -> keys it holds. */
  readonly kvBySession = new Map<string, Set<string>>();
  /** KV key -> Raft index of its deletion. */
  readonly tombstones = new Map<string, number>();
  readonly tombstoneKeys = new SortedKeys();
  /** configEntryKey(kind, name) -> entry. */
  readonly configEntries = new Map<string, ConfigEntry>();
  /** lower(intention ID) -> intention. */
  readonly intentions = new Map<string, Intention>();
  /** intentionTupleKey -> lower(intention ID). */
  readonly intentionsByTuple = new Map<string, string>();
  /** CA root ID (exact) -> root. */
  caRoots = new Map<string, CARoot>();
  /** The CA configuration (a one-row table), null until set. */
  caConfig: CAConfiguration | null = null;
  /** lower(prepared query ID) -> query. */
  readonly preparedQueries = new Map<string, PreparedQuery>();
  /** lower(non-empty query name) -> lower(query ID) (memdb's unique "name" index). */
  readonly preparedQueryNames = new Map<string, string>();
  /** lower(template name, "" too) -> lower(query ID), templates only (memdb's unique "template" index). */
  readonly preparedQueryTemplates = new Map<string, string>();
  /** lower(session ID) -> lower(IDs of the queries bound to it) (memdb's "session" index). */
  readonly preparedQueriesBySession = new Map<string, Set<string>>();
  /** The autopilot configuration (a one-row table), null until set. */
  autopilotConfig: AutopilotConfig | null = null;
  /** lower(node) -> lower(segment) -> LAN coordinate (memdb's coordinates "id" and "node" indexes). */
  readonly coordinates = new Map<string, Map<string, CoordinateEntry>>();
  /** lower(datacenter) -> federation state (memdb's federation-states "id" index). */
  readonly federationStates = new Map<string, FederationState>();
  /** The ACL tables (acl_tables.ts). */
  readonly acl = new AclTables();
  /** Consul's "index" table: name -> highest Raft index that changed it. */
  readonly indexes = new Map<string, number>();
  private sortedNodes: string[] | null = null;

  /** Node keys in memdb order (lowercase name). */
  nodeKeys(): readonly string[] {
    return (this.sortedNodes ??= [...this.nodes.keys()].sort());
  }

  putNode(n: Node): void {
    const key = lower(n.Node);
    const old = this.nodes.get(key);
    if (old?.ID) this.nodeIds.delete(lower(old.ID));
    if (!old) this.sortedNodes = null;
    this.nodes.set(key, n);
    if (n.ID) this.nodeIds.set(lower(n.ID), key);
  }

  deleteNode(key: string): void {
    const old = this.nodes.get(key);
    if (!old) return;
    if (old.ID && this.nodeIds.get(lower(old.ID)) === key) this.nodeIds.delete(lower(old.ID));
    this.nodes.delete(key);
    this.sortedNodes = null;
  }

  putService(s: StoredService): void {
    const nk = lower(s.node);
    const id = lower(s.svc.ID);
    const old = this.services.get(nk)?.get(id);
    if (old) this.deleteService(nk, id);
    addTo(this.services, nk, id, s);
    addTo(this.servicesByName, lower(s.svc.Service), pair(nk, id), s);
    addTo(this.servicesByKind, s.svc.Kind ?? "", pair(nk, id), s);
    const c = connectName(s.svc);
    if (c !== undefined) addTo(this.servicesByConnect, lower(c), pair(nk, id), s);
    let named = this.serviceTags.get(s.svc.Service);
    if (!named) this.serviceTags.set(s.svc.Service, (named = { instances: 0, tags: new Map() }));
    named.instances++;
    for (const t of new Set(s.svc.Tags ?? [])) named.tags.set(t, (named.tags.get(t) ?? 0) + 1);
  }

  deleteService(nk: string, id: string): void {
    const old = this.services.get(nk)?.get(id);
    if (!old) return;
    removeFrom(this.services, nk, id);
    removeFrom(this.servicesByName, lower(old.svc.Service), pair(nk, id));
    removeFrom(this.servicesByKind, old.svc.Kind ?? "", pair(nk, id));
    const c = connectName(old.svc);
    if (c !== undefined) removeFrom(this.servicesByConnect, lower(c), pair(nk, id));
    const named = this.serviceTags.get(old.svc.Service)!;
    if (--named.instances === 0) this.serviceTags.delete(old.svc.Service);
    else {
      for (const t of new Set(old.svc.Tags ?? [])) {
        const n = named.tags.get(t)! - 1;
        if (n === 0) named.tags.delete(t);
        else named.tags.set(t, n);
      }
    }
  }

  putCheck(c: HealthCheck): void {
    const nk = lower(c.Node);
    const id = lower(c.CheckID);
    if (this.checks.get(nk)?.has(id)) this.deleteCheck(nk, id);
    addTo(this.checks, nk, id, c);
    if (c.ServiceName) addTo(this.checksByService, lower(c.ServiceName), pair(nk, id), c);
    addTo(this.checksByStatus, c.Status, pair(nk, id), c);
  }

  deleteCheck(nk: string, id: string): void {
    const old = this.checks.get(nk)?.get(id);
    if (!old) return;
    removeFrom(this.checks, nk, id);
    if (old.ServiceName) removeFrom(this.checksByService, lower(old.ServiceName), pair(nk, id));
    removeFrom(this.checksByStatus, old.Status, pair(nk, id));
  }

  putSession(s: Session): void {
    const id = lower(s.ID);
    if (this.sessions.has(id)) this.deleteSession(id);
    this.sessions.set(id, s);
    const nk = lower(s.Node);
    addSet(this.sessionsByNode, nk, id);
    for (const c of sessionCheckIds(s)) addSet(this.sessionChecks, pair(nk, lower(c)), id);
  }

  deleteSession(id: string): void {
    const old = this.sessions.get(id);
    if (!old) return;
    this.sessions.delete(id);
    const nk = lower(old.Node);
    removeSet(this.sessionsByNode, nk, id);
    for (const c of sessionCheckIds(old)) removeSet(this.sessionChecks, pair(nk, lower(c)), id);
  }

  /**
   * Pins the KV and tombstone tables as they are now (see KvPin) until `pin.release()`. Every write
   * while a pin is held costs one map lookup per pin; the snapshot encoder holds one for its run.
   */
  pinKv(): KvPin {
    const pin = new KvPin(this, this.kvKeys.frozen(), this.tombstoneKeys.frozen(), () => this.pins.delete(pin));
    this.pins.add(pin);
    return pin;
  }

  private readonly pins = new Set<KvPin>();

  private keepKvForPins(key: string): void {
    for (const p of this.pins) if (!p.kvBefore.has(key)) p.kvBefore.set(key, this.kvs.get(key));
  }

  private keepTombstoneForPins(key: string): void {
    for (const p of this.pins) if (!p.tombstonesBefore.has(key)) p.tombstonesBefore.set(key, this.tombstones.get(key));
  }

  putKV(e: DirEntry): void {
    if (this.pins.size) this.keepKvForPins(e.Key);
    const old = this.kvs.get(e.Key);
    if (old?.Session) removeSet(this.kvBySession, lower(old.Session), e.Key);
    if (!old) this.kvKeys.add(e.Key);
    this.kvs.set(e.Key, e);
    if (e.Session) addSet(this.kvBySession, lower(e.Session), e.Key);
  }

  deleteKV(key: string): void {
    if (this.pins.size) this.keepKvForPins(key);
    const old = this.kvs.get(key);
    if (!old) return;
    if (old.Session) removeSet(this.kvBySession, lower(old.Session), key);
    this.kvs.delete(key);
    this.kvKeys.delete(key);
  }

  putTombstone(key: string, index: number): void {
    if (this.pins.size) this.keepTombstoneForPins(key);
    if (!this.tombstones.has(key)) this.tombstoneKeys.add(key);
    this.tombstones.set(key, index);
  }

  deleteTombstone(key: string): void {
    if (this.pins.size) this.keepTombstoneForPins(key);
    if (this.tombstones.delete(key)) this.tombstoneKeys.delete(key);
  }

  putIntention(x: Intention): void {
    const id = lower(x.ID);
    this.deleteIntention(id);
    this.intentions.set(id, x);
    this.intentionsByTuple.set(intentionTupleKey(x), id);
  }

  deleteIntention(id: string): void {
    const old = this.intentions.get(id);
    if (!old) return;
    this.intentions.delete(id);
    const tk = intentionTupleKey(old);
    if (this.intentionsByTuple.get(tk) === id) this.intentionsByTuple.delete(tk);
  }
}

/** Stores a coordinate under (lower Node, lower Segment), replacing the one there. */
export function putCoordinate(db: Tables, c: CoordinateEntry): void {
  addTo(db.coordinates, lower(c.Node), lower(c.Segment), c);
}

/** Removes the coordinate at (node key, segment key); missing: no-op. */
export function deleteCoordinate(db: Tables, nk: string, sk: string): void {
  removeFrom(db.coordinates, nk, sk);
}

/** Prepared-query rows and their indexes (a method set of Tables kept apart for size). */
export function putPreparedQuery(db: Tables, q: PreparedQuery): void {
  const id = lower(q.ID);
  deletePreparedQuery(db, id);
  db.preparedQueries.set(id, q);
  if (q.Name !== "") db.preparedQueryNames.set(lower(q.Name), id);
  if (q.Template.Type !== "") db.preparedQueryTemplates.set(lower(q.Name), id);
  if (q.Session !== "") addSet(db.preparedQueriesBySession, lower(q.Session), id);
}

/** Removes a prepared query (by lowercase ID) from the table and its indexes; missing: no-op. */
export function deletePreparedQuery(db: Tables, id: string): void {
  const old = db.preparedQueries.get(id);
  if (!old) return;
  db.preparedQueries.delete(id);
  if (old.Name !== "" && db.preparedQueryNames.get(lower(old.Name)) === id) db.preparedQueryNames.delete(lower(old.Name));
  if (old.Template.Type !== "" && db.preparedQueryTemplates.get(lower(old.Name)) === id) db.preparedQueryTemplates.delete(lower(old.Name));
  if (old.Session !== "") removeSet(db.preparedQueriesBySession, lower(old.Session), id);
}

/** The check IDs a session is tied to: its node checks and its service checks (Consul's CheckIDs). */
export function sessionCheckIds(s: Session): string[] {
  const ids = [...s.NodeChecks];
  for (const sc of s.ServiceChecks ?? []) ids.push(sc.ID);
  return ids;
}
