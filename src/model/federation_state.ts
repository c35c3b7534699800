/**
 * Federation states (Consul 1.8 agent/structs/federation_state.go): one record per datacenter, kept in
 * the primary and replicated to every secondary, holding that datacenter's mesh gateways as its own
 * catalog returned them. The JSON shape is Consul's: Go field names, `MeshGateways` omitted when empty
 * (`json:",omitempty"`), `UpdatedAt` an RFC 3339 time string, the Raft indexes last.
 */
import { setOwn } from "../lib/index.ts";
import type { CheckServiceNode } from "./catalog.ts";
import { sameCheck, sameNode, sameService } from "./same.ts";

export interface FederationState {
  /** The datacenter this record describes (the table key, compared case-insensitively). */
  readonly Datacenter: string;
  /** The datacenter's mesh gateways with their nodes and checks, in its catalog's order; absent when none. */
  readonly MeshGateways?: readonly CheckServiceNode[];
  /** When the owning datacenter last changed this record (RFC 3339, UTC); Go's zero time when never set. */
  readonly UpdatedAt: string;
  /** The record's ModifyIndex in the primary datacenter (in the primary: its own ModifyIndex). */
  readonly PrimaryModifyIndex: number;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** A federation state to write: everything but the Raft indexes the store assigns. */
export type FederationStateWrite = Omit<FederationState, "CreateIndex" | "ModifyIndex">;

/** Go's zero time.Time as encoding/json writes it (a record whose UpdatedAt was never set). */
export const ZERO_UPDATED_AT = "0001-01-01T00:00:00Z";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * Whether `s` is a time Go's time.Time UnmarshalJSON accepts (time.RFC3339: a date that exists, hours
 * below 24, minutes and seconds below 60, an optional fraction, "Z" or a +hh:mm offset).
 */
export function isRfc3339(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, sec, oh, om] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 || oh > 23 || om > 59) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
}

/**
 * FederationState.IsSame, the anti-entropy comparison: same Datacenter, the same number of gateways,
 * and pairwise (in the given order: Consul does not sort) the same node (Node.IsSame), service
 * (NodeService.IsSame) and checks (HealthCheck.IsSame, same count, in order). UpdatedAt,
 * PrimaryModifyIndex and the Raft indexes are ignored. Nil and empty maps or lists inside the records
 * compare equal (see same.ts).
 */
export function isSameFederationState(
  a: Pick<FederationState, "Datacenter" | "MeshGateways">,
  b: Pick<FederationState, "Datacenter" | "MeshGateways">,
): boolean {
  if (a.Datacenter !== b.Datacenter) return false;
  const ga = a.MeshGateways ?? [], gb = b.MeshGateways ?? [];
  if (ga.length !== gb.length) return false;
  return ga.every((x, i) => {
    const y = gb[i]!;
    if (!sameNode(x.Node, y.Node) || !sameService(x.Service, y.Service)) return false;
    const ca = x.Checks ?? [], cb = y.Checks ?? [];
    return ca.length === cb.length && ca.every((c, j) => sameCheck(c, cb[j]!));
  });
}

/** Consul's DatacenterIndexedCheckServiceNodes body: datacenter -> its mesh gateways. */
export interface DatacenterMeshGateways {
  readonly DatacenterNodes: Readonly<Record<string, readonly CheckServiceNode[]>>;
}

/**
 * FederationState.ListMeshGateways: the gateways of every state that has any, keyed by the state's
 * Datacenter (states without gateways are left out). Keys are in Go's map-marshalling order (sorted), so
 * the JSON is Consul's byte for byte.
 */
export function meshGatewaysByDatacenter(states: readonly FederationState[]): DatacenterMeshGateways {
  const out: Record<string, readonly CheckServiceNode[]> = {};
  const withGateways = states.filter((s) => (s.MeshGateways?.length ?? 0) > 0);
  for (const s of [...withGateways].sort((x, y) => (x.Datacenter < y.Datacenter ? -1 : x.Datacenter > y.Datacenter ? 1 : 0))) {
    setOwn(out, s.Datacenter, s.MeshGateways!);
  }
  return { DatacenterNodes: out };
}
