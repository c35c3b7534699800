/**
 * Connect writes: config entries, intentions and the CA (Consul 1.8 agent/consul/state/config_entry.go,
 * intention.go and connect_ca.go). Each function changes the tables through `tx` (so a failure rolls
 * back) and bumps the table's index entry only when something changed.
 */
import type { CAConfiguration, CARoot, ConfigEntry, Intention } from "../model/index.ts";
import { configEntryKey, intentionTupleKey, lower } from "./tables.ts";
import { INDEX } from "./topics.ts";
import { StateError, type Tx } from "./tx.ts";

/** Consul's ErrMissingCARootID. */
export const ERR_MISSING_CA_ROOT_ID = "Missing CA Root ID";
/** CARootSetCAS's error when the new roots do not have exactly one active root. */
export const ERR_ONE_ACTIVE_CA = "there must be exactly one active CA";

/**
 * ensureConfigEntryTxn: stores `entry` under its kind/name (case-insensitive), keeping the stored
 * CreateIndex on update; CreateIndex (when new) and ModifyIndex become the Raft index.
 */
export function setConfigEntry(tx: Tx, entry: ConfigEntry): void {
  const old = tx.db.configEntries.get(configEntryKey(entry.Kind, entry.Name));
  tx.putConfigEntry({ ...entry, CreateIndex: old ? old.CreateIndex : tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.configEntries);
}

/**
 * EnsureConfigEntryCAS: `index` 0 writes only if no entry exists; otherwise only if the stored entry's
 * ModifyIndex equals `index`. Returns whether it wrote.
 */
export function casConfigEntry(tx: Tx, entry: ConfigEntry, index: number): boolean {
  const old = tx.db.configEntries.get(configEntryKey(entry.Kind, entry.Name));
  if (index === 0 ? old !== undefined : old === undefined || old.ModifyIndex !== index) return false;
  setConfigEntry(tx, entry);
  return true;
}

/** DeleteConfigEntry: removes kind/name; a missing entry is a no-op (no index bump). */
export function deleteConfigEntry(tx: Tx, kind: string, name: string): void {
  const key = configEntryKey(kind, name);
  if (!tx.db.configEntries.has(key)) return;
  tx.deleteConfigEntry(key);
  tx.bumpIndex(INDEX.configEntries);
}

/**
 * Consul 1.8's Intention.String() ("ALLOW default/web => default/db (ID: x, Precedence: 9)"); the same
 * text as src/connect/intentions intentionString, which this layer may not import.
 */
export function intentionText(x: Intention): string {
  return `${x.Action.toUpperCase()} ${x.SourceNS}/${x.SourceName} => ${x.DestinationNS}/${x.DestinationName} (ID: ${x.ID}, Precedence: ${x.Precedence})`;
}

/**
 * intentionSetTxn: upserts by ID (case-insensitive). An update keeps CreateIndex and CreatedAt; ModifyIndex
 * (and CreateIndex when new) become the Raft index; a null Meta is stored as {}. Throws StateError
 * "duplicate intention found: <String() of the other>" when another ID has the same source and
 * destination, compared case-insensitively.
 */
export function upsertIntention(tx: Tx, x: Intention): void {
  const id = lower(x.ID);
  const dup = tx.db.intentionsByTuple.get(intentionTupleKey(x));
  if (dup !== undefined && dup !== id) throw new StateError(`duplicate intention found: ${intentionText(tx.db.intentions.get(dup)!)}`);
  const old = tx.db.intentions.get(id);
  tx.putIntention({
    ...x,
    Meta: x.Meta ?? {},
    CreatedAt: old ? old.CreatedAt : x.CreatedAt,
    CreateIndex: old ? old.CreateIndex : tx.idx,
    ModifyIndex: tx.idx,
  });
  tx.bumpIndex(INDEX.intentions);
}

/** intentionDeleteTxn: removes by ID (case-insensitive); a missing intention is a no-op (no index bump). */
export function deleteIntention(tx: Tx, id: string): void {
  const key = lower(id);
  if (!tx.db.intentions.has(key)) return;
  tx.deleteIntention(key);
  tx.bumpIndex(INDEX.intentions);
}

/**
 * caSetConfigTxn: stores the CA configuration; CreateIndex kept on update, ModifyIndex the Raft index,
 * and an empty ClusterID keeps the stored one.
 */
export function setCaConfig(tx: Tx, c: CAConfiguration): void {
  const old = tx.db.caConfig;
  tx.setCaConfig({
    ...c,
    ClusterID: c.ClusterID === "" && old ? old.ClusterID : c.ClusterID,
    CreateIndex: old ? old.CreateIndex : tx.idx,
    ModifyIndex: tx.idx,
  });
  tx.bumpIndex(INDEX.caConfig);
}

/**
 * CARootSetCAS (+ CAOpSetRootsAndConfig): exactly one root must be Active and every root needs an ID
 * (else StateError); if the roots table index is not `index` nothing changes and it returns false.
 * Otherwise the roots replace the table (a root whose ID was stored keeps its CreateIndex; ModifyIndex is
 * the Raft index), `config` is stored if given, and it returns true.
 */
export function setCaRoots(tx: Tx, roots: readonly CARoot[], index: number, config?: CAConfiguration): boolean {
  if (roots.filter((r) => r.Active).length !== 1) throw new StateError(ERR_ONE_ACTIVE_CA);
  if ((tx.db.indexes.get(INDEX.caRoots) ?? 0) !== index) return false;
  const next = new Map<string, CARoot>();
  for (const r of roots) {
    if (!r.ID) throw new StateError(ERR_MISSING_CA_ROOT_ID);
    const old = tx.db.caRoots.get(r.ID);
    next.set(r.ID, { ...r, CreateIndex: old ? old.CreateIndex : tx.idx, ModifyIndex: tx.idx });
  }
  tx.replaceCaRoots(next);
  tx.bumpIndex(INDEX.caRoots);
  if (config) setCaConfig(tx, config);
  return true;
}
