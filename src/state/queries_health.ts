/**
 * Health queries (Consul's Health.* endpoints over agent/consul/state/catalog.go, v1.8). Checks come
 * in memdb order (lowercase node, then lowercase check ID); results are read-only.
 */
import type { CheckServiceNode, HealthCheck, HealthStateFilter, NodeInfo, ServiceKind, ServiceSummary } from "../model/index.ts";
import { findInstances, type NodeMetaFilter } from "./queries_catalog.ts";
import { hasTags, inKeyOrder, matchesMeta, maxIndex, maxIndexForService } from "./query_common.ts";
import type { StateStore } from "./store.ts";
import { lower } from "./tables.ts";
import { INDEX, topic } from "./topics.ts";
import type { QueryResult, WatchSet } from "./watch.ts";

function byNodeMeta(store: StateStore, ws: WatchSet, checks: HealthCheck[], opts: NodeMetaFilter): HealthCheck[] {
  if (!opts.nodeMeta) return checks;
  ws.addTopic(store.hub, topic.index(INDEX.nodes));
  return checks.filter((c) => matchesMeta(store.db.nodes.get(lower(c.Node))?.Meta, opts.nodeMeta));
}

/** `/v1/health/node/:node`: the node's checks. Index: the checks table. */
export function healthNodeChecks(store: StateStore, ws: WatchSet, node: string): QueryResult<readonly HealthCheck[]> {
  const nk = lower(node);
  ws.addTopic(store.hub, topic.nodeChecks(nk));
  return { index: maxIndex(store.db, INDEX.checks), value: inKeyOrder(store.db.checks.get(nk)) };
}

/**
 * `/v1/health/checks/:service`: checks of all instances of a service (by name). Index: the checks
 * table; with a node-meta filter, the service's entry (Consul's ServiceChecksByNodeMeta).
 */
export function healthServiceChecks(store: StateStore, ws: WatchSet, service: string, opts: NodeMetaFilter = {}): QueryResult<readonly HealthCheck[]> {
  const key = lower(service);
  ws.addTopic(store.hub, topic.serviceChecks(key));
  const value = byNodeMeta(store, ws, inKeyOrder(store.db.checksByService.get(key)), opts);
  const index = opts.nodeMeta ? maxIndexForService(store.db, key, true, true) : maxIndex(store.db, INDEX.checks);
  return { index, value };
}

/** `/v1/health/state/:state`: checks in a status, or all with "any". Index: the checks table. */
export function healthChecksInState(store: StateStore, ws: WatchSet, state: HealthStateFilter, opts: NodeMetaFilter = {}): QueryResult<readonly HealthCheck[]> {
  const db = store.db;
  let checks: HealthCheck[];
  if (state === "any") {
    ws.addTopic(store.hub, topic.index(INDEX.checks));
    checks = inKeyOrder(db.checks).flatMap((m) => inKeyOrder(m));
  } else {
    ws.addTopic(store.hub, topic.status(state));
    checks = inKeyOrder(db.checksByStatus.get(state));
  }
  return { index: maxIndex(db, INDEX.checks), value: byNodeMeta(store, ws, checks, opts) };
}

/** Filters of `/v1/health/service/:service` and `/v1/health/connect/:service`. */
export interface HealthServiceOptions extends NodeMetaFilter {
  /** Only instances having every one of these tags (case-insensitive). */
  readonly tags?: readonly string[];
  /** Drop instances with any check not "passing" (`?passing`, Consul's filterNonPassing). */
  readonly passingOnly?: boolean;
  /** Connect-capable instances for the service: its proxies and native instances (`/v1/health/connect/`). */
  readonly connect?: boolean;
}

/**
 * `/v1/health/service/:service`: instances with their node and checks (node checks first, then the
 * service's, each by check ID). Index: the max of the entries of the service names found (Consul's
 * checkServiceNodesTxn), or when none, the extinction index / catalog index (checks included).
 */
export function healthServiceNodes(store: StateStore, ws: WatchSet, service: string, opts: HealthServiceOptions = {}): QueryResult<readonly CheckServiceNode[]> {
  const db = store.db;
  const { key, found, names } = findInstances(store, ws, service, opts.connect ?? false);
  let index = 0;
  if (found.length === 0) index = maxIndexForService(db, key, false, true);
  for (const n of names) index = Math.max(index, maxIndexForService(db, n, true, true));
  const value: CheckServiceNode[] = [];
  const instanceChecks = instanceCheckLookup(store);
  for (const s of found) {
    if (!hasTags(s.svc, opts.tags)) continue;
    const nk = lower(s.node);
    const node = db.nodes.get(nk);
    if (!node || !matchesMeta(node.Meta, opts.nodeMeta)) continue;
    const checks = instanceChecks(nk, s.svc.ID);
    if (opts.passingOnly && checks.some((c) => c.Status !== "passing")) continue;
    value.push({ Node: node, Service: s.svc, Checks: checks });
  }
  return { index, value };
}

