/**
 * The mesh gateways of a datacenter as a cache type (Consul 1.8 proxycfg's `watchMeshGateway`, an
 * `Internal.ServiceDump` of kind mesh-gateway): every mesh-gateway instance with its node and checks,
 * through a blocking query the caller supplies (a read of the instances of a service kind).
 */
import type { CheckServiceNode } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheResult, CacheType, FetchOptions } from "./types.ts";

export interface MeshGatewaysRequest {
  readonly datacenter: string;
}

/** The mesh-gateway type; `query` is one blocking read of the gateways of `req.datacenter`. */
export function meshGatewaysType(
  query: (req: MeshGatewaysRequest, options: FetchOptions) => Promise<CacheResult<readonly CheckServiceNode[]>>,
): CacheType<MeshGatewaysRequest, readonly CheckServiceNode[]> {
  return blockingQueryType({ name: "mesh-gateways", key: (r) => r.datacenter, query });
}

/** The gateways' query: one blocking read of the mesh-gateway instances of the datacenter (Consul's ServiceDump by kind). */
export function meshGatewaysOverCatalog(reader: StateReader): (req: MeshGatewaysRequest, options: FetchOptions) => Promise<CacheResult<readonly CheckServiceNode[]>> {
  return (req, options) => blockingRead(reader, { type: "health-service-kind-nodes", kind: "mesh-gateway" }, req.datacenter, options);
}
