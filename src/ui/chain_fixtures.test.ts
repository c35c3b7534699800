/**
 * Test fixtures for the routing page's tests (not used by the UI): compiled chains from config
 * entries through the real compiler, as GET /v1/discovery-chain/:name answers them.
 */
import { compileDiscoveryChain, decodeConfigEntry, validateConfigEntry, type CompiledDiscoveryChain } from "../connect/index.ts";

/** proxy-defaults http, a router (/admin to web-admin), a 90/10 splitter over subsets v1/v2, a resolver failing over to dc2 then dc3. */
export const ROUTED_ENTRIES: readonly unknown[] = [
  { Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } },
  { Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { PathPrefix: "/admin" } }, Destination: { Service: "web-admin" } }] },
  { Kind: "service-splitter", Name: "web", Splits: [{ Weight: 90, ServiceSubset: "v1" }, { Weight: 10, ServiceSubset: "v2" }] },
  {
    Kind: "service-resolver", Name: "web",
    Subsets: { v1: { Filter: "Service.Meta.version == v1" }, v2: { Filter: "Service.Meta.version == v2" } },
    Failover: { "*": { Datacenters: ["dc2", "dc3"] } },
  },
];

/** The chain of `service` in dc1 compiled from `raw` config entries (validated as the API would). */
export function compiledChain(service: string, raw: readonly unknown[] = []): CompiledDiscoveryChain {
  const entries = raw.map((r) => {
    const e = decodeConfigEntry(r);
    validateConfigEntry(e);
    return e;
  });
  return compileDiscoveryChain({ serviceName: service, evaluateInDatacenter: "dc1", evaluateInTrustDomain: "11111111-2222-3333-4444-555555555555.consul", useInDatacenter: "dc1", entries });
}
