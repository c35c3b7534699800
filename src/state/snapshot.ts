/**
 * State snapshots: every table, the index table and the tombstones as canonical JSON (sorted keys,
 * rows in key order), so the same state always serialises to the same bytes. KV rows are tuples
 * `[LockIndex, Key, Flags, Value(base64|null), Session, CreateIndex, ModifyIndex]`. The Connect tables
 * (configEntries, intentions, caRoots, caConfig), preparedQueries, autopilotConfig, coordinates and
 * federationStates were added within the same format: a snapshot without them restores them empty.
 * So were the ACL tables (aclAuthMethods, aclBindingRules, aclPolicies, aclRoles, aclTokens), which are
 * written only when not empty, so a state without ACLs serialises as before.
 */
import { parseExact, stringifyExact, type Uint64 } from "../lib/index.ts";
import type {
  AutopilotConfig, CAConfiguration, CARoot, ConfigEntry, CoordinateEntry, DirEntry, FederationState, HealthCheck, Intention, Node, NodeService, PreparedQuery,
  Session,
} from "../model/index.ts";
import { canonicalJson, fromBase64, toBase64 } from "./bytes.ts";
import { makeEntry } from "./kv_write.ts";
import { coordinateEntryShape } from "./codec_coordinate.ts";
import { federationStateShape } from "./codec_federation_state.ts";
import { aclAuthMethodShape, aclBindingRuleShape, aclPolicyShape, aclRoleShape, aclTokenShape } from "./codec_acl.ts";
import type { AclAuthMethod, AclBindingRule, AclPolicy, AclRole, AclTokenRecord } from "../model/index.ts";
import { configEntryKey, intentionTupleKey, type KvPin, lower, putCoordinate, putPreparedQuery, type StoredService, Tables } from "./tables.ts";

const FORMAT = "causeway-state/1";
const enc = new TextEncoder();
const dec = new TextDecoder("utf-8", { fatal: true });

type KvRow = [number, string, Uint64, string | null, string, number, number];

interface SnapshotDoc {
  format: string;
  lastIndex: number;
  nodes: Node[];
  services: { Node: string; Service: NodeService }[];
  checks: HealthCheck[];
  sessions: Session[];
  kvs: KvRow[];
  tombstones: [string, number][];
  indexes: [string, number][];
  configEntries: ConfigEntry[];
  intentions: Intention[];
  caRoots: CARoot[];
  caConfig: CAConfiguration | null;
  preparedQueries: PreparedQuery[];
  autopilotConfig: AutopilotConfig | null;
  coordinates: CoordinateEntry[];
  federationStates: FederationState[];
  restoreStaging?: unknown;
  lockDelays?: [string, number][];
}

/** What only a replica snapshot (Raft's, never a user's) carries besides the tables. */
export interface ReplicaExtras {
  /** A staged restore's JSON (restore_staging.ts). */
  readonly restoreStaging?: unknown;
  /** Running lock-delays as [key, milliseconds left when the snapshot was taken], sorted by key. */
  readonly lockDelays?: readonly (readonly [string, number])[];
}

function sortedValues<V>(m: Map<string, V>): V[] {
  return [...m.keys()].sort().map((k) => m.get(k)!);
}

/**
 * Serialises the tables (see the module doc for the format). A replica snapshot adds `extras` under
 * their own keys (restoreStaging, lockDelays); user snapshots have none.
 */
export function snapshotTables(db: Tables, lastIndex: number, extras: ReplicaExtras = {}): Uint8Array {
  return enc.encode([...snapshotText(captureTables(db, lastIndex, extras))].join(""));
}

/** Text encoded between two pauses of snapshotTablesInSlices (about 5 ms of work here). */
const SLICE_TEXT = 256 * 1024;
/** Rows per piece of snapshotText: KV rows, and rows of the other tables (larger, each canonicalised). */
const KV_ROWS_PER_PIECE = 1024;
const RECORDS_PER_PIECE = 256;

/**
 * snapshotTables' bytes in parts, for a large state: the tables are captured at the call (the KV and
 * tombstone tables pinned, the others as arrays of their rows), then encoded in slices with `pause()`
 * awaited between them, while writes go on. The parts joined are the bytes snapshotTables would have
 * returned at the call.
 */
