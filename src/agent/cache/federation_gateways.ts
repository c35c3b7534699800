/**
 * The mesh gateways of every datacenter as the replicated federation states hold them, as a cache type
 * (Consul 1.8 agent/cache-types/federation_state_list_gateways.go, `FederationState.ListMeshGateways`):
 * a blocking read of `federation-state-mesh-gateways` in a datacenter. A wanfed mesh gateway watches it
 * (proxycfg's `federation-state-list-mesh-gateways`) to learn the gateways of datacenters its own
 * catalog view lacks.
 */
import type { CheckServiceNode } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheType } from "./types.ts";

/** Which datacenter's copy of the federation states to read (structs.DCSpecificRequest). */
export interface FederationGatewaysRequest {
  /** The datacenter to ask; undefined = this agent's. */
  readonly datacenter?: string;
}

/** Datacenter -> its mesh gateways (Consul's DatacenterIndexedCheckServiceNodes.DatacenterNodes). */
export type DatacenterGateways = Readonly<Record<string, readonly CheckServiceNode[]>>;

/**
 * The federation-state gateways type over `reader`: every federation state that lists gateways, keyed by
 * datacenter (states without gateways are left out by the read); the index is the federation-states
 * table's, so a fetch blocks until a state changes.
 */
export function federationGatewaysType(reader: StateReader): CacheType<FederationGatewaysRequest, DatacenterGateways> {
  return blockingQueryType({
    name: "federation-state-list-mesh-gateways",
    key: (r) => r.datacenter ?? "",
    async query(r, options) {
      const res = await blockingRead(reader, { type: "federation-state-mesh-gateways" }, r.datacenter, options);
      return { index: res.index, value: res.value.DatacenterNodes };
    },
  });
}
