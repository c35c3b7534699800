/** Helpers shared by the query modules: index lookups (Consul's maxIndexTxn family) and ordering. */
import type { Node, NodeService, ServiceNode } from "../model/index.ts";
import type { StoredService, Tables } from "./tables.ts";
import { INDEX } from "./topics.ts";

/** Max of the named index-table entries (0 when none is set), Consul's maxIndexTxn. */
export function maxIndex(db: Tables, ...names: string[]): number {
  let m = 0;
  for (const n of names) m = Math.max(m, db.indexes.get(n) ?? 0);
  return m;
}

/**
 * Consul's maxIndexForService: for a service with no instances, the last extinction index if any;
 * else the service's own entry; else the catalog's (nodes, services, and checks when `checks`).
 */
export function maxIndexForService(db: Tables, serviceKey: string, exists: boolean, checks: boolean): number {
  if (!exists) {
    const ext = db.indexes.get(INDEX.serviceExtinction);
    if (ext !== undefined) return ext;
  }
  const own = db.indexes.get(INDEX.service(serviceKey));
  if (own !== undefined) return own;
  return checks ? maxIndex(db, INDEX.nodes, INDEX.services, INDEX.checks) : maxIndex(db, INDEX.nodes, INDEX.services);
}

/** Values of a map in key order (keys are memdb-style lowercase or compound keys). */
export function inKeyOrder<V>(m: ReadonlyMap<string, V> | undefined): V[] {
  if (!m) return [];
  return [...m.keys()].sort().map((k) => m.get(k)!);
}

/** Consul's SatisfiesMetaFilters: every filter pair present with the same value. */
export function matchesMeta(meta: Readonly<Record<string, string>> | null | undefined, filters?: Readonly<Record<string, string>>): boolean {
  if (!filters) return true;
  for (const [k, v] of Object.entries(filters)) if (meta?.[k] !== v) return false;
  return true;
}

/** Consul's serviceTagsFilter inverted: true when the service has every tag (case-insensitive). */
export function hasTags(svc: NodeService, tags?: readonly string[]): boolean {
  if (!tags || tags.length === 0) return true;
  const have = new Set((svc.Tags ?? []).map((t) => t.toLowerCase()));
  return tags.every((t) => have.has(t.toLowerCase()));
}

/** The flattened `/v1/catalog/service` shape: node fields from the node, service fields prefixed. */
export function toServiceNode(node: Node, s: StoredService): ServiceNode {
  const svc = s.svc;
  const out: Record<string, unknown> = {
    ID: node.ID,
    Node: s.node,
    Address: node.Address,
    Datacenter: node.Datacenter,
    TaggedAddresses: node.TaggedAddresses,
    NodeMeta: node.Meta,
    ServiceKind: svc.Kind ?? "",
    ServiceID: svc.ID,
    ServiceName: svc.Service,
    ServiceTags: svc.Tags,
    ServiceAddress: svc.Address,
  };
  if (svc.TaggedAddresses) out.ServiceTaggedAddresses = svc.TaggedAddresses;
  Object.assign(out, {
    ServiceWeights: svc.Weights,
    ServiceMeta: svc.Meta,
    ServicePort: svc.Port,
    ServiceEnableTagOverride: svc.EnableTagOverride,
    ServiceProxy: svc.Proxy,
    ServiceConnect: svc.Connect,
    CreateIndex: svc.CreateIndex,
    ModifyIndex: svc.ModifyIndex,
  });
  return out as unknown as ServiceNode;
}
