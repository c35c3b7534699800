/**
 * Connect queries: config entries, intentions and the CA (Consul 1.8 agent/consul/state/config_entry.go,
 * intention.go, connect_ca.go). Each query watches only its own tables (or its one row), so a write to
 * another Connect table does not wake it. Values are the stored objects: read-only, never mutate them.
 */
import type { CAConfiguration, CARoot, ConfigEntry, Intention } from "../model/index.ts";
import { inKeyOrder, maxIndex } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { configEntryKey, lower, pair } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

/**
 * `/v1/config/:kind/:name` (ConfigEntry.Get): the entry or null; kind and name are case-insensitive.
 * Index: the config-entries table. Watches that one entry.
 */
export function configEntryGet(store: StateStore, ws: WatchSet, kind: string, name: string): QueryResult<ConfigEntry | null> {
  const key = configEntryKey(kind, name);
  ws.addTopic(store.hub, topic.configEntry(key));
  return { index: maxIndex(store.db, INDEX.configEntries), value: store.db.configEntries.get(key) ?? null };
}

/**
 * `/v1/config/:kind` (ConfigEntry.List) or, without `kind`, every entry (ListAll): sorted by lowercase
 * kind, then lowercase name (memdb's id index order). Index: the config-entries table. Watches the table.
 */
export function configEntryList(store: StateStore, ws: WatchSet, kind?: string): QueryResult<readonly ConfigEntry[]> {
  ws.addTopic(store.hub, topic.index(INDEX.configEntries));
  const all = store.db.configEntries;
  const prefix = kind === undefined ? "" : pair(lower(kind), "");
  const keys = [...all.keys()].filter((k) => k.startsWith(prefix)).sort();
  return { index: maxIndex(store.db, INDEX.configEntries), value: keys.map((k) => all.get(k)!) };
}

/** Go's string order (UTF-8 bytes = code points); JS `<` compares UTF-16 units, which differs above U+FFFF. */
function compareGo(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator](), ib = b[Symbol.iterator]();
  for (;;) {
    const ca = ia.next(), cb = ib.next();
    if (ca.done) return cb.done ? 0 : -1;
    if (cb.done) return 1;
    const d = ca.value.codePointAt(0)! - cb.value.codePointAt(0)!;
    if (d !== 0) return d < 0 ? -1 : 1;
  }
}

/**
 * IntentionPrecedenceSorter, the same order as src/connect/intentions compareIntentions: Precedence
 * descending, then SourceNS, SourceName, DestinationNS, DestinationName ascending (case-sensitive, Go
 * byte order). Stored tuples are unique, so those never tie; the final ID comparison only makes the
 * order total.
 */
export function compareStoredIntentions(a: Intention, b: Intention): number {
  if (a.Precedence !== b.Precedence) return b.Precedence - a.Precedence;
  return (
    compareGo(a.SourceNS, b.SourceNS) ||
    compareGo(a.SourceName, b.SourceName) ||
    compareGo(a.DestinationNS, b.DestinationNS) ||
    compareGo(a.DestinationName, b.DestinationName) ||
    compareGo(a.ID, b.ID)
  );
}

/**
 * `/v1/connect/intentions` (state Intentions): every intention, highest precedence first (see
 * compareStoredIntentions). Index: the connect-intentions table. Watches the table.
 */
export function intentionList(store: StateStore, ws: WatchSet): QueryResult<readonly Intention[]> {
  ws.addTopic(store.hub, topic.index(INDEX.intentions));
  const value = [...store.db.intentions.values()].sort(compareStoredIntentions);
  return { index: maxIndex(store.db, INDEX.intentions), value };
}

/**
 * `/v1/connect/intentions/:id` (IntentionGet): the intention or null; the ID is case-insensitive.
 * Index: the connect-intentions table. Watches that one intention.
 */
export function intentionGet(store: StateStore, ws: WatchSet, id: string): QueryResult<Intention | null> {
  const key = lower(id);
  ws.addTopic(store.hub, topic.intention(key));
  return { index: maxIndex(store.db, INDEX.intentions), value: store.db.intentions.get(key) ?? null };
}

/**
 * CARootsAndConfig: every root sorted by ID (memdb's id index order) and the CA configuration (null before
 * one is set), unredacted: the configuration's provider Config may hold the root private key, so callers
 * that answer clients must redact. Index: the max of the connect-ca-roots and connect-ca-config tables.
 * Watches both tables.
 */
export function caRoots(store: StateStore, ws: WatchSet): QueryResult<{ roots: CARoot[]; config: CAConfiguration | null; rootsIndex: number }> {
  ws.addTopic(store.hub, topic.index(INDEX.caRoots));
  ws.addTopic(store.hub, topic.index(INDEX.caConfig));
  const db = store.db;
  // rootsIndex is what a `set-roots` CAS compares with (the roots table alone); `index` covers both tables.
  return {
    index: maxIndex(db, INDEX.caRoots, INDEX.caConfig),
    value: { roots: inKeyOrder(db.caRoots), config: db.caConfig, rootsIndex: maxIndex(db, INDEX.caRoots) },
  };
}
