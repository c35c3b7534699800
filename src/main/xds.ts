/**
 * The agent's xDS server, wired: the agent cache types proxies watch (over the replicated state as this
 * agent reaches it), the proxycfg manager following the local agent's connect proxies and mesh gateways,
 * the xDS cache it fills with each one's sidecar or gateway resources, and the ADS service on `ports.grpc` (Consul 1.8 serves it
 * with TLS whenever the agent has TLS configured, verifying clients when verify_incoming is set;
 * plaintext otherwise). A stream's node must be a registered local proxy service ID (or its
 * node.cluster); a registered proxy whose snapshot is not ready yet waits for it instead of being refused.
 *
 * Proxyless gRPC clients use the same port: a node ID that is a local service ID (not a proxy), one of
 * `proxylessClients`, or a local connect proxy's ID named by a client that is not Envoy (by
 * `node.user_agent_name`: src/xds/node.ts) is served proxyless resources (src/xds/resources/proxyless.ts)
 * by the proxyless manager (src/proxycfg/proxyless_manager.ts); a proxy's proxyless view has a cache key
 * of its own (PROXYLESS_VIEW_PREFIX + proxy ID) beside the Envoy resources under the proxy ID. Mesh
 * gateway IDs are Envoy's and the causeway gateway's only. A proxyless machine starts when the node's first
 * stream watches the xDS cache and stops a while after its last stream ends: the ADS service reports
 * neither, so the cache handed to it is wrapped to see each stream's watch and its cancellation. The
 * resources cover every name the client may resolve (its sidecar's upstreams, else every catalog
 * service), because the xDS cache holds one resource set per node and does not see which names a stream
 * subscribes to; an ADS stream then sends only the names the client asked for.
 */
import {
  catalogServicesType, compiledChainType, configEntriesType, datacentersType, federationGatewaysType, healthServicesType, intentionMatchType,
  meshGatewaysOverCatalog, meshGatewaysType, preparedQueryType, type StateReader,
} from "../agent/index.ts";
import type { SharedConnectCache } from "./connect_access.ts";
import type { Clock, Logger, TlsMaterial } from "../platform/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import {
  createProxylessManager, createProxyManager, type LocalServices, type MeshGatewayCacheTypes, type ProxylessManager, type ProxyManager, type ProxySnapshot,
  type SidecarCacheTypes,
} from "../proxycfg/index.ts";
import {
  createAdsService, createXdsCache, type AdsServiceOptions, meshGatewayResources, proxylessResources, resolveByProxyId, serveAds, sidecarResources, toResourceMap, type XdsCache,
} from "../xds/index.ts";

export interface StartXdsOptions {
  readonly datacenter: string;
  readonly nodeName: string;
  /** The agent's DNS domain (`domain`, default "consul"): WAN-federation gateways' server names. */
  readonly domain: string;
  /** The agent's LAN advertise address (exposed check paths accept it). */
  readonly advertiseAddr: string;
  /** What a sidecar's RBAC does when no intention matches: the ACL default policy with ACLs on, else allow (Consul's IntentionDefaultAllow). */
  readonly intentionDefaultAllow?: boolean;
  /** Bind address and port of the gRPC listener (`client_addr`, `ports.grpc`; 0 = a free port). */
  readonly host: string;
  readonly port: number;
  /** The agent's TLS certificate: served on every connection; clients verified when `verifyIncoming`. */
  readonly tls?: { readonly material: TlsMaterial; readonly verifyIncoming: boolean };
  readonly localAgent: LocalServices;
  /** Reads of the replicated state (src/main's StateAccess). */
  readonly state: StateReader;
  /**
   * The agent's cache with its CA roots, leaf and config-entry types (connect_access.ts), shared with the
   * HTTP API and the service manager so a leaf is signed and an entry fetched once per agent. Its owner closes it; startXds adds its own types to it.
   */
  readonly connect: SharedConnectCache;
  /** Every known datacenter, nearest first (prepared-query failover). */
  datacenters(): readonly string[] | Promise<readonly string[]>;
  /** Node IDs served as proxyless gRPC clients without a local registration (every catalog service). */
  readonly proxylessClients?: readonly string[];
  /** xDS updates per second across streams (Consul's default 250). */
  readonly updatesPerSecond?: number;
  /** Where the ADS server's metrics go. */
  readonly metrics?: MetricsRegistry;
  /** With ACLs: whether a stream's token may configure a proxy (xds service.ts `authorize`). */
  readonly authorize?: AdsServiceOptions["authorize"];
  readonly clock: Clock;
  readonly logger: Logger;
}

export interface RunningXds {
  /** `host:port` the ADS service listens on. */
  readonly address: string;
  readonly manager: ProxyManager;
  readonly proxyless: ProxylessManager;
  readonly cache: XdsCache;
  /** Stops serving (streams end) and the managers (their cache watches end; the cache is its owner's). Idempotent. */
  close(): Promise<void>;
}

