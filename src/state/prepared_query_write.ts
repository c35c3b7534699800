/**
 * Prepared-query and autopilot writes inside a Tx (Consul 1.8 agent/consul/state/prepared_query.go
 * preparedQuerySetTxn / preparedQueryDeleteTxn, the existence check of PreparedQuery.Apply, and
 * autopilot.go AutopilotSetConfig / AutopilotCASConfig).
 *
 * Template compilation (HIL, regexps) is the proposer's: this layer cannot import src/connect. The store
 * checks only what needs the tables: IDs, name and template-prefix conflicts, the bound session.
 */
import type { AutopilotConfig } from "../model/index.ts";
import type { PreparedQueryWrite } from "./commands.ts";
import { lower } from "./tables.ts";
import { INDEX } from "./topics.ts";
import { StateError, type Tx } from "./tx.ts";

/** An autopilot configuration to write. */
export type AutopilotConfigWrite = Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex">;

/** Consul's ErrMissingQueryID. */
export const ERR_MISSING_QUERY_ID = "Missing Query ID";

const UUID = /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i;

/** Consul's isUUID: 36 characters in the 8-4-4-4-12 hex form, any case. */
export const isUuid = (s: string): boolean => s.length === 36 && UUID.test(s);

/**
 * Creates (`create`: the ID must be new) or replaces (`update`: the ID must exist; CreateIndex kept) a
 * query. Errors are Consul's: "Missing Query ID", "Cannot modify non-existent prepared query: 'id'",
 * "name 'x' aliases an existing query name", "a query template with an empty name already exists",
 * "name 'x' aliases an existing query ID", "invalid session \"x\"",
 * "failed compiling template: Bad Template.Type 'x'".
 */
export function setPreparedQuery(tx: Tx, op: "create" | "update", q: PreparedQueryWrite): void {
  if (q.ID === "") throw new StateError(ERR_MISSING_QUERY_ID);
  const db = tx.db;
  const id = lower(q.ID);
  const existing = db.preparedQueries.get(id);
  if (op === "update" && !existing) throw new StateError(`Cannot modify non-existent prepared query: '${q.ID}'`);
  if (op === "create" && existing) throw new StateError(`Prepared query ID '${q.ID}' is already in use`);
  const template = q.Template.Type !== "";
  if (q.Name !== "") {
    const other = db.preparedQueryNames.get(lower(q.Name));
    if (other !== undefined && other !== id) throw new StateError(`name '${q.Name}' aliases an existing query name`);
  } else if (template) {
    const other = db.preparedQueryTemplates.get("");
    if (other !== undefined && other !== id) throw new StateError("a query template with an empty name already exists");
  }
  if (isUuid(q.Name) && db.preparedQueries.has(lower(q.Name))) throw new StateError(`name '${q.Name}' aliases an existing query ID`);
  if (q.Session !== "" && !db.sessions.has(lower(q.Session))) throw new StateError(`invalid session ${JSON.stringify(q.Session)}`);
  if (template && q.Template.Type !== "name_prefix_match") throw new StateError(`failed compiling template: Bad Template.Type '${q.Template.Type}'`);
  tx.putPreparedQuery({ ...q, CreateIndex: existing ? existing.CreateIndex : tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.preparedQueries);
}

/** Deletes a query the client names: it must exist ("Cannot modify non-existent prepared query: 'id'"). */
export function deletePreparedQueryChecked(tx: Tx, id: string): void {
  if (id === "") throw new StateError(ERR_MISSING_QUERY_ID);
  if (!tx.db.preparedQueries.has(lower(id))) throw new StateError(`Cannot modify non-existent prepared query: '${id}'`);
  deletePreparedQuery(tx, id);
}

/** preparedQueryDeleteTxn: removes a query by ID (case-insensitive); missing: no-op, no index bump. */
export function deletePreparedQuery(tx: Tx, id: string): void {
  const key = lower(id);
  if (!tx.db.preparedQueries.has(key)) return;
  tx.deletePreparedQuery(key);
  tx.bumpIndex(INDEX.preparedQueries);
}

/** Deletes every query bound to a session (session.go deleteSessionTxn, on any invalidation). */
export function deleteSessionQueries(tx: Tx, sessionKey: string): void {
  for (const id of [...(tx.db.preparedQueriesBySession.get(sessionKey) ?? [])].sort()) deletePreparedQuery(tx, id);
}

/**
 * AutopilotSetConfig (no `cas`) or AutopilotCASConfig: with `cas`, writes only if `cas` is 0 and nothing
 * is stored, or `cas` equals the stored ModifyIndex. CreateIndex is kept on update; ModifyIndex is the
 * Raft index. Returns whether it wrote.
 */
export function setAutopilotConfig(tx: Tx, c: AutopilotConfigWrite, cas?: number): boolean {
  const old = tx.db.autopilotConfig;
  if (cas !== undefined && (cas === 0 ? old !== null : old === null || old.ModifyIndex !== cas)) return false;
  tx.setAutopilotConfig({ ...c, CreateIndex: old ? old.CreateIndex : tx.idx, ModifyIndex: tx.idx });
  tx.bumpIndex(INDEX.autopilotConfig);
  return true;
}
