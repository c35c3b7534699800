/**
 * Federation-state writes inside a Tx (Consul 1.8 agent/consul/state/federation_state.go
 * federationStateSetTxn / federationStateDeleteTxn), plus Causeway's optional CAS on ModifyIndex.
 */
import type { FederationState, FederationStateWrite } from "../model/index.ts";
import { lower } from "./tables.ts";
import { INDEX } from "./topics.ts";
import { StateError, type Tx } from "./tx.ts";

/** Consul's federationStateSetTxn refusal for a state without a datacenter. */
export const ERR_MISSING_FEDERATION_STATE_DATACENTER = "missing datacenter on federation state";

/**
 * federationStateSetTxn: stores `s` under its datacenter (case-insensitive): CreateIndex kept when one
 * exists, ModifyIndex = the Raft index, a PrimaryModifyIndex of 0 set to the Raft index (a write in the
 * primary; replication carries the primary's). With `cas`: writes only if `cas` is 0 and none exists, or
 * `cas` equals the stored ModifyIndex. Returns whether it wrote; throws StateError for an empty datacenter.
 */
export function upsertFederationState(tx: Tx, s: FederationStateWrite, cas?: number): boolean {
  if (s.Datacenter === "") throw new StateError(ERR_MISSING_FEDERATION_STATE_DATACENTER);
  const existing = tx.db.federationStates.get(lower(s.Datacenter));
  if (cas !== undefined && (cas === 0 ? existing !== undefined : existing?.ModifyIndex !== cas)) return false;
  const stored: FederationState = {
    Datacenter: s.Datacenter,
    ...(s.MeshGateways && s.MeshGateways.length > 0 ? { MeshGateways: s.MeshGateways } : {}),
    UpdatedAt: s.UpdatedAt,
    PrimaryModifyIndex: s.PrimaryModifyIndex === 0 ? tx.idx : s.PrimaryModifyIndex,
    CreateIndex: existing ? existing.CreateIndex : tx.idx,
    ModifyIndex: tx.idx,
  };
  tx.putFederationState(stored);
  tx.bumpIndex(INDEX.federationStates);
  return true;
}

/**
 * federationStateDeleteTxn: removes a datacenter's state (case-insensitive); missing: no-op, no index
 * bump. With `cas`: removes it only if its ModifyIndex equals `cas`. Returns whether it removed one.
 */
export function deleteFederationState(tx: Tx, datacenter: string, cas?: number): boolean {
  const key = lower(datacenter);
  const existing = tx.db.federationStates.get(key);
  if (!existing || (cas !== undefined && existing.ModifyIndex !== cas)) return false;
  tx.deleteFederationState(key);
  tx.bumpIndex(INDEX.federationStates);
  return true;
}
