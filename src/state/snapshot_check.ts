/**
 * Checks a user's snapshot (`/v1/snapshot` restore) as a whole before anything is proposed: the server
 * that receives the restore runs this and refuses a bad snapshot with the first problem found, so nothing
 * of it reaches the Raft log. What is checked:
 * - types: the format, no unknown top-level field, every row's shape (the same shape checks as the
 *   commands that write such rows), KV rows as 7-tuples, CA roots with exactly one active;
 * - index ranges: Raft indexes are non-negative integers, CreateIndex <= ModifyIndex <= lastIndex,
 *   index-table and tombstone indexes <= lastIndex;
 * - uniqueness of every table's key (node names and IDs, service and check IDs per node, session IDs,
 *   KV keys, config entries, intentions, CA roots, prepared query IDs, names and the one unnamed template,
 *   federation-state datacenters);
 * - references, as the store keeps them: services, checks and sessions on existing nodes, checks of
 *   existing services, sessions tied to existing checks, locks held by existing sessions, prepared queries
 *   bound to existing sessions, coordinates of existing nodes (one per node and segment);
 * - the config entries as a graph (protocols, cycles), through the caller's check (src/connect).
 */
import type { ConfigEntry, Session } from "../model/index.ts";
import { StateCommandError } from "./commands.ts";
import { sessionShape } from "./codec.ts";
import { coordinateEntryShape } from "./codec_coordinate.ts";
import { federationStateShape } from "./codec_federation_state.ts";
import { caConfigShape, caRootShape, configEntryShape, intentionShape } from "./codec_connect.ts";
import { autopilotConfigShape, preparedQueryShape } from "./codec_prepared_query.ts";
import { checkRequired, checkShape, healthCheckShape, isObj, serviceShape, type Obj } from "./codec_shapes.ts";
import { parseSnapshotDoc, SNAPSHOT_KEYS, tablesFromDoc } from "./snapshot.ts";
import { configEntryKey, lower, pair, sessionCheckIds } from "./tables.ts";

/** A snapshot that must not be restored; the message ("invalid snapshot: ...") names what is wrong. */
export class InvalidSnapshotError extends Error {
  override readonly name = "InvalidSnapshotError";
  constructor(what: string) {
    super(`invalid snapshot: ${what}`);
  }
}

export interface SnapshotCheckOptions {
  /** Validates the config entries as a graph (src/connect, which this layer cannot import): a refusal message, or undefined. */
  readonly checkConfigEntries?: (entries: readonly ConfigEntry[]) => string | undefined;
}

function bad(what: string): never {
  throw new InvalidSnapshotError(what);
}

/** Runs a decoder of this layer, turning its error into an InvalidSnapshotError with the same words. */
function guard<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof InvalidSnapshotError) throw e;
    const m = e instanceof Error ? e.message : String(e);
    if (e instanceof StateCommandError) bad(m.replace(/^invalid state command: /, ""));
    if (m.startsWith("invalid state snapshot: ")) bad(m.slice("invalid state snapshot: ".length));
    return bad(`cannot be read (${m})`);
  }
}

const isIndex = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

type Shape = (v: unknown, path: string) => void;

/** A plain object with the string fields `required`, and the optional fields `optional` of their kinds. */
const objectShape = (required: readonly string[], optional: Parameters<typeof checkShape>[2] = {}): Shape => (v, path) => {
  if (!isObj(v)) bad(`${path} must be an object`);
  checkRequired(v, path, Object.fromEntries(required.map((k) => [k, "str" as const])));
  checkShape(v, path, optional);
};

const STORED_SERVICE: Shape = (v, path) => {
  objectShape(["Node"])(v, path);
  serviceShape((v as Obj).Service, `${path}.Service`);
  checkRequired((v as Obj).Service as Obj, `${path}.Service`, { ID: "str", Service: "str", Proxy: "obj", Connect: "obj" });
};

