/**
 * Endpoint health and weight, and failover target choice (Consul agent/xds/endpoints.go
 * calculateEndpointHealthAndWeight and failover_math.go firstHealthyTarget).
 */
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check_pb.ts";
import type { CompiledDiscoveryChain } from "../../connect/index.ts";
import type { CheckServiceNode } from "../../model/index.ts";

export { HealthStatus };

/**
 * HEALTHY unless a check is critical (or, with `onlyPassing`, not passing); the weight is the service's
 * Weights.Passing, or Weights.Warning when a check warns; a weight below 1 makes the endpoint UNHEALTHY
 * with weight 1, and weights are capped at 128 (Envoy's limit for load_balancing_weight in Consul's era).
 */
export function endpointHealthAndWeight(ep: CheckServiceNode, onlyPassing: boolean): { health: HealthStatus; weight: number } {
  let health = HealthStatus.HEALTHY;
  const weights = ep.Service.Weights as CheckServiceNode["Service"]["Weights"] | undefined | null;
  let weight = weights ? weights.Passing : 1;
  for (const chk of ep.Checks) {
    if (chk.Status === "critical") health = HealthStatus.UNHEALTHY;
    if (onlyPassing && chk.Status !== "passing") health = HealthStatus.UNHEALTHY;
    if (chk.Status === "warning" && weights) weight = weights.Warning;
  }
  if (weight < 1) {
    health = HealthStatus.UNHEALTHY;
    weight = 1;
  }
  return { health, weight: Math.min(weight, 128) };
}

/**
 * The first target, primary then failovers in order, with at least one HEALTHY endpoint under its
 * subset's OnlyPassing; the primary when none has (or while the health of all is unknown).
 */
export function firstHealthyTarget(
  chain: CompiledDiscoveryChain,
  targetHealth: Readonly<Record<string, readonly CheckServiceNode[]>> | undefined,
  primary: string,
  failovers: readonly string[],
): string {
  for (const id of [primary, ...failovers]) {
    const target = chain.Targets[id];
    const eps = targetHealth?.[id];
    if (!target || !eps) continue;
    if (eps.some((ep) => endpointHealthAndWeight(ep, target.Subset.OnlyPassing ?? false).health === HealthStatus.HEALTHY)) return id;
  }
  return primary;
}

/** `CheckServiceNode.BestAddress(wan)`: the service address (WAN-tagged when asked), else the node's. */
export function bestAddress(ep: CheckServiceNode, wan: boolean): { address: string; port: number } {
  let address = ep.Service.Address;
  let port = ep.Service.Port;
  const tagged = wan ? ep.Service.TaggedAddresses?.["wan"] : undefined;
  if (tagged) {
    if (tagged.Address !== "") address = tagged.Address;
    if (tagged.Port !== 0) port = tagged.Port;
  }
  if (address === "") address = (wan ? ep.Node.TaggedAddresses["wan"] : undefined) || ep.Node.Address;
  return { address, port };
}
