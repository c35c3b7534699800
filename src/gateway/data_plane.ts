/**
 * The built-in mesh gateway data plane, assembled: the xDS client (./xds_client.ts) feeds the
 * configuration store (./xds_config.ts); each accepted configuration goes to the TCP proxy
 * (./proxy.ts), which routes by SNI (./client_hello.ts, ./sni_match.ts) over per-cluster balancers
 * (./balancer.ts); the admin endpoint (./admin.ts) serves on its own address. While the agent is
 * away the proxy keeps serving the last good configuration.
 */
import { createRegistry, toJson, type DescMessage } from "@bufbuild/protobuf";
import { anyUnpack, type Any } from "@bufbuild/protobuf/wkt";
import { ClusterSchema } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import { TlsInspectorSchema } from "../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import { SniClusterSchema } from "../gen/envoy/extensions/filters/network/sni_cluster/v3/sni_cluster_pb.ts";
import { TcpProxySchema } from "../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { dialTcp, listenTcp, serveHttp, type Clock, type HttpServerHandle, type Logger, type Rng } from "../platform/index.ts";
import { gatewayAdminHandler } from "./admin.ts";
import { createBalancer, type Balancer } from "./balancer.ts";
import { createClientHelloParser } from "./client_hello.ts";
import type { ClusterConfig } from "./config_types.ts";
import { createGatewayProxy, type GatewayProxy } from "./proxy.ts";
import { listenerMatcher } from "./sni_match.ts";
import { GatewayStats } from "./stats.ts";
import { startXdsClient, type AdsTls, type XdsClient } from "./xds_client.ts";
import { createGatewayConfigStore } from "./xds_config.ts";
import { GATEWAY_TYPE_URLS } from "./xds_sink.ts";

export interface MeshGatewayDataPlaneOptions {
  /** The agent's gRPC (xDS) address; `tls` when it serves TLS. */
  readonly xds: { readonly host: string; readonly port: number; readonly tls?: AdsTls; readonly protocol?: "delta" | "sotw"; readonly token?: string };
  /** node.id (the gateway's service ID) and node.cluster (its service name). */
  readonly node: { readonly id: string; readonly cluster: string };
  readonly version: string;
  /** Where the admin endpoint listens; undefined = none. */
  readonly admin?: { readonly host: string; readonly port: number };
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
}

export interface MeshGatewayDataPlane {
  readonly stats: GatewayStats;
  readonly proxy: GatewayProxy;
  readonly xds: XdsClient;
  /** The admin endpoint's bound address, if any. */
  readonly admin?: { readonly host: string; readonly port: number };
  /** Whether a configuration with clusters and listeners has been applied. */
  ready(): boolean;
  close(): Promise<void>;
}

/** Every message type the held resources may carry, for JSON dumps. */
const DUMP_REGISTRY = createRegistry(ClusterSchema, ClusterLoadAssignmentSchema, ListenerSchema, TlsInspectorSchema, SniClusterSchema, TcpProxySchema);

const DUMP_TYPES: readonly [string, string, DescMessage][] = [
  [GATEWAY_TYPE_URLS.cluster, "type.googleapis.com/envoy.admin.v3.ClustersConfigDump", ClusterSchema],
  [GATEWAY_TYPE_URLS.endpoint, "type.googleapis.com/envoy.admin.v3.EndpointsConfigDump", ClusterLoadAssignmentSchema],
  [GATEWAY_TYPE_URLS.listener, "type.googleapis.com/envoy.admin.v3.ListenersConfigDump", ListenerSchema],
];

function resourceJson(any: Any, schema: DescMessage): unknown {
  const m = anyUnpack(any, schema);
  return m ? toJson(schema, m, { registry: DUMP_REGISTRY }) : { undecodable: any.typeUrl };
}

