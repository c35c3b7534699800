/**
 * Test kit: snapshots of a `web` sidecar shaped like Consul's proxycfg test fixtures (TestConfigSnapshot):
 * public port 9999, app on 127.0.0.1:8080, upstream `db` on 127.0.0.1:9191 and prepared query
 * `geo-cache` on 127.10.10.10:8181, trust domain 11111111-2222-3333-4444-555555555555.consul. Chains are
 * compiled from config entries by the real compiler; certificates are real (testdata/certs).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compileDiscoveryChain, decodeConfigEntry, validateConfigEntry, type CompiledDiscoveryChain, type IssuedCert } from "../../connect/index.ts";
import type { CheckServiceNode, HealthStatus, Intention, MeshGatewayMode, Upstream, Weights } from "../../model/index.ts";
import { upstreamIdentifier, type SidecarSnapshot } from "../../proxycfg/index.ts";

export const TRUST_DOMAIN = "11111111-2222-3333-4444-555555555555.consul";
const certs = join(import.meta.dirname ?? ".", "testdata", "certs");
const pem = (f: string) => readFileSync(join(certs, f), "utf8");

export const LEAF: IssuedCert = {
  SerialNumber: "01",
  CertPEM: pem("leaf.pem"),
  PrivateKeyPEM: pem("leaf-key.pem"),
  Service: "web",
  ServiceURI: `spiffe://${TRUST_DOMAIN}/ns/default/dc/dc1/svc/web`,
  ValidAfter: "2020-01-01T00:00:00Z",
  ValidBefore: "2120-01-01T00:00:00Z",
  CreateIndex: 1,
  ModifyIndex: 1,
};

export interface InstanceOptions {
  readonly node: string;
  readonly address: string;
  readonly datacenter?: string;
  readonly service?: string;
  readonly port?: number;
  readonly kind?: "connect-proxy" | "mesh-gateway";
  readonly status?: HealthStatus | readonly HealthStatus[];
  readonly weights?: Weights;
  readonly wan?: { readonly Address: string; readonly Port: number };
  readonly meta?: Readonly<Record<string, string>>;
}

/** A sidecar (or gateway) instance with its node and checks, as /v1/health/connect returns it. */
export function instance(o: InstanceOptions): CheckServiceNode {
  const service = o.service ?? "db";
  const kind = o.kind ?? "connect-proxy";
  const name = kind === "mesh-gateway" ? "mesh-gateway" : `${service}-sidecar-proxy`;
  const statuses = o.status === undefined ? ["passing" as const] : typeof o.status === "string" ? [o.status] : o.status;
  return {
    Node: { ID: "", Node: o.node, Address: o.address, Datacenter: o.datacenter ?? "dc1", TaggedAddresses: {}, Meta: {}, CreateIndex: 1, ModifyIndex: 1 },
    Service: {
      Kind: kind,
      ID: name,
      Service: name,
      Tags: null,
      Address: "",
      ...(o.wan ? { TaggedAddresses: { wan: o.wan } } : {}),
      Meta: o.meta ?? null,
      Port: o.port ?? 8080,
      Weights: o.weights ?? { Passing: 1, Warning: 1 },
      EnableTagOverride: false,
      Proxy: { DestinationServiceName: kind === "mesh-gateway" ? "" : service, MeshGateway: {}, Expose: {} },
      Connect: {},
      CreateIndex: 1,
      ModifyIndex: 1,
    },
    Checks: statuses.map((s, i) => ({
      Node: o.node,
      CheckID: `check-${i}`,
      Name: `check ${i}`,
      Status: s,
      Notes: "",
      Output: "",
      ServiceID: name,
      ServiceName: name,
      ServiceTags: null,
      Type: "ttl",
      Definition: {},
      CreateIndex: 1,
      ModifyIndex: 1,
    })),
  };
}

/** Two healthy `db` sidecars in `dc` (10.10.1.x in dc1, 10.20.1.x in dc2, 10.30.1.x in dc3). */
export function dbInstances(dc = "dc1", status: HealthStatus = "passing", service = "db"): CheckServiceNode[] {
  const net = { dc1: "10.10.1", dc2: "10.20.1", dc3: "10.30.1" }[dc] ?? "10.99.1";
  return [1, 2].map((i) => instance({ node: `${dc}-node${i}`, address: `${net}.${i}`, datacenter: dc, service, status }));
}

/** Mesh gateways of `dc`: LAN 10.x.1.x:8443 and WAN 198.18.x.x:443. */
export function gateways(dc: string): CheckServiceNode[] {
  const n = { dc1: 1, dc2: 2, dc3: 3 }[dc] ?? 9;
  return [1, 2].map((i) =>
    instance({ node: `${dc}-gw${i}`, address: `10.${n}0.2.${i}`, datacenter: dc, kind: "mesh-gateway", port: 8443, wan: { Address: `198.18.${n}.${i}`, Port: 443 } }),
  );
}

/**
 * Mesh gateways of `dc` addressed by host name, one per status: LAN `gw<i>.<dc>.lan.example.com:8443`,
 * WAN `gw<i>.<dc>.example.com:443`. With `ipToo` a last, healthy gateway addressed by IP (`gateways`'
 * first, node `<dc>-gw-ip`) makes the mix that Consul resolves in favour of the host names.
 */
export function hostnameGateways(dc: string, statuses: readonly HealthStatus[] = ["passing", "passing"], ipToo = false): CheckServiceNode[] {
  const named = statuses.map((status, j) =>
    instance({ node: `${dc}-gw${j + 1}`, address: `gw${j + 1}.${dc}.lan.example.com`, datacenter: dc, kind: "mesh-gateway", port: 8443, status, wan: { Address: `gw${j + 1}.${dc}.example.com`, Port: 443 } }),
  );
  const ip = { ...gateways(dc)[0]!, Node: { ...gateways(dc)[0]!.Node, Node: `${dc}-gw-ip` } };
  return ipToo ? [...named, ip] : named;
}

