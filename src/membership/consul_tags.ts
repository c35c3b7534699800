/**
 * Consul's agent tags on serf members, and WAN pool naming. Pure functions.
 *
 * Tag names and meanings follow Consul 1.8: servers set them in agent/consul/server_serf.go (setupSerf),
 * clients in agent/consul/client_serf.go, and agent/metadata/server.go `IsConsulServer` parses them back.
 * All numbers travel as decimal strings, flags as "1" (presence is what counts for `bootstrap`,
 * `nonvoter`, `use_tls`). Feature flags are `ft_<name>` = integer (`AddFeatureFlags`; "fs" = federation
 * states, advertised as `ft_fs=1`).
 */
import type { MemberStatus } from "./serf.ts";
import type { Tags } from "./tags.ts";

/** Consul's ProtocolVersionMin / Max (agent/consul/config.go) and the default protocol and Raft versions. */
export const CONSUL_PROTOCOL_MIN = 2;
export const CONSUL_PROTOCOL_MAX = 3;
export const CONSUL_PROTOCOL_DEFAULT = 2;
export const CONSUL_RAFT_PROTOCOL_DEFAULT = 3;

/** Feature flag names (without the `ft_` prefix). */
export const FEATURE_FEDERATION_STATES = "fs";
const FEATURE_PREFIX = "ft_";

/** What `serverTags` needs: the server's own settings. */
export interface ServerTagOptions {
  readonly datacenter: string;
  /** Node ID (UUID). */
  readonly nodeId: string;
  /** Server RPC port (default 8300). */
  readonly port: number;
  /** Build string; must contain `x.y.z` (Consul's `build` is `<version>:<commit>`). */
  readonly build: string;
  readonly protocolVersion?: number;
  readonly raftVersion?: number;
  /** `-bootstrap` (single-server bootstrap mode). */
  readonly bootstrap?: boolean;
  /** `-bootstrap-expect N`; 0 or absent sets no tag. */
  readonly bootstrapExpect?: number;
  /** WAN gossip port, advertised on the LAN pool only (pass it for the LAN pool, omit for WAN). */
  readonly wanJoinPort?: number;
  readonly nonVoter?: boolean;
  readonly useTls?: boolean;
  /** Network segment ("" = default segment; Consul always sets the tag). */
  readonly segment?: string;
  /** Feature flags to advertise as `ft_<name>=1`, e.g. [FEATURE_FEDERATION_STATES]. */
  readonly features?: readonly string[];
}

/** What `clientTags` needs. */
export interface ClientTagOptions {
  readonly datacenter: string;
  readonly nodeId: string;
  readonly build: string;
  readonly protocolVersion?: number;
  readonly segment?: string;
}

/** A Consul server as seen in a gossip pool (metadata.Server). */
export interface ServerInfo {
  /** Member name: `<node>` on the LAN pool, `<node>.<dc>` on the WAN pool. */
  readonly name: string;
  /** Node name without the `.<dc>` suffix. */
  readonly shortName: string;
  readonly id: string;
  readonly datacenter: string;
  readonly segment: string;
  /** Server RPC port (`port` tag). */
  readonly port: number;
  /** `<member host>:<port>` (IPv6 hosts bracketed): where to dial the server's RPC port. */
  readonly rpcAddr: string;
  /** 0 when absent. */
  readonly wanJoinPort: number;
  readonly bootstrap: boolean;
  /** 0 when absent. */
  readonly expect: number;
  /** The `x.y.z` part of the build tag. */
  readonly build: string;
  readonly version: number;
  readonly raftVersion: number;
  readonly readReplica: boolean;
  readonly useTls: boolean;
  /** Feature flags by name without prefix, e.g. `{ fs: 1 }`. */
  readonly features: Readonly<Record<string, number>>;
  readonly status: MemberStatus;
}

/** The member fields `parseServer` reads (a serf member satisfies this). */
export interface TaggedMember {
  readonly name: string;
  /** Gossip address "host:port" (or a bare host). */
  readonly addr: string;
  readonly tags: Tags;
  readonly status: MemberStatus;
}

const int = (n: number, what: string): string => {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`consul tags: ${what} must be a non-negative integer, got ${n}`);
  return String(n);
};
const port = (n: number, what: string): string => {
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new RangeError(`consul tags: ${what} must be a port 1-65535, got ${n}`);
  return String(n);
};
const VERSION_RE = /\d+\.\d+\.\d+/;

function common(role: "consul" | "node", o: ClientTagOptions): Record<string, string> {
  if (!o.datacenter) throw new RangeError("consul tags: datacenter must not be empty");
  if (!VERSION_RE.test(o.build)) throw new RangeError(`consul tags: build ${JSON.stringify(o.build)} has no x.y.z version`);
  return {
    role,
    dc: o.datacenter,
    segment: o.segment ?? "",
    id: o.nodeId,
    vsn: int(o.protocolVersion ?? CONSUL_PROTOCOL_DEFAULT, "protocolVersion"),
    vsn_min: String(CONSUL_PROTOCOL_MIN),
    vsn_max: String(CONSUL_PROTOCOL_MAX),
    build: o.build,
  };
}