/** The checks of one snapshot document: rows of each table in order, each against the tables before it. */
class Checker {
  constructor(private readonly doc: Record<string, unknown>, readonly last: number) {}

  /** Runs `f` on each row of table `k` that has the `shape`, with its path ("nodes[3]"). */
  each(k: string, shape: Shape, f: (row: Obj, path: string) => void, optional = false): number {
    const v = this.doc[k];
    if (optional && (v === undefined || v === null)) return 0;
    if (!Array.isArray(v)) bad(`${k} must be an array`);
    v.forEach((row, i) => {
      const path = `${k}[${i}]`;
      guard(() => shape(row, path));
      f(row as Obj, path);
    });
    return v.length;
  }

  /** CreateIndex <= ModifyIndex <= lastIndex, both non-negative integers (unless absent and not `required`). */
  indexes(x: Obj, path: string, required = true): void {
    const c = x.CreateIndex, m = x.ModifyIndex;
    if (!required && c === undefined && m === undefined) return;
    if (!isIndex(c)) bad(`${path}.CreateIndex must be a non-negative integer`);
    if (!isIndex(m)) bad(`${path}.ModifyIndex must be a non-negative integer`);
    if (c > m) bad(`${path}.CreateIndex (${c}) is above its ModifyIndex (${m})`);
    if (m > this.last) bad(`${path}.ModifyIndex (${m}) is above the snapshot's lastIndex (${this.last})`);
  }
}

function unique(seen: Set<string>, key: string, path: string, what: string): void {
  if (seen.has(key)) bad(`${path} repeats ${what}`);
  seen.add(key);
}

/** Throws InvalidSnapshotError unless `data` is a snapshot the store can restore as it is. */
export function checkSnapshot(data: Uint8Array, o: SnapshotCheckOptions = {}): void {
  const doc = guard(() => parseSnapshotDoc(data));
  for (const k of Object.keys(doc)) {
    if (!SNAPSHOT_KEYS.includes(k)) bad(`unknown field ${JSON.stringify(k)} (a snapshot of another version?)`);
  }
  if (!isIndex(doc.lastIndex)) bad("lastIndex must be a non-negative integer");
  const c = new Checker(doc, doc.lastIndex);
  const { sessions, nodes } = catalogRows(c);
  coordinateRows(c, nodes);
  connectRows(c);
  preparedQueryRows(c, sessions);
  federationStateRows(c);
  for (const k of ["aclAuthMethods", "aclBindingRules", "aclPolicies", "aclRoles", "aclTokens"]) c.each(k, () => {}, (row, path) => c.indexes(row, path), true);
  if (doc.autopilotConfig !== undefined && doc.autopilotConfig !== null) {
    guard(() => autopilotConfigShape(doc.autopilotConfig, "autopilotConfig"));
    c.indexes(doc.autopilotConfig as Obj, "autopilotConfig");
  }
  if (doc.caConfig !== undefined && doc.caConfig !== null) guard(() => caConfigShape(doc.caConfig, "caConfig"));
  const { db } = guard(() => tablesFromDoc(doc));
  const refusal = o.checkConfigEntries?.([...db.configEntries.values()]);
  if (refusal !== undefined) bad(`configEntries: ${refusal}`);
}

