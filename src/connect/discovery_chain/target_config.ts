/**
 * Per-target settings the resolver step applies (compile.go getResolverNode, Consul 1.8): the subset's
 * filter check, external SNI and its restrictions, and the configured mesh gateway mode.
 */
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter } from "../bexpr/index.ts";
import {
  ConfigEntryGraphError,
  type MeshGatewayMode,
  type ServiceResolverConfigEntry,
  type ServiceResolverSubset,
} from "../config_entries/index.ts";
import type { DiscoveryChainSet } from "./entry_set.ts";

/** The subset definition for a target, its bexpr filter checked against CheckServiceNode. */
export function checkedSubset(service: string, subsetName: string, subset: ServiceResolverSubset | undefined): ServiceResolverSubset {
  if (subset === undefined) return {};
  if (subset.Filter) {
    try {
      compileFilter(subset.Filter, CHECK_SERVICE_NODE_SCHEMA);
    } catch (err) {
      throw new ConfigEntryGraphError(
        `Filter for subset ${JSON.stringify(subsetName)} of service ${JSON.stringify(service)} is not a valid expression: ${(err as Error).message}`,
      );
    }
  }
  return subset;
}

/**
 * service-defaults ExternalSNI of `service`, or undefined. An external service may not have a resolver with
 * a redirect, subsets or failover (ConfigEntryGraphError with Consul's messages).
 */
export function externalSni(entries: DiscoveryChainSet, service: string, resolver: ServiceResolverConfigEntry): string | undefined {
  const sni = entries.services.get(service)?.ExternalSNI;
  if (!sni) return undefined;
  const svc = JSON.stringify(service);
  const fail = (what: string) => new ConfigEntryGraphError(`service ${svc} has an external SNI set; cannot define ${what} for external services`);
  if (resolver.Redirect !== undefined) throw fail("redirects");
  if (Object.keys(resolver.Subsets ?? {}).length > 0) throw fail("subsets");
  if (Object.keys(resolver.Failover ?? {}).length > 0) throw fail("failover");
  return sni;
}

/**
 * The configured mesh gateway mode of a remote, non-external target: service-defaults, else proxy-defaults
 * (the override is applied by the caller). Consul 1.8 gives external targets and targets in the datacenter
 * the chain is used in no mode at all; callers check that first.
 */
export function configuredMeshGatewayMode(entries: DiscoveryChainSet, service: string): MeshGatewayMode {
  const mode = entries.services.get(service)?.MeshGateway.Mode ?? "";
  return mode !== "" ? mode : (entries.globalProxy?.MeshGateway.Mode ?? "");
}
