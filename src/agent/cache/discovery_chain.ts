/**
 * The compiled discovery chain of a service as a cache type (Consul's agent/cache-types/
 * discovery_chain.go, the `DiscoveryChain.Get` RPC): the same path as GET /v1/discovery-chain -- a
 * blocking read of the config entries of this agent's datacenter, the trust domain from the CA roots,
 * then the pure compiler with the upstream's overrides. The index is the config entries'.
 *
 * Before the CA exists the fetch fails with Consul's "no cluster ca config setup" (the cache retries
 * with its back-off); a chain that does not compile fails with the compiler's message.
 */
import { compileDiscoveryChain, type CompiledDiscoveryChain } from "../../connect/index.ts";
import type { MeshGatewayMode } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheType } from "./types.ts";

/** structs.DiscoveryChainRequest, without the token. */
export interface CompiledChainRequest {
  /** The upstream's DestinationName. */
  readonly name: string;
  /** The upstream's datacenter, or the agent's. */
  readonly evaluateInDatacenter: string;
  /** Default "default". */
  readonly evaluateInNamespace?: string;
  /** The proxy's MeshGateway overlaid with the upstream's ("" = no override). */
  readonly overrideMeshGatewayMode?: MeshGatewayMode;
  /** The upstream's Config.protocol ("" = none). */
  readonly overrideProtocol?: string;
  /** The upstream's Config.connect_timeout_ms (0 = none). */
  readonly overrideConnectTimeoutMs?: number;
}

/** Thrown text when the CA has no trust domain yet (Consul's DiscoveryChain.Get). */
export const NO_CA_CONFIG = "no cluster ca config setup";

/** The chain type over `reader`; `localDatacenter` is where chains are compiled and used (Consul's UseInDatacenter). */
export function compiledChainType(reader: StateReader, localDatacenter: string): CacheType<CompiledChainRequest, CompiledDiscoveryChain> {
  return blockingQueryType({
    name: "compiled-discovery-chain",
    key: (r) =>
      JSON.stringify([r.name, r.evaluateInDatacenter, r.evaluateInNamespace || "default", r.overrideMeshGatewayMode ?? "", r.overrideProtocol ?? "", r.overrideConnectTimeoutMs ?? 0]),
    async query(r, options) {
      const entries = await blockingRead(reader, { type: "config-entry-list" }, undefined, options);
      const roots = await blockingRead(reader, { type: "ca-roots" }, undefined, { minIndex: 0, maxWaitMs: 0 });
      if (roots.value.trustDomain === "") throw new Error(NO_CA_CONFIG);
      const chain = compileDiscoveryChain({
        serviceName: r.name,
        evaluateInNamespace: r.evaluateInNamespace || "default",
        evaluateInDatacenter: r.evaluateInDatacenter,
        evaluateInTrustDomain: roots.value.trustDomain,
        useInDatacenter: localDatacenter,
        ...(r.overrideMeshGatewayMode ? { overrideMeshGateway: { Mode: r.overrideMeshGatewayMode } } : {}),
        ...(r.overrideProtocol ? { overrideProtocol: r.overrideProtocol } : {}),
        ...(r.overrideConnectTimeoutMs ? { overrideConnectTimeoutMs: r.overrideConnectTimeoutMs } : {}),
        entries: entries.value,
      });
      return { index: entries.index, value: chain };
    },
  });
}