/** Nodes, services, checks, sessions, KV, tombstones and the index table; returns the session and node keys. */
function catalogRows(c: Checker): { sessions: ReadonlySet<string>; nodes: ReadonlySet<string> } {
  const nodes = new Set<string>(), nodeIds = new Set<string>(), services = new Set<string>(), checks = new Set<string>(), sessions = new Set<string>();
  /** The table key of the node a row is on, which must exist. */
  const nodeOf = (row: Obj, path: string): string => {
    const nk = lower(row.Node as string);
    if (!nodes.has(nk)) bad(`${path} is on node ${JSON.stringify(row.Node)}, which the snapshot does not have`);
    return nk;
  };
  c.each("nodes", objectShape(["Node", "ID"], { Address: "str", Datacenter: "str", TaggedAddresses: "strMap", Meta: "strMap" }), (n, path) => {
    if (n.Node === "") bad(`${path}.Node must not be empty`);
    c.indexes(n, path);
    unique(nodes, lower(n.Node as string), path, `node ${JSON.stringify(n.Node)}`);
    if (n.ID !== "") unique(nodeIds, lower(n.ID as string), path, `node ID ${JSON.stringify(n.ID)}`);
  });
  c.each("services", STORED_SERVICE, (s, path) => {
    const svc = s.Service as Obj;
    c.indexes(svc, `${path}.Service`);
    unique(services, pair(nodeOf(s, path), lower(svc.ID as string)), path, `service ${JSON.stringify(svc.ID)} of node ${JSON.stringify(s.Node)}`);
  });
  c.each("checks", (v, path) => (healthCheckShape(v, path), checkRequired(v, path, { Node: "str", CheckID: "str", Status: "str" })), (hc, path) => {
    if (!["passing", "warning", "critical"].includes(hc.Status as string)) bad(`${path}.Status must be passing, warning or critical`);
    c.indexes(hc, path);
    const nk = nodeOf(hc, path);
    if (hc.ServiceID && !services.has(pair(nk, lower(hc.ServiceID as string)))) {
      bad(`${path} belongs to service ${JSON.stringify(hc.ServiceID)}, which node ${JSON.stringify(hc.Node)} does not have`);
    }
    unique(checks, pair(nk, lower(hc.CheckID as string)), path, `check ${JSON.stringify(hc.CheckID)} of node ${JSON.stringify(hc.Node)}`);
  });
  c.each("sessions", sessionShape, (sess, path) => {
    if (sess.Behavior !== "release" && sess.Behavior !== "delete") bad(`${path}.Behavior must be release or delete`);
    if (!Array.isArray(sess.NodeChecks)) bad(`${path}.NodeChecks must be an array`);
    c.indexes(sess, path);
    const nk = nodeOf(sess, path);
    for (const id of sessionCheckIds(sess as unknown as Session)) {
      if (!checks.has(pair(nk, lower(id)))) bad(`${path} is tied to check ${JSON.stringify(id)}, which node ${JSON.stringify(sess.Node)} does not have`);
    }
    unique(sessions, lower(sess.ID as string), path, `session ${JSON.stringify(sess.ID)}`);
  });
  const keys = new Set<string>();
  const kvShape: Shape = (r, path) => {
    if (!Array.isArray(r) || r.length !== 7 || typeof r[1] !== "string" || typeof r[4] !== "string") {
      bad(`${path} must be [LockIndex, Key, Flags, Value, Session, CreateIndex, ModifyIndex]`);
    }
    if (!isIndex(r[0])) bad(`${path} LockIndex must be a non-negative integer`);
  };
  c.each("kvs", kvShape, (row, path) => {
    const r = row as unknown as [number, string, unknown, unknown, string, unknown, unknown];
    const where = `${path} (key ${JSON.stringify(r[1])})`;
    c.indexes({ CreateIndex: r[5], ModifyIndex: r[6] }, where);
    if (r[4] !== "" && !sessions.has(lower(r[4]))) bad(`${where} is locked by session ${JSON.stringify(r[4])}, which the snapshot does not have`);
    unique(keys, r[1], path, `key ${JSON.stringify(r[1])}`);
  });
  const pairShape: Shape = (t, path) => {
    if (!Array.isArray(t) || t.length !== 2 || typeof t[0] !== "string" || !isIndex(t[1])) bad(`${path} must be [string, non-negative integer]`);
  };
  for (const k of ["tombstones", "indexes"]) {
    const seen = new Set<string>();
    c.each(k, pairShape, (row, path) => {
      const [name, index] = row as unknown as [string, number];
      if (index > c.last) bad(`${path} index (${index}) is above the snapshot's lastIndex (${c.last})`);
      unique(seen, name, path, JSON.stringify(name));
    });
  }
  return { sessions, nodes };
}

