/**
 * Catalog queries (Consul's Catalog.* endpoints over agent/consul/state/catalog.go, v1.8). Each adds
 * what it read to `ws` and returns the index Consul reports for that endpoint. Results are in memdb
 * order (lowercase node name, then lowercase service ID) and must be treated as read-only.
 */
import type { Node, NodeService, NodeServices, ServiceNode, ServiceTagsMap } from "../model/index.ts";
import { hasTags, inKeyOrder, matchesMeta, maxIndex, maxIndexForService, toServiceNode } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { lower } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

/** The `?node-meta=` filter shared by catalog and health reads. */
export interface NodeMetaFilter {
  /** Only nodes whose Meta has all of these pairs (`?node-meta=k:v`). */
  readonly nodeMeta?: Readonly<Record<string, string>>;
}

/** `/v1/catalog/nodes`: all nodes by name. Index: the nodes table. */
export function catalogNodes(store: StateStore, ws: WatchSet, opts: NodeMetaFilter = {}): QueryResult<readonly Node[]> {
  const db = store.db;
  ws.addTopic(store.hub, topic.index(INDEX.nodes));
  const value = db.nodeKeys().map((k) => db.nodes.get(k)!).filter((n) => matchesMeta(n.Meta, opts.nodeMeta));
  return { index: maxIndex(db, INDEX.nodes), value };
}

/** One node by name (case-insensitive) or null (Consul's GetNode). Index: the nodes table. */
export function catalogNode(store: StateStore, ws: WatchSet, name: string): QueryResult<Node | null> {
  ws.addTopic(store.hub, topic.node(lower(name)));
  return { index: maxIndex(store.db, INDEX.nodes), value: store.db.nodes.get(lower(name)) ?? null };
}

/**
 * `/v1/catalog/services`: service name -> distinct tags (sorted), names in sorted order. Index: the
 * services table (and the nodes table too with a node-meta filter, as Consul's ServicesByNodeMeta).
 */
export function catalogServices(store: StateStore, ws: WatchSet, opts: NodeMetaFilter = {}): QueryResult<ServiceTagsMap> {
  const db = store.db;
  ws.addTopic(store.hub, topic.index(INDEX.services));
  if (opts.nodeMeta) ws.addTopic(store.hub, topic.index(INDEX.nodes));
  const value: Record<string, readonly string[]> = {};
  if (!opts.nodeMeta) {
    for (const name of [...db.serviceTags.keys()].sort()) value[name] = [...db.serviceTags.get(name)!.tags.keys()].sort();
    return { index: maxIndex(db, INDEX.services), value };
  }
  // The answer is sorted (names, and each name's tags), so the instances may be visited in any order.
  const tags = new Map<string, Set<string>>();
  for (const [nk, instances] of db.services) {
    if (!matchesMeta(db.nodes.get(nk)?.Meta, opts.nodeMeta)) continue;
    for (const s of instances.values()) {
      let set = tags.get(s.svc.Service);
      if (!set) tags.set(s.svc.Service, (set = new Set()));
      for (const t of s.svc.Tags ?? []) set.add(t);
    }
  }
  for (const name of [...tags.keys()].sort()) value[name] = [...tags.get(name)!].sort();
  return { index: maxIndex(db, INDEX.services, INDEX.nodes), value };
}

/** Filters of `/v1/catalog/service/:service` and `/v1/catalog/connect/:service`. */
export interface ServiceNodesOptions extends NodeMetaFilter {
  /** Only instances having every one of these tags (case-insensitive, `?tag=`). */
  readonly tags?: readonly string[];
  /** Connect-capable instances for the service instead: its proxies and native instances (`/connect/`). */
  readonly connect?: boolean;
}

/**
 * The instances a service query finds, in memdb order, and the distinct lowercase service names among
 * them (a Connect query finds proxies registered under other names).
 * @internal
 */
