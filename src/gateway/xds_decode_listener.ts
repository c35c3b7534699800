/**
 * Listener -> ListenerConfig for the built-in gateway, the subset Consul's mesh gateway uses: a TCP
 * socket address; the tls_inspector listener filter (required when a chain matches on server_names or
 * routes with sni_cluster, since both need the SNI); filter chains matching on `server_names` only, each
 * with an optional `envoy.filters.network.sni_cluster` followed by `envoy.filters.network.tcp_proxy`
 * (cluster, stat_prefix, idle_timeout). This data plane proxies TCP by SNI: any other network filter
 * (http_connection_manager, rbac, ...), TLS termination (a chain's transport_socket) and any other
 * match field are refused with the reason. Conflicting server names are refused as Envoy does.
 */
import type { Any } from "@bufbuild/protobuf/wkt";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import { FilterChainMatchSchema, FilterChainSchema, FilterSchema, ListenerFilterSchema, type Filter, type FilterChain, type ListenerFilter } from "../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { TlsInspectorSchema } from "../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import { SniClusterSchema } from "../gen/envoy/extensions/filters/network/sni_cluster/v3/sni_cluster_pb.ts";
import { TcpProxySchema } from "../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import type { FilterChainConfig, ListenerConfig } from "./config_types.ts";
import { compileChains } from "./sni_match.ts";
import { at, durationMs, isIp, Nack, onlyFields, socketAddressOf, typeUrlOf, unpack } from "./xds_strict.ts";

const TLS_INSPECTOR_NAMES = ["envoy.filters.listener.tls_inspector", "envoy.listener.tls_inspector"];
const SNI_CLUSTER_NAMES = ["envoy.filters.network.sni_cluster"];

/** Decodes a Listener resource named `name`; throws Nack. */
export function decodeListener(any: Any, name: string): ListenerConfig {
  const path = `Listener ${name}`;
  const l = unpack(any, ListenerSchema, path);
  if (l.name !== name) throw new Nack(`${path}: resource is named ${JSON.stringify(l.name)}`);
  onlyFields(ListenerSchema, l, ["name", "address", "filter_chains", "listener_filters", "traffic_direction"], path);
  const { address, port } = socketAddressOf(l.address, at(path, "address"), 0);
  // Envoy binds only IP literals: "malformed IP address" for a host name.
  if (!isIp(address)) throw new Nack(`${at(path, "address.socket_address")}: malformed IP address: ${address}`);
  let tlsInspector = false;
  for (const [i, f] of l.listenerFilters.entries()) tlsInspector = isTlsInspector(f, `${path}.listener_filters[${i}]`) || tlsInspector;
  const chains = l.filterChains.map((c, i) => decodeChain(c, `${path}.filter_chains[${i}]`));
  const needsSni = chains.findIndex((c) => c.serverNames.length > 0 || c.route.kind === "sni-cluster");
  if (needsSni >= 0 && !tlsInspector) {
    throw new Nack(`${path}: filter_chains[${needsSni}] needs the SNI (server_names or sni_cluster) but the listener has no tls_inspector listener filter`);
  }
  const compiled = compileChains(chains);
  if (!compiled.ok) throw new Nack(`${path}: ${compiled.error}`);
  return { name, address, port, chains, tlsInspector };
}

/** True for tls_inspector (with an empty config); any other listener filter is refused. */
function isTlsInspector(f: ListenerFilter, path: string): boolean {
  onlyFields(ListenerFilterSchema, f, ["name", "typed_config"], path);
  if (f.configType.case === "typedConfig") {
    if (f.configType.value.typeUrl !== typeUrlOf(TlsInspectorSchema)) {
      throw new Nack(`${path}: listener filter ${f.name} (${f.configType.value.typeUrl}) is not supported (only tls_inspector)`);
    }
    const cfg = unpack(f.configType.value, TlsInspectorSchema, at(path, "typed_config"));
    onlyFields(TlsInspectorSchema, cfg, [], at(path, "typed_config"));
    return true;
  }
  if (!TLS_INSPECTOR_NAMES.includes(f.name)) throw new Nack(`${path}: listener filter ${f.name} is not supported (only tls_inspector)`);
  return true;
}