/** Starts the data plane: the admin endpoint first (so /ready answers), then the xDS client. */
export async function startMeshGatewayDataPlane(o: MeshGatewayDataPlaneOptions): Promise<MeshGatewayDataPlane> {
  const log = o.logger;
  const stats = new GatewayStats();
  const store = createGatewayConfigStore();
  const balancers = new Map<string, Balancer>();
  let configured = false;
  const pickerOf = (c: ClusterConfig): Balancer => {
    const b = balancers.get(c.name);
    if (b) {
      b.update(c);
      return b;
    }
    const fresh = createBalancer(c, o.clock);
    balancers.set(c.name, fresh);
    return fresh;
  };
  stats.collect(() => {
    for (const [name, b] of balancers) {
      const s = b.stats();
      const scope = { kind: "cluster", name } as const;
      stats.set(scope, "outlier_detection.ejections_active", s.ejectionsActive);
      stats.set(scope, "outlier_detection.ejections_enforced_total", s.ejectionsEnforcedTotal, "counter");
      stats.set(scope, "outlier_detection.ejections_overflow", s.ejectionsOverflow, "counter");
      stats.set(scope, "lb_healthy_panic", s.healthyPanic, "counter");
      stats.set(scope, "membership_healthy", b.status().filter((e) => e.healthy && !e.ejected).length);
      stats.set(scope, "membership_total", b.status().length);
    }
  });
  const proxy = createGatewayProxy({
    clock: o.clock, logger: log.named("proxy"), stats, listen: listenTcp, dial: dialTcp,
    helloParser: () => createClientHelloParser(),
    chainMatcher: (l) => {
      const m = listenerMatcher(l);
      return (sni) => m.match(sni);
    },
    picker: pickerOf,
    dropPicker: (name) => void balancers.delete(name),
  });
  // Applies run one after another, newest last; a failed bind is logged by the proxy.
  let applying = Promise.resolve();
  store.onChange((config) => {
    applying = applying.then(async () => {
      await proxy.apply(config);
      if (config.listeners.size > 0) configured = true;
    }).catch((err) => log.error("applying a configuration failed", { error: err }));
  });

  let xds: XdsClient | undefined;
  let admin: HttpServerHandle | undefined;
  const ready = () => configured;
  if (o.admin) {
    admin = await serveHttp({
      host: o.admin.host, port: o.admin.port,
      handler: gatewayAdminHandler({
        stats, ready, config: () => store.current(),
        ejected: (cluster, address, port) => balancers.get(cluster)?.status().some((e) => e.address === address && e.port === port && e.ejected) ?? false,
        configDump: () => ({
          xds: xds?.state(),
          configs: DUMP_TYPES.map(([typeUrl, dumpType, schema]) => ({
            "@type": dumpType,
            resources: [...(xds?.resources(typeUrl) ?? new Map())].map(([name, held]) => ({ name, version: held.version, resource: resourceJson(held.resource, schema) })),
          })),
        }),
      }),
      onError: (err) => log.error("admin request failed", { error: err }),
    });
    log.info("admin endpoint", { address: `${admin.host}:${admin.port}` });
  }
  xds = startXdsClient({
    host: o.xds.host, port: o.xds.port, ...(o.xds.tls ? { tls: o.xds.tls } : {}), node: o.node, version: o.version,
    protocol: o.xds.protocol ?? "delta", ...(o.xds.token ? { token: o.xds.token } : {}),
    sink: store, clock: o.clock, rng: o.rng, logger: log.named("xds"),
    onEvent: (e) => {
      if (e.kind === "rejected") log.warn("rejected an xDS update (NACK); keeping the last good configuration", { type: e.typeUrl, version: e.version, reason: e.reason });
      else if (e.kind === "disconnected") log.warn("lost the agent's xDS stream; serving the last good configuration", { error: e.error, retry_in_ms: e.retryInMs });
      else if (e.kind === "connected") log.info("connected to the agent's xDS stream");
    },
  });
  const client = xds;
  let closing: Promise<void> | undefined;
  return {
    stats, proxy, xds: client, ready,
    ...(admin ? { admin: { host: admin.host, port: admin.port } } : {}),
    close: () =>
      (closing ??= (async () => {
        await client.close();
        await applying;
        await proxy.close();
        await admin?.close();
      })()),
  };
}