/** Coordinates: well formed, on nodes the snapshot has, one per node and segment (case-insensitive). */
function coordinateRows(c: Checker, nodes: ReadonlySet<string>): void {
  const seen = new Set<string>();
  c.each("coordinates", (v, path) => void coordinateEntryShape(v, path), (x, path) => {
    const nk = lower(x.Node as string);
    if (!nodes.has(nk)) bad(`${path} is for node ${JSON.stringify(x.Node)}, which the snapshot does not have`);
    unique(seen, pair(nk, lower(x.Segment as string)), path, `the coordinate of node ${JSON.stringify(x.Node)} in segment ${JSON.stringify(x.Segment)}`);
  }, true);
}

/**
 * Federation states: well formed, one per datacenter (case-insensitive), CreateIndex <= ModifyIndex <=
 * lastIndex. PrimaryModifyIndex is the primary's index and the gateways' indexes their own datacenter's,
 * so neither is bounded by this snapshot's lastIndex.
 */
function federationStateRows(c: Checker): void {
  const seen = new Set<string>();
  c.each("federationStates", (v, path) => void federationStateShape(v, path, true), (f, path) => {
    c.indexes(f, path);
    unique(seen, lower(f.Datacenter as string), path, `the federation state of datacenter ${JSON.stringify(f.Datacenter)}`);
  }, true);
}

/** Prepared queries: IDs, names (case-insensitive) and the unnamed template unique; sessions that exist; known template types. */
function preparedQueryRows(c: Checker, sessions: ReadonlySet<string>): void {
  const ids = new Set<string>(), names = new Set<string>(), unnamedTemplates = new Set<string>();
  c.each("preparedQueries", (v, path) => void preparedQueryShape(v, path), (q, path) => {
    c.indexes(q, path);
    if (q.ID === "") bad(`${path}.ID must not be empty`);
    unique(ids, lower(q.ID as string), path, `prepared query ${JSON.stringify(q.ID)}`);
    if (q.Name !== "") unique(names, lower(q.Name as string), path, `prepared query name ${JSON.stringify(q.Name)}`);
    const type = (q.Template as Obj).Type;
    if (type !== "" && type !== "name_prefix_match") bad(`${path}.Template.Type ${JSON.stringify(type)} is not a template type`);
    if (type !== "" && q.Name === "") unique(unnamedTemplates, "", path, "the template with an empty name");
    if (q.Session !== "" && !sessions.has(lower(q.Session as string))) {
      bad(`${path} is bound to session ${JSON.stringify(q.Session)}, which the snapshot does not have`);
    }
  }, true);
}

/** Config entries, intentions and CA roots (each table optional: older snapshots have none). */
function connectRows(c: Checker): void {
  const entries = new Set<string>(), intentions = new Set<string>(), roots = new Set<string>();
  c.each("configEntries", configEntryShape, (x, path) => {
    c.indexes(x, path, false);
    unique(entries, configEntryKey(x.Kind as string, x.Name as string), path, `${x.Kind} ${JSON.stringify(x.Name)}`);
  }, true);
  c.each("intentions", intentionShape, (x, path) => {
    c.indexes(x, path, false);
    unique(intentions, lower(x.ID as string), path, `intention ${JSON.stringify(x.ID)}`);
  }, true);
  let active = 0;
  const count = c.each("caRoots", caRootShape, (r, path) => {
    c.indexes(r, path, false);
    unique(roots, r.ID as string, path, `CA root ${JSON.stringify(r.ID)}`);
    if (r.Active) active++;
  }, true);
  if (count > 0 && active !== 1) bad(`caRoots must have exactly one active root, not ${active}`);
}