export async function snapshotTablesInSlices(db: Tables, lastIndex: number, extras: ReplicaExtras, pause: () => Promise<void>): Promise<Uint8Array[]> {
  const parts: Uint8Array[] = [];
  const pieces = snapshotText(captureTables(db, lastIndex, extras));
  try {
    let text: string[] = [];
    let length = 0;
    for (const piece of pieces) {
      text.push(piece);
      length += piece.length;
      if (length >= SLICE_TEXT) {
        parts.push(enc.encode(text.join("")));
        text = [];
        length = 0;
        await pause();
      }
    }
    if (text.length) parts.push(enc.encode(text.join("")));
  } finally {
    pieces.return(undefined); // releases the pin when a pause threw
  }
  return parts;
}

/** The tables at one moment (see snapshotTablesInSlices): rows by reference, KV and tombstones pinned. */
interface TablesCapture {
  readonly acl: readonly (readonly [string, readonly unknown[]])[];
  readonly lastIndex: number;
  readonly extras: ReplicaExtras;
  readonly kv: KvPin;
  readonly autopilotConfig: AutopilotConfig | null;
  readonly caConfig: CAConfiguration | null;
  readonly caRoots: readonly CARoot[];
  readonly checks: readonly HealthCheck[];
  readonly configEntries: readonly ConfigEntry[];
  readonly coordinates: readonly CoordinateEntry[];
  readonly federationStates: readonly FederationState[];
  readonly indexes: readonly [string, number][];
  readonly intentions: readonly Intention[];
  readonly nodes: readonly Node[];
  readonly preparedQueries: readonly PreparedQuery[];
  readonly services: readonly StoredService[];
  readonly sessions: readonly Session[];
}