/** The cache types sidecars and mesh gateways watch, over `state` (built once per agent). */
export function proxyCacheTypes(o: Pick<StartXdsOptions, "state" | "datacenter" | "connect" | "datacenters">): SidecarCacheTypes & MeshGatewayCacheTypes {
  return {
    roots: o.connect.roots,
    leaf: o.connect.leaf,
    intentions: intentionMatchType(o.state),
    configEntry: o.connect.configEntry,
    chain: compiledChainType(o.state, o.datacenter),
    health: healthServicesType(o.state),
    meshGateways: meshGatewaysType(meshGatewaysOverCatalog(o.state)),
    preparedQuery: preparedQueryType({ reader: o.state, datacenters: () => o.datacenters() }),
    catalogServices: catalogServicesType(o.state),
    configEntries: configEntriesType(o.state),
    datacenters: datacentersType(() => o.datacenters()),
    federationGateways: federationGatewaysType(o.state),
  };
}

/** A proxy's resources by kind. Throws ResourceGenerationError when the snapshot cannot be rendered. */
function proxyResources(snapshot: ProxySnapshot) {
  return snapshot.Kind === "mesh-gateway" ? meshGatewayResources(snapshot) : sidecarResources(snapshot);
}

/** Starts the xDS server. Rejects (with nothing left running) when the port cannot be bound. */
export async function startXds(o: StartXdsOptions): Promise<RunningXds> {
  const log = o.logger;
  const agentCache = o.connect.cache;
  const xdsCache = createXdsCache();
  const types = proxyCacheTypes(o);
  const manager = createProxyManager({
    context: { datacenter: o.datacenter, nodeName: o.nodeName, domain: o.domain, advertiseAddrLan: o.advertiseAddr, intentionDefaultAllow: o.intentionDefaultAllow ?? true },
    cache: agentCache,
    types,
    services: o.localAgent,
    clock: o.clock,
    logger: log.named("proxycfg"),
    publish(proxyId, snapshot) {
      // A snapshot that cannot be rendered keeps the proxy on its previous resources (Consul fails the
      // xDS response and Envoy keeps its last configuration).
      try {
        xdsCache.set(proxyId, toResourceMap(proxyResources(snapshot)));
      } catch (err) {
        log.error("xds: cannot generate the proxy's resources; it keeps its previous configuration", { proxy: proxyId, error: err });
      }
    },
    remove: (proxyId) => void xdsCache.remove(proxyId),
  });
  const proxyless = createProxylessManager({
    datacenter: o.datacenter,
    cache: agentCache,
    types: { chain: types.chain, health: types.health, catalogServices: types.catalogServices },
    services: o.localAgent,
    identities: o.proxylessClients ?? [],
    clock: o.clock,
    logger: log.named("proxycfg"),
    publish(nodeId, snapshot) {
      try {
        xdsCache.set(nodeId, toResourceMap(proxylessResources(snapshot)));
      } catch (err) {
        log.error("xds: cannot generate the proxyless client's resources; it keeps its previous configuration", { node: nodeId, error: err });
      }
    },
    remove: (nodeId) => void xdsCache.remove(nodeId),
  });
  // Sidecars and gateways first: a cache key that is a connect-proxy or mesh-gateway ID is always an Envoy's.
  const isProxyless = (id: string) => !manager.has(id) && proxyless.accepts(id);
  const streamCache: XdsCache = {
    ...xdsCache,
    watch(nodeId, watcher) {
      const cancel = xdsCache.watch(nodeId, watcher);
      const release = isProxyless(nodeId) ? proxyless.acquire(nodeId) : undefined;
      return () => {
        cancel();
        release?.();
      };
    },
  };
  const service = createAdsService({
    cache: streamCache,
    resolveNode: resolveByProxyId((id) => proxyless.classify(id)),
    clock: o.clock,
    logger: log,
    ...(o.updatesPerSecond !== undefined ? { updatesPerSecond: o.updatesPerSecond } : {}),
    ...(o.metrics ? { metrics: o.metrics } : {}),
    ...(o.authorize ? { authorize: o.authorize } : {}),
  });
  let server;
  try {
    server = await serveAds({
      service, logger: log, host: o.host, port: o.port,
      ...(o.tls ? { tls: { material: o.tls.material, requireClientCert: o.tls.verifyIncoming } } : {}),
    });
  } catch (err) {
    manager.close();
    proxyless.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    address: `${server.host}:${server.port}`,
    manager,
    proxyless,
    cache: xdsCache,
    close: () =>
      (closing ??= (async () => {
        manager.close();
        proxyless.close();
        await server.close();
      })()),
  };
}