/**
 * Consul's /v1/internal/ui/services (ServiceSummary): every service by name with its kind, tags and
 * nodes, its instance count, and the statuses of its instances' checks (the node's checks count once
 * per instance, as Consul counts them). Sorted by name. Index: the highest of the nodes, services
 * and checks tables.
 */
export function uiServiceSummaries(store: StateStore, ws: WatchSet): QueryResult<readonly ServiceSummary[]> {
  const db = store.db;
  for (const t of [INDEX.nodes, INDEX.services, INDEX.checks]) ws.addTopic(store.hub, topic.index(t));
  const byName = new Map<string, {
    kind: ServiceKind; name: string; tags: Set<string>; nodes: Set<string>; sources: Set<string>; instances: number; passing: number; warning: number; critical: number;
  }>();
  const instanceChecks = instanceCheckLookup(store);
  for (const [nk, services] of db.services) {
    const node = db.nodes.get(nk);
    if (!node) continue;
    for (const s of services.values()) {
      const key = lower(s.svc.Service);
      let sum = byName.get(key);
      if (!sum) byName.set(key, sum = { kind: s.svc.Kind ?? "", name: s.svc.Service, tags: new Set(), nodes: new Set(), sources: new Set(), instances: 0, passing: 0, warning: 0, critical: 0 });
      for (const t of s.svc.Tags ?? []) sum.tags.add(t);
      const source = s.svc.Meta?.["external-source"];
      if (source) sum.sources.add(source);
      sum.nodes.add(node.Node);
      sum.instances++;
      for (const c of instanceChecks(nk, s.svc.ID)) sum[c.Status]++;
    }
  }
  const value = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((x) => ({
    ...(x.kind ? { Kind: x.kind } : {}), Name: x.name, Tags: [...x.tags].sort(), Nodes: [...x.nodes].sort(), InstanceCount: x.instances,
    ChecksPassing: x.passing, ChecksWarning: x.warning, ChecksCritical: x.critical, ExternalSources: [...x.sources].sort(),
  }));
  return { index: maxIndex(db, INDEX.nodes, INDEX.services, INDEX.checks), value };
}

/**
 * Consul's /v1/internal/ui/nodes (a NodeDump): every node by name with its services (by ID) and all
 * its checks (by ID). Index: the highest of the nodes, services and checks tables.
 */
export function uiNodes(store: StateStore, ws: WatchSet): QueryResult<readonly NodeInfo[]> {
  const db = store.db;
  for (const t of [INDEX.nodes, INDEX.services, INDEX.checks]) ws.addTopic(store.hub, topic.index(t));
  const value = db.nodeKeys().map((nk) => {
    const n = db.nodes.get(nk)!;
    return {
      ID: n.ID, Node: n.Node, Address: n.Address, Datacenter: n.Datacenter, TaggedAddresses: n.TaggedAddresses, Meta: n.Meta,
      Services: inKeyOrder(db.services.get(nk)).map((s) => s.svc), Checks: inKeyOrder(db.checks.get(nk)),
    };
  });
  return { index: maxIndex(db, INDEX.nodes, INDEX.services, INDEX.checks), value };
}

/**
 * For one query: an instance's checks, the node's own first, then the service's, each in check ID
 * order. Each node's checks are sorted and grouped by service once per query (not once per instance:
 * a node with 800 checks cost up to 0.2 ms per instance that way).
 */
function instanceCheckLookup(store: StateStore): (nk: string, serviceId: string) => HealthCheck[] {
  const byNode = new Map<string, { own: HealthCheck[]; byService: Map<string, HealthCheck[]> }>();
  return (nk, serviceId) => {
    let g = byNode.get(nk);
    if (!g) {
      g = { own: [], byService: new Map() };
      for (const c of inKeyOrder(store.db.checks.get(nk))) {
        if (!c.ServiceID) g.own.push(c);
        else {
          const sid = lower(c.ServiceID);
          const list = g.byService.get(sid);
          if (list) list.push(c);
          else g.byService.set(sid, [c]);
        }
      }
      byNode.set(nk, g);
    }
    return g.own.concat(g.byService.get(lower(serviceId)) ?? []);
  };
}

/**
 * Every instance of a service kind ("" for typical, "mesh-gateway"...) with node and checks, in
 * (node, service ID) order (Consul's ServiceDump by kind, which the gateway locator and federation
 * states read). Index: the kind's entry, bumped by any change to such services, their checks or nodes.
 */
export function healthServicesOfKind(store: StateStore, ws: WatchSet, kind: ServiceKind): QueryResult<readonly CheckServiceNode[]> {
  const db = store.db;
  ws.addTopic(store.hub, topic.index(INDEX.serviceKind(kind)));
  const value: CheckServiceNode[] = [];
  const instanceChecks = instanceCheckLookup(store);
  for (const s of inKeyOrder(db.servicesByKind.get(kind))) {
    const nk = lower(s.node);
    const node = db.nodes.get(nk);
    if (node) value.push({ Node: node, Service: s.svc, Checks: instanceChecks(nk, s.svc.ID) });
  }
  const index = db.indexes.get(INDEX.serviceKind(kind)) ?? maxIndex(db, INDEX.nodes, INDEX.services, INDEX.checks);
  return { index, value };
}