function captureTables(db: Tables, lastIndex: number, extras: ReplicaExtras): TablesCapture {
  const a = db.acl;
  return {
    // In key order; only the tables with rows (see the module doc).
    acl: ([["aclAuthMethods", sortedValues(a.authMethods)], ["aclBindingRules", sortedValues(a.bindingRules)], ["aclPolicies", sortedValues(a.policies)],
      ["aclRoles", sortedValues(a.roles)], ["aclTokens", sortedValues(a.tokens)]] as const).filter(([, rows]) => rows.length > 0),
    lastIndex,
    extras,
    kv: db.pinKv(),
    autopilotConfig: db.autopilotConfig,
    caConfig: db.caConfig,
    caRoots: sortedValues(db.caRoots),
    checks: sortedValues(db.checks).flatMap((m) => sortedValues(m)),
    configEntries: sortedValues(db.configEntries),
    coordinates: sortedValues(db.coordinates).flatMap((m) => sortedValues(m)),
    federationStates: sortedValues(db.federationStates),
    indexes: [...db.indexes.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
    intentions: sortedValues(db.intentions),
    nodes: db.nodeKeys().map((k) => db.nodes.get(k)!),
    preparedQueries: sortedValues(db.preparedQueries),
    services: sortedValues(db.services).flatMap((m) => sortedValues(m)),
    sessions: sortedValues(db.sessions),
  };
}

/** `[` + rows + `]` in pieces of `per` rows, each piece's rows written by `text`. */
function* arrayPieces<T>(rows: readonly T[], per: number, text: (slice: readonly T[]) => string): Generator<string> {
  yield "[";
  for (let i = 0; i < rows.length; i += per) yield (i > 0 ? "," : "") + text(rows.slice(i, i + per));
}

/** arrayPieces over rows given in chunks (SortedKeys.frozen), about `per` rows a piece. */
function* chunkedArrayPieces<T>(chunks: readonly (readonly T[])[], per: number, text: (slice: readonly T[]) => string): Generator<string> {
  yield "[";
  let first = true;
  let batch: T[] = [];
  for (let c = 0; c < chunks.length; c++) {
    batch.push(...chunks[c]!);
    if (batch.length < per && c + 1 < chunks.length) continue;
    if (batch.length === 0) continue;
    yield (first ? "" : ",") + text(batch);
    first = false;
    batch = [];
  }
}

/** Rows of primitives are canonical as plain JSON; records need canonicalJson. */
const recordsText = <T>(slice: readonly T[]) => slice.map(canonicalJson).join(",");

/**
 * The snapshot document's text (keys in sorted order) in pieces of bounded work; releases the capture's
 * pin when it ends, also when abandoned early (`return()`).
 */
function* snapshotText(c: TablesCapture): Generator<string, void, undefined> {
  const { restoreStaging, lockDelays } = c.extras;
  const records = function* <T>(rows: readonly T[]) {
    yield* arrayPieces(rows, RECORDS_PER_PIECE, recordsText);
    yield "]";
  };
  try {
    yield "{";
    for (const [key, rows] of c.acl) {
      yield `${JSON.stringify(key)}:`;
      yield* records(rows);
      yield ",";
    }
    yield `"autopilotConfig":${canonicalJson(c.autopilotConfig)},"caConfig":${canonicalJson(c.caConfig)},"caRoots":`;
    yield* records(c.caRoots);
    yield `,"checks":`;
    yield* records(c.checks);
    yield `,"configEntries":`;
    yield* records(c.configEntries);
    yield `,"coordinates":`;
    yield* records(c.coordinates);
    yield `,"federationStates":`;
    yield* records(c.federationStates);
    yield `,"format":${JSON.stringify(FORMAT)},"indexes":${JSON.stringify(c.indexes)},"intentions":`;
    yield* records(c.intentions);
    yield `,"kvs":`;
    yield* chunkedArrayPieces(c.kv.kvKeys, KV_ROWS_PER_PIECE, (keys) => {
      const rows: KvRow[] = keys.map((k) => {
        const e = c.kv.kv(k);
        return [e.LockIndex, e.Key, e.Flags, e.Value ? toBase64(e.Value) : null, e.Session ?? "", e.CreateIndex, e.ModifyIndex];
      });
      return stringifyExact(rows).slice(1, -1);
    });
    yield `],"lastIndex":${JSON.stringify(c.lastIndex)}`;
    if (lockDelays !== undefined && lockDelays.length > 0) yield `,"lockDelays":${JSON.stringify(lockDelays)}`;
    yield `,"nodes":`;
    yield* records(c.nodes);
    yield `,"preparedQueries":`;
    yield* records(c.preparedQueries);
    if (restoreStaging !== undefined) yield `,"restoreStaging":${canonicalJson(restoreStaging)}`;
    yield `,"services":`;
    yield* arrayPieces(c.services, RECORDS_PER_PIECE, (slice) => slice.map((s) => canonicalJson({ Node: s.node, Service: s.svc })).join(","));
    yield `],"sessions":`;
    yield* records(c.sessions);
    yield `,"tombstones":`;
    yield* chunkedArrayPieces(c.kv.tombstoneKeys, KV_ROWS_PER_PIECE, (keys) => JSON.stringify(keys.map((k) => [k, c.kv.tombstone(k)])).slice(1, -1));
    yield "]}";
  } finally {
    c.kv.release();
  }
}

function fail(what: string): never {
  throw new Error(`invalid state snapshot: ${what}`);
}

function arr(doc: Record<string, unknown>, k: string, optional = false): unknown[] {
  const v = doc[k];
  if (optional && v === undefined) return [];
  if (!Array.isArray(v)) fail(`${k} must be an array`);
  return v;
}

function rec<T>(v: unknown, where: string, strings: readonly string[]): T {
  if (typeof v !== "object" || v === null || Array.isArray(v)) fail(`${where} must be an object`);
  const o = v as Record<string, unknown>;
  for (const s of strings) if (typeof o[s] !== "string") fail(`${where}.${s} must be a string`);
  for (const n of ["CreateIndex", "ModifyIndex"]) if (n in o && typeof o[n] !== "number") fail(`${where}.${n} must be a number`);
  return v as T;
}

/** A parsed snapshot: fresh tables, and a replica snapshot's extras (checked; absent when none). */
export interface RestoredTables {
  readonly db: Tables;
  readonly lastIndex: number;
  /** That key's raw value (undefined when absent), for the store to load or ignore. */
  readonly restoreStaging: unknown;
  readonly lockDelays: readonly (readonly [string, number])[];
}

/** Parses a snapshot into fresh tables; throws an Error naming the problem on malformed input. */
export function restoreTables(data: Uint8Array): RestoredTables {
  return tablesFromDoc(parseSnapshotDoc(data));
}

/** The top-level keys of a user snapshot document (a replica snapshot adds ReplicaExtras' keys). */
export const SNAPSHOT_KEYS: readonly string[] = [
  "aclAuthMethods", "aclBindingRules", "aclPolicies", "aclRoles", "aclTokens", "autopilotConfig", "caConfig", "caRoots", "checks", "configEntries", "coordinates", "federationStates", "format", "indexes", "intentions", "kvs",
  "lastIndex", "nodes", "preparedQueries", "services", "sessions", "tombstones",
];

/** Parses snapshot bytes into its JSON document, checking the format; throws like restoreTables. */
export function parseSnapshotDoc(data: Uint8Array): Record<string, unknown> {
  let doc: Record<string, unknown>;
  try {
    doc = parseExact(dec.decode(data)) as Record<string, unknown>;
  } catch {
    return fail("not JSON");
  }
  if (typeof doc !== "object" || doc === null || doc.format !== FORMAT) fail(`unknown format (want ${FORMAT})`);
  return doc;
}

/** restoreTables on a parsed document (parseSnapshotDoc). */
export function tablesFromDoc(doc: Record<string, unknown>): RestoredTables {
  if (typeof doc.lastIndex !== "number") fail("lastIndex must be a number");
  const db = new Tables();
  arr(doc, "nodes").forEach((n, i) => db.putNode(rec<Node>(n, `nodes[${i}]`, ["Node", "ID"])));
  arr(doc, "services").forEach((s, i) => {
    const r = rec<{ Node: string; Service: NodeService }>(s, `services[${i}]`, ["Node"]);
    db.putService({ node: r.Node, svc: rec<NodeService>(r.Service, `services[${i}].Service`, ["ID", "Service"]) });
  });
  arr(doc, "checks").forEach((c, i) => db.putCheck(rec<HealthCheck>(c, `checks[${i}]`, ["Node", "CheckID", "Status"])));
  arr(doc, "sessions").forEach((s, i) => {
    const r = rec<Session>(s, `sessions[${i}]`, ["ID", "Node", "Behavior"]);
    if (!Array.isArray(r.NodeChecks)) fail(`sessions[${i}].NodeChecks must be an array`);
    db.putSession(r);
  });
  arr(doc, "kvs").forEach((row, i) => {
    const r = row as KvRow;
    const ok = Array.isArray(r) && r.length === 7 && typeof r[0] === "number" && typeof r[1] === "string" && (typeof r[2] === "number" || typeof r[2] === "bigint") &&
      (r[3] === null || typeof r[3] === "string") && typeof r[4] === "string" && typeof r[5] === "number" && typeof r[6] === "number";
    if (!ok) fail(`kvs[${i}] must be [LockIndex, Key, Flags, Value, Session, CreateIndex, ModifyIndex]`);
    let value: Uint8Array | null = null;
    try {
      value = r[3] === null ? null : fromBase64(r[3]);
    } catch {
      fail(`kvs[${i}] value is not base64`);
    }
    const e: DirEntry = makeEntry({ LockIndex: r[0], Key: r[1], Flags: r[2], Value: value, Session: r[4] }, r[5], r[6]);
    db.putKV(e);
  });
  restoreConnect(doc, db);
  for (const [what, table] of [["tombstones", db.tombstones], ["indexes", db.indexes]] as const) {
    arr(doc, what).forEach((t, i) => {
      if (!Array.isArray(t) || typeof t[0] !== "string" || typeof t[1] !== "number") fail(`${what}[${i}] must be [string, number]`);
      if (what === "tombstones") db.putTombstone(t[0], t[1]);
      else table.set(t[0], t[1]);
    });
  }
  const lockDelays = arr(doc, "lockDelays", true).map((t, i): [string, number] => {
    if (!Array.isArray(t) || t.length !== 2 || typeof t[0] !== "string" || !(typeof t[1] === "number" && t[1] >= 0)) fail(`lockDelays[${i}] must be [key, ms]`);
    return [t[0], t[1]];
  });
  return { db, lastIndex: doc.lastIndex as number, restoreStaging: doc.restoreStaging, lockDelays };
}

/** The Connect tables; each is optional (absent in snapshots taken before they existed). */
function restoreConnect(doc: Record<string, unknown>, db: Tables): void {
  arr(doc, "configEntries", true).forEach((e, i) => {
    const r = rec<ConfigEntry>(e, `configEntries[${i}]`, ["Kind", "Name"]);
    db.configEntries.set(configEntryKey(r.Kind, r.Name), r);
  });
  arr(doc, "intentions", true).forEach((x, i) => {
    const r = rec<Intention>(x, `intentions[${i}]`, ["ID", "SourceNS", "SourceName", "DestinationNS", "DestinationName", "Action"]);
    if (db.intentionsByTuple.has(intentionTupleKey(r))) fail(`intentions[${i}] duplicates another intention's source and destination`);
    db.putIntention(r);
  });
  arr(doc, "caRoots", true).forEach((x, i) => {
    const r = rec<CARoot>(x, `caRoots[${i}]`, ["ID", "RootCert"]);
    db.caRoots.set(r.ID, r);
  });
  if (doc.caConfig !== undefined && doc.caConfig !== null) db.caConfig = rec<CAConfiguration>(doc.caConfig, "caConfig", ["ClusterID", "Provider"]);
  arr(doc, "preparedQueries", true).forEach((x, i) => {
    const r = rec<PreparedQuery>(x, `preparedQueries[${i}]`, ["ID", "Name", "Session"]);
    if (typeof r.Template !== "object" || r.Template === null || typeof r.Template.Type !== "string") fail(`preparedQueries[${i}].Template.Type must be a string`);
    putPreparedQuery(db, r);
  });
  if (doc.autopilotConfig !== undefined && doc.autopilotConfig !== null) db.autopilotConfig = rec<AutopilotConfig>(doc.autopilotConfig, "autopilotConfig", []);
  arr(doc, "coordinates", true).forEach((x, i) => putCoordinate(db, rowShape(() => coordinateEntryShape(x, `coordinates[${i}]`))));
  restoreAcl(doc, db);
  arr(doc, "federationStates", true).forEach((x, i) => {
    const f = rowShape(() => federationStateShape(x, `federationStates[${i}]`, true));
    if (db.federationStates.has(lower(f.Datacenter))) fail(`federationStates[${i}] repeats datacenter ${JSON.stringify(f.Datacenter)}`);
    db.federationStates.set(lower(f.Datacenter), f);
  });
}

/** The ACL tables; each optional. Keys must be unique (accessors, secrets, IDs, names). */
function restoreAcl(doc: Record<string, unknown>, db: Tables): void {
  const a = db.acl;
  const once = (has: boolean, where: string, what: string) => {
    if (has) fail(`${where} repeats ${what}`);
  };
  arr(doc, "aclPolicies", true).forEach((x, i) => {
    const p: AclPolicy = rowShape(() => aclPolicyShape(x, `aclPolicies[${i}]`, true));
    once(a.policies.has(p.ID.toLowerCase()) || a.policyNames.has(p.Name.toLowerCase()), `aclPolicies[${i}]`, `a policy ID or name`);
    a.putPolicy(p);
  });
  arr(doc, "aclRoles", true).forEach((x, i) => {
    const r: AclRole = rowShape(() => aclRoleShape(x, `aclRoles[${i}]`, true));
    once(a.roles.has(r.ID.toLowerCase()) || a.roleNames.has(r.Name.toLowerCase()), `aclRoles[${i}]`, `a role ID or name`);
    a.putRole(r);
  });
  arr(doc, "aclAuthMethods", true).forEach((x, i) => {
    const m: AclAuthMethod = rowShape(() => aclAuthMethodShape(x, `aclAuthMethods[${i}]`, true));
    once(a.authMethods.has(m.Name.toLowerCase()), `aclAuthMethods[${i}]`, "an auth method name");
    a.putAuthMethod(m);
  });
  arr(doc, "aclBindingRules", true).forEach((x, i) => {
    const r: AclBindingRule = rowShape(() => aclBindingRuleShape(x, `aclBindingRules[${i}]`, true));
    once(a.bindingRules.has(r.ID.toLowerCase()), `aclBindingRules[${i}]`, "a binding rule ID");
    a.putBindingRule(r);
  });
  arr(doc, "aclTokens", true).forEach((x, i) => {
    const t: AclTokenRecord = rowShape(() => aclTokenShape(x, `aclTokens[${i}]`, true));
    once(a.tokens.has(t.AccessorID.toLowerCase()) || a.tokenSecrets.has(t.SecretID), `aclTokens[${i}]`, "a token accessor or secret");
    a.putToken(t);
  });
}

/** A row checked by a command shape check, its StateCommandError turned into this module's error. */
function rowShape<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    return fail((e as Error).message.replace(/^invalid state command: /, ""));
  }
}
