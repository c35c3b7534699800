/**
 * Agent settings for WAN federation through mesh gateways (Consul 1.8's
 * `connect.enable_mesh_gateway_wan_federation`, `primary_gateways`, `primary_gateways_interval`, plus
 * `disable_primary_gateway_fallback`) and the checks that refuse a configuration that cannot federate.
 *
 * config.ts parses the keys and throws ConfigError with the message `federationProblem` returns; this
 * file holds no I/O. The server certificate's `<node>.server.<dc>.<domain>` name is checked where the
 * TLS files are read, at start (tls_files.ts).
 */
import { parseHostPort } from "../membership/index.ts";
import type { RuntimeConfig } from "./config.ts";

/** The parsed settings; nothing is resolved (no DNS) here. */
export interface FederationSettings {
  /** `connect.enable_mesh_gateway_wan_federation`: server traffic to other datacenters goes through mesh gateways. */
  readonly meshGatewayWanFederation: boolean;
  /**
   * `primary_gateways` (Consul's repeatable flag `-primary-gateway`): `host:port` WAN addresses of the primary's mesh gateways,
   * used by a secondary's servers until replicated federation states name them, and as a fallback after
   * (PR #7931). Lists from several sources accumulate, as Consul's slice settings do.
   */
  readonly primaryGateways: readonly string[];
  /** `primary_gateways_interval`: between attempts to resolve `primary_gateways`, ms (default 30 s, at least 1 s). */
  readonly primaryGatewaysIntervalMs: number;
  /**
   * `disable_primary_gateway_fallback`: a secondary never dials the primary's gateways directly once
   * federated, only through its own gateways. Not in any Consul release: proposed in Consul PR #9637
   * (closed unmerged); Causeway keeps its key and RuntimeConfig name.
   */
  readonly disablePrimaryGatewayFallback: boolean;
}

export const DEFAULT_FEDERATION: FederationSettings = {
  meshGatewayWanFederation: false, primaryGateways: [], primaryGatewaysIntervalMs: 30_000, disablePrimaryGatewayFallback: false,
};

/** runtime.go: "The minimum allowed value is 1 second". */
export const MIN_PRIMARY_GATEWAYS_INTERVAL_MS = 1_000;

const WANFED = "'connect.enable_mesh_gateway_wan_federation = true'";

/**
 * The first reason `cfg` cannot be used, or undefined (an empty `primaryDatacenter` means the agent's
 * own datacenter). Consul's builder.go checks come first, with its wording; then Causeway's own:
 * - node names without "." (wanfed.SplitNodeName needs exactly `<node>.<dc>`; issue #12614);
 * - `primary_gateways` entries must be `host:port`: Consul dials them as given and has no default port
 *   (issue #13070); go-discover strings are refused, Causeway has no cloud auto-join;
 * - a secondary's server needs a way to learn the primary's gateways: `primary_gateways`, or a LAN join
 *   address (`start_join`/`retry_join`) through which it can join servers of its own datacenter that
 *   already hold replicated federation states. Consul starts without either and never reaches the primary;
 * - TLS on the server port with verification both ways, as Consul's WAN federation guide sets it up
 *   (Consul itself only fails at the first dial: "cannot dial via a mesh gateway when outgoing TLS is
 *   disabled", and forces mutual TLS with hostname checks on that path whatever verify_* say).
 */
export function federationProblem(cfg: RuntimeConfig): string | undefined {
  const f = cfg.federation;
  const wanfed = f.meshGatewayWanFederation;
  const primaryDc = cfg.primaryDatacenter || cfg.datacenter;
  const secondary = primaryDc !== cfg.datacenter;
  if (wanfed && !cfg.server) return `${WANFED} requires 'server = true'`;
  if (wanfed && cfg.nodeName.includes("/")) return `${WANFED} requires that 'node_name' not contain '/' characters`;
  if (wanfed && cfg.nodeName.includes(".")) {
    return `${WANFED} requires that 'node_name' not contain '.' characters: the WAN pool names this server "<node_name>.<datacenter>", which must split in exactly two parts`;
  }
  if (wanfed && cfg.gossip.retryJoinWan.length > 0) return `'retry_join_wan' is incompatible with ${WANFED}`;
  if (f.primaryGateways.length > 0) {
    if (!cfg.server) return "'primary_gateways' requires 'server = true'";
    if (!secondary) return "'primary_gateways' should only be configured in a secondary datacenter";
  }
  for (const entry of f.primaryGateways) {
    const problem = gatewayAddressProblem(entry);
    if (problem) return `primary_gateways entry ${JSON.stringify(entry)} ${problem}`;
  }
  if (f.primaryGatewaysIntervalMs < MIN_PRIMARY_GATEWAYS_INTERVAL_MS) {
    return `primary_gateways_interval must be at least 1s, got ${f.primaryGatewaysIntervalMs}ms`;
  }
  if (!wanfed) return undefined;
  const g = cfg.gossip;
  if (secondary && f.primaryGateways.length === 0 && g.startJoin.length === 0 && g.retryJoin.length === 0) {
    return `${WANFED} in secondary datacenter "${cfg.datacenter}" (primary_datacenter "${primaryDc}") requires 'primary_gateways' ` +
      "(host:port of the primary's mesh gateways), or 'start_join'/'retry_join' addresses of servers of this datacenter that are already federated";
  }
  const t = cfg.tls;
  const missing = [
    ...(t.caFile ? [] : ["ca_file"]),
    ...(t.certFile ? [] : ["cert_file"]),
    ...(t.keyFile ? [] : ["key_file"]),
    ...(t.verifyIncoming || t.verifyIncomingRpc ? [] : ["verify_incoming_rpc (or verify_incoming)"]),
    ...(t.verifyOutgoing ? [] : ["verify_outgoing"]),
    ...(t.verifyServerHostname ? [] : ["verify_server_hostname"]),
  ];
  if (missing.length) return `${WANFED} requires TLS between servers; missing: ${missing.join(", ")}`;
  return undefined;
}

function gatewayAddressProblem(entry: string): string | undefined {
  if (entry.includes("provider=")) return "is a cloud auto-join (go-discover) expression, which Causeway does not support: give host:port";
  try {
    parseHostPort(entry);
    return undefined;
  } catch {
    return "must be host:port, the WAN address and port of a mesh gateway in the primary datacenter (e.g. \"10.1.2.3:8443\")";
  }
}