export const DB: Upstream = { DestinationType: "service", DestinationName: "db", LocalBindPort: 9191 };
export const GEO_CACHE: Upstream = { DestinationType: "prepared_query", DestinationName: "geo-cache", LocalBindAddress: "127.10.10.10", LocalBindPort: 8181 };

export interface ChainOptions {
  readonly entries?: readonly Record<string, unknown>[];
  readonly protocol?: string;
  readonly connectTimeoutMs?: number;
  readonly meshGateway?: MeshGatewayMode;
  readonly datacenter?: string;
}

/** Compiles the chain of `service` as proxycfg would request it for an upstream of the dc1 sidecar. */
export function chain(service: string, o: ChainOptions = {}): CompiledDiscoveryChain {
  const entries = (o.entries ?? []).map((raw) => {
    const e = decodeConfigEntry(raw);
    validateConfigEntry(e);
    return e;
  });
  return compileDiscoveryChain({
    serviceName: service,
    evaluateInDatacenter: o.datacenter ?? "dc1",
    evaluateInTrustDomain: TRUST_DOMAIN,
    useInDatacenter: "dc1",
    ...(o.protocol ? { overrideProtocol: o.protocol } : {}),
    ...(o.connectTimeoutMs ? { overrideConnectTimeoutMs: o.connectTimeoutMs } : {}),
    ...(o.meshGateway ? { overrideMeshGateway: { Mode: o.meshGateway } } : {}),
    entries,
  });
}

/** Consul-shaped intention for destination `web`. */
export function intention(source: string, action: "allow" | "deny", precedence: number): Intention {
  return {
    ID: `ixn-${source}`, Description: "", SourceNS: "default", SourceName: source, DestinationNS: "default", DestinationName: "web",
    SourceType: "consul", Action: action, DefaultAddr: "", DefaultPort: 0, Meta: {}, Precedence: precedence,
    CreatedAt: "2020-01-01T00:00:00Z", UpdatedAt: "2020-01-01T00:00:00Z", Hash: "", CreateIndex: 1, ModifyIndex: 1,
  };
}

/** The base snapshot: db (default chain, two healthy instances) and geo-cache (two results), no intentions. */
export function baseSnapshot(): SidecarSnapshot {
  return {
    Kind: "connect-proxy",
    ProxyID: "web-sidecar-proxy",
    Service: "web-sidecar-proxy",
    Address: "0.0.0.0",
    Port: 9999,
    ServiceMeta: {},
    TaggedAddresses: {},
    Proxy: {
      DestinationServiceName: "web",
      DestinationServiceID: "web",
      LocalServiceAddress: "127.0.0.1",
      LocalServicePort: 8080,
      Config: {},
      Upstreams: [DB, GEO_CACHE],
      MeshGateway: {},
      Expose: {},
    },
    Datacenter: "dc1",
    AdvertiseAddrLAN: "10.0.0.1",
    Roots: {
      ActiveRootID: "root-1",
      TrustDomain: TRUST_DOMAIN,
      Roots: [
        {
          ID: "root-1", Name: "Consul CA Root Cert", SerialNumber: 7, SigningKeyID: "", ExternalTrustDomain: "11111111-2222-3333-4444-555555555555",
          NotBefore: "2020-01-01T00:00:00Z", NotAfter: "2120-01-01T00:00:00Z", RootCert: pem("root.pem"), IntermediateCerts: [], Active: true,
          PrivateKeyType: "ec", PrivateKeyBits: 256, CreateIndex: 1, ModifyIndex: 1,
        },
      ],
    },
    ConnectProxy: {
      Leaf: LEAF,
      Intentions: [],
      IntentionDefaultAllow: true,
      DiscoveryChain: { db: chain("db") },
      WatchedUpstreamEndpoints: { db: { "db.default.dc1": dbInstances() } },
      WatchedGatewayEndpoints: { db: {} },
      PreparedQueryEndpoints: { "prepared_query:geo-cache": dbInstances("dc1", "passing", "geo-cache") },
      ExposedCheckPaths: [],
    },
  };
}

/** A copy of `snap` with the upstream `u` (replacing any of the same identifier) and its state. */
export function withUpstream(
  snap: SidecarSnapshot,
  u: Upstream,
  c: CompiledDiscoveryChain,
  endpoints: Readonly<Record<string, readonly CheckServiceNode[]>>,
  gatewayEndpoints: Readonly<Record<string, readonly CheckServiceNode[]>> = {},
): SidecarSnapshot {
  const id = upstreamIdentifier(u);
  const cp = snap.ConnectProxy;
  return {
    ...snap,
    Proxy: { ...snap.Proxy, Upstreams: [...(snap.Proxy.Upstreams ?? []).filter((x) => upstreamIdentifier(x) !== id), u] },
    ConnectProxy: {
      ...cp,
      DiscoveryChain: { ...cp.DiscoveryChain, [id]: c },
      WatchedUpstreamEndpoints: { ...cp.WatchedUpstreamEndpoints, [id]: endpoints },
      WatchedGatewayEndpoints: { ...cp.WatchedGatewayEndpoints, [id]: gatewayEndpoints },
    },
  };
}

/** A copy of `snap` with Proxy.Config replaced. */
export function withProxyConfig(snap: SidecarSnapshot, config: Record<string, unknown>): SidecarSnapshot {
  return { ...snap, Proxy: { ...snap.Proxy, Config: config } };
}