export function findInstances(store: StateStore, ws: WatchSet, service: string, connect: boolean) {
  const db = store.db;
  const key = lower(service);
  const found = inKeyOrder((connect ? db.servicesByConnect : db.servicesByName).get(key));
  const names = new Set(found.map((s) => lower(s.svc.Service)));
  if (connect) ws.addTopic(store.hub, topic.connect(key));
  else ws.addTopic(store.hub, topic.index(INDEX.service(key)));
  for (const n of names) ws.addTopic(store.hub, topic.index(INDEX.service(n)));
  return { key, found, names };
}

/**
 * `/v1/catalog/service/:service` (and `/v1/catalog/connect/:service` with `connect`): ServiceNode rows.
 * Index: Consul's maxIndexForService for the service (its own entry, the extinction index when it has
 * no instances, else the catalog). For Connect, the max over the proxies' service entries is used too
 * (Consul 1.8 looks only at the target's entry, which a proxy change does not move).
 */
export function catalogServiceNodes(store: StateStore, ws: WatchSet, service: string, opts: ServiceNodesOptions = {}): QueryResult<readonly ServiceNode[]> {
  const db = store.db;
  const { key, found, names } = findInstances(store, ws, service, opts.connect ?? false);
  let index = maxIndexForService(db, key, found.length > 0, false);
  if (opts.connect) for (const n of names) index = Math.max(index, maxIndexForService(db, n, true, false));
  const value: ServiceNode[] = [];
  for (const s of found) {
    if (!hasTags(s.svc, opts.tags)) continue;
    const node = db.nodes.get(lower(s.node));
    if (!node || !matchesMeta(node.Meta, opts.nodeMeta)) continue;
    value.push(toServiceNode(node, s));
  }
  return { index, value };
}

/**
 * Every service instance whose own address is exactly `address` (Consul's ServiceNodes filtered by
 * ServiceAddress, as DNS reverse lookups ask), by node then service ID. Index: the services table.
 */
export function catalogServiceNodesByAddress(store: StateStore, ws: WatchSet, address: string): QueryResult<readonly ServiceNode[]> {
  const db = store.db;
  ws.addTopic(store.hub, topic.index(INDEX.services));
  const value: ServiceNode[] = [];
  for (const [nk, services] of [...db.services].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const node = db.nodes.get(nk);
    if (!node) continue;
    for (const s of inKeyOrder(services)) if (s.svc.Address === address) value.push(toServiceNode(node, s));
  }
  return { index: maxIndex(db, INDEX.services), value };
}

/**
 * `/v1/catalog/node/:node`: the node and its services by ID, or null. The node is found by name
 * (case-insensitive) or, failing that, by a unique ID prefix of at least 2 characters (odd lengths
 * lose their last character, as Consul's uuid_prefix lookup). Index: max of nodes and services tables.
 */
export function catalogNodeServices(store: StateStore, ws: WatchSet, nodeNameOrId: string): QueryResult<NodeServices | null> {
  const db = store.db;
  const index = maxIndex(db, INDEX.nodes, INDEX.services);
  let nk = lower(nodeNameOrId);
  ws.addTopic(store.hub, topic.node(nk));
  if (!db.nodes.has(nk)) {
    ws.addTopic(store.hub, topic.index(INDEX.nodes));
    const found = nodeKeyById(store, nodeNameOrId);
    if (found === undefined) return { index, value: null };
    nk = found;
  }
  ws.addTopic(store.hub, topic.nodeServices(nk));
  const services: Record<string, NodeService> = {};
  for (const s of inKeyOrder(db.services.get(nk))) services[s.svc.ID] = s.svc;
  return { index, value: { Node: db.nodes.get(nk)!, Services: services } };
}

function nodeKeyById(store: StateStore, idPrefix: string): string | undefined {
  if (idPrefix.length < 2) return undefined;
  const want = lower(idPrefix.length % 2 ? idPrefix.slice(0, -1) : idPrefix);
  let hit: string | undefined;
  for (const [id, nk] of store.db.nodeIds) {
    if (!id.startsWith(want)) continue;
    if (hit !== undefined) return undefined;
    hit = nk;
  }
  return hit;
}