/** Tags a server advertises (setupSerf). Throws RangeError on an empty dc, a bad port or build. */
export function serverTags(o: ServerTagOptions): Tags {
  const t = common("consul", o);
  t["raft_vsn"] = int(o.raftVersion ?? CONSUL_RAFT_PROTOCOL_DEFAULT, "raftVersion");
  t["port"] = port(o.port, "port");
  if (o.wanJoinPort !== undefined && o.wanJoinPort > 0) t["wan_join_port"] = port(o.wanJoinPort, "wanJoinPort");
  if (o.bootstrap) t["bootstrap"] = "1";
  if (o.bootstrapExpect) t["expect"] = int(o.bootstrapExpect, "bootstrapExpect");
  if (o.nonVoter) t["nonvoter"] = "1";
  if (o.useTls) t["use_tls"] = "1";
  for (const f of o.features ?? []) {
    if (!f) throw new RangeError("consul tags: empty feature flag name");
    t[FEATURE_PREFIX + f] = "1";
  }
  return t;
}

/** Tags a client agent advertises on the LAN pool (role "node"). */
export function clientTags(o: ClientTagOptions): Tags {
  return common("node", o);
}

/** Strict decimal integer (Go strconv.Atoi for the values Consul writes); undefined otherwise. */
function atoi(s: string | undefined): number | undefined {
  if (s === undefined || !/^[+-]?\d{1,15}$/.test(s)) return undefined;
  return Number(s);
}

/** Splits "host:port", "[v6]:port" or a bare host into its host part. */
export function hostOf(addr: string): string {
  if (addr.startsWith("[")) {
    const end = addr.indexOf("]");
    return end < 0 ? addr : addr.slice(1, end);
  }
  const first = addr.indexOf(":");
  if (first < 0) return addr;
  return first === addr.lastIndexOf(":") ? addr.slice(0, first) : addr; // bare IPv6 has many colons
}

/** Joins host and port, bracketing IPv6 hosts (net.JoinHostPort). */
export function joinHostPort(host: string, p: number): string {
  return host.includes(":") ? `[${host}]:${p}` : `${host}:${p}`;
}

/**
 * metadata.IsConsulServer: the server described by a member's tags, or undefined when the member is
 * not a server (`role` != "consul") or a required tag is missing or malformed: `dc` (Causeway also
 * requires it non-empty), `port` (1-65535), `vsn`, a `build` containing x.y.z; and, when present,
 * `expect`, `wan_join_port`, `raft_vsn` and every `ft_*` value must be integers.
 */
export function parseServer(m: TaggedMember): ServerInfo | undefined {
  const t = m.tags;
  if (t["role"] !== "consul") return undefined;
  const dc = t["dc"];
  if (!dc) return undefined;
  const p = atoi(t["port"]);
  if (p === undefined || p < 1 || p > 65535) return undefined;
  const version = atoi(t["vsn"]);
  if (version === undefined) return undefined;
  const build = VERSION_RE.exec(t["build"] ?? "")?.[0];
  if (build === undefined) return undefined;
  const optional = (k: string): number | null => {
    if (!Object.hasOwn(t, k)) return 0;
    return atoi(t[k]) ?? null;
  };
  const expect = optional("expect"), wanJoinPort = optional("wan_join_port"), raftVersion = optional("raft_vsn");
  if (expect === null || wanJoinPort === null || raftVersion === null) return undefined;
  const features: Record<string, number> = {};
  for (const k of Object.keys(t).sort()) {
    if (!k.startsWith(FEATURE_PREFIX)) continue;
    const v = atoi(t[k]);
    if (v === undefined) return undefined;
    features[k.slice(FEATURE_PREFIX.length)] = v;
  }
  const suffix = `.${dc}`;
  return {
    name: m.name,
    shortName: m.name.endsWith(suffix) ? m.name.slice(0, -suffix.length) : m.name,
    id: t["id"] ?? "",
    datacenter: dc,
    segment: t["segment"] ?? "",
    port: p,
    rpcAddr: joinHostPort(hostOf(m.addr), p),
    wanJoinPort,
    bootstrap: Object.hasOwn(t, "bootstrap"),
    expect,
    build,
    version,
    raftVersion,
    readReplica: Object.hasOwn(t, "nonvoter") || Object.hasOwn(t, "read_replica"),
    useTls: Object.hasOwn(t, "use_tls"),
    features,
    status: m.status,
  };
}

/** True for a client agent's tags (role "node"). */
export function isClient(tags: Tags): boolean {
  return tags["role"] === "node";
}

/** True when the server advertises feature `name` (e.g. "fs") with a value of 1 or more. */
export function serverHasFeature(s: ServerInfo, name: string): boolean {
  return (s.features[name] ?? 0) >= 1;
}

/**
 * WAN pool member name `<node>.<dc>` (server_serf.go). Throws RangeError when either part is empty or
 * contains a dot (wanfed.SplitNodeName needs exactly two dot-separated parts).
 */
export function wanName(node: string, dc: string): string {
  for (const [what, v] of [["node", node], ["datacenter", dc]] as const) {
    if (!v || v.includes(".")) throw new RangeError(`wan name: ${what} ${JSON.stringify(v)} must be non-empty without dots`);
  }
  return `${node}.${dc}`;
}

/** Inverse of `wanName` (wanfed.SplitNodeName): undefined unless the name is exactly `<node>.<dc>`. */
export function parseWanName(name: string): { readonly node: string; readonly dc: string } | undefined {
  const parts = name.split(".");
  if (parts.length !== 2 || !parts[0] || !parts[1]) return undefined;
  return { node: parts[0], dc: parts[1] };
}