function decodeChain(c: FilterChain, path: string): FilterChainConfig {
  if (c.transportSocket) throw new Nack(`${path}: transport_socket is not supported: the built-in gateway passes TLS through and never terminates it`);
  onlyFields(FilterChainSchema, c, ["filter_chain_match", "filters", "name"], path);
  const serverNames = c.filterChainMatch ? [...c.filterChainMatch.serverNames] : [];
  if (c.filterChainMatch) onlyFields(FilterChainMatchSchema, c.filterChainMatch, ["server_names"], at(path, "filter_chain_match"));
  const kinds = c.filters.map((f, i) => filterKind(f, `${path}.filters[${i}]`));
  const shape = kinds.join(",");
  if (shape !== "tcp_proxy" && shape !== "sni_cluster,tcp_proxy") {
    throw new Nack(`${path}: filters must be tcp_proxy, optionally preceded by sni_cluster (got ${shape ? `[${shape}]` : "none"})`);
  }
  const tcpIndex = kinds.length - 1;
  const tcp = tcpProxyOf(c.filters[tcpIndex]!, `${path}.filters[${tcpIndex}]`);
  return {
    serverNames,
    route: kinds[0] === "sni_cluster" ? { kind: "sni-cluster" } : tcp.cluster === "" ? noCluster(path) : { kind: "cluster", cluster: tcp.cluster },
    statPrefix: tcp.statPrefix,
    ...(tcp.idleTimeoutMs !== undefined ? { idleTimeoutMs: tcp.idleTimeoutMs } : {}),
  };
}

function noCluster(path: string): never {
  throw new Nack(`${path}: tcp_proxy has an empty cluster and no sni_cluster filter before it`);
}

/** Which of the two supported network filters `f` is; anything else is refused with its name. */
function filterKind(f: Filter, path: string): "sni_cluster" | "tcp_proxy" {
  onlyFields(FilterSchema, f, ["name", "typed_config"], path);
  const url = f.configType.case === "typedConfig" ? f.configType.value.typeUrl : undefined;
  if (url === typeUrlOf(TcpProxySchema)) return "tcp_proxy";
  if (url === typeUrlOf(SniClusterSchema) || (url === undefined && SNI_CLUSTER_NAMES.includes(f.name))) {
    if (f.configType.case === "typedConfig") onlyFields(SniClusterSchema, unpack(f.configType.value, SniClusterSchema, at(path, "typed_config")), [], at(path, "typed_config"));
    return "sni_cluster";
  }
  if (url === undefined && f.name === "envoy.filters.network.tcp_proxy") throw new Nack(`${path}: tcp_proxy needs a typed_config (stat_prefix is required)`);
  throw new Nack(
    `${path}: network filter ${f.name || "(unnamed)"}${url ? ` (${url})` : ""} is not supported: the built-in gateway is a TCP proxy routing by SNI (sni_cluster, tcp_proxy only)`,
  );
}

function tcpProxyOf(f: Filter, path: string): { cluster: string; statPrefix: string; idleTimeoutMs?: number } {
  const cp = at(path, "typed_config");
  const t = unpack(f.configType.value as Any, TcpProxySchema, cp);
  onlyFields(TcpProxySchema, t, ["stat_prefix", "cluster", "idle_timeout"], cp);
  if (t.statPrefix === "") throw new Nack(`${cp}.stat_prefix: must not be empty`);
  if (t.clusterSpecifier.case !== "cluster") throw new Nack(`${cp}: cluster is required`);
  const idleTimeoutMs = t.idleTimeout ? durationMs(t.idleTimeout, `${cp}.idle_timeout`) : undefined;
  return { cluster: t.clusterSpecifier.value, statPrefix: t.statPrefix, ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}) };
}
