/**
 * ClusterLoadAssignment -> EndpointConfig[] for the gateway (EDS resources and the inline
 * load_assignment of DNS clusters). Only priority 0 is accepted: Envoy fails over between priority
 * levels by their health, which the gateway does not implement, and Consul's mesh gateway resources
 * never use other priorities (one group per cluster). Localities are flattened: without
 * locality_weighted_lb_config (which the gateway refuses on clusters) Envoy ignores locality weights
 * too. A repeated address keeps its first entry, as Envoy's host list update does.
 */
import { ClusterLoadAssignmentSchema, type ClusterLoadAssignment } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { EndpointSchema, LbEndpointSchema, LocalityLbEndpointsSchema } from "../gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import { HealthStatus } from "../gen/envoy/config/core/v3/health_check_pb.ts";
import type { EndpointConfig } from "./config_types.ts";
import { at, isIp, Nack, onlyFields, socketAddressOf } from "./xds_strict.ts";

export interface AssignmentOptions {
  /** EDS endpoints must be IP literals (Envoy resolves nothing for EDS); DNS clusters take host names. */
  readonly requireIp: boolean;
}

/** The endpoints of `cla`; throws Nack naming `path` and the offending field. */
export function decodeAssignment(cla: ClusterLoadAssignment, path: string, opts: AssignmentOptions): EndpointConfig[] {
  onlyFields(ClusterLoadAssignmentSchema, cla, ["cluster_name", "endpoints"], path);
  const out: EndpointConfig[] = [];
  const seen = new Set<string>();
  for (const [i, locality] of cla.endpoints.entries()) {
    const lp = `${at(path, "endpoints")}[${i}]`;
    onlyFields(LocalityLbEndpointsSchema, locality, ["locality", "metadata", "lb_endpoints", "load_balancing_weight", "priority"], lp);
    if (locality.priority !== 0) throw new Nack(`${lp}: priority ${locality.priority} is not supported (only priority 0; no failover between priorities)`);
    for (const [j, lb] of locality.lbEndpoints.entries()) {
      const ep = `${at(lp, "lb_endpoints")}[${j}]`;
      onlyFields(LbEndpointSchema, lb, ["endpoint", "health_status", "metadata", "load_balancing_weight"], ep);
      if (lb.hostIdentifier.case !== "endpoint") throw new Nack(`${ep}: endpoint is required`);
      const e = lb.hostIdentifier.value;
      onlyFields(EndpointSchema, e, ["address", "hostname"], at(ep, "endpoint"));
      const { address, port } = socketAddressOf(e.address, at(ep, "endpoint.address"), 1);
      if (opts.requireIp && !isIp(address)) throw new Nack(`${ep}: malformed IP address: ${address}`);
      const weight = lb.loadBalancingWeight ?? 1;
      if (weight < 1) throw new Nack(`${ep}: load_balancing_weight must be at least 1`);
      const key = `${address}|${port}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ address, port, healthy: isHealthy(lb.healthStatus), weight });
    }
  }
  return out;
}

/** HEALTHY and UNKNOWN take traffic (Envoy's EDS health mapping); everything else does not. */
function isHealthy(status: HealthStatus): boolean {
  return status === HealthStatus.HEALTHY || status === HealthStatus.UNKNOWN;
}

