/**
 * Health of a service's instances as a cache type (Consul's agent/cache-types/health_services.go, the
 * `Health.ServiceNodes` RPC): a blocking read of `health-service-nodes` in a datacenter, with Consul's
 * request fields (Connect, passing only, tags) and its `filter` applied to each CheckServiceNode (the
 * server applies `QueryOptions.Filter` in Consul; here the agent does, after the same read).
 */
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter, filterList } from "../../connect/index.ts";
import type { CheckServiceNode } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import { blockingRead, type StateReader } from "./state_reader.ts";
import type { CacheType } from "./types.ts";

/** Which instances (structs.ServiceSpecificRequest). */
export interface HealthServicesRequest {
  /** The datacenter to ask; undefined = this agent's. */
  readonly datacenter?: string;
  readonly service: string;
  /** Connect-capable instances: the service's sidecar proxies and Connect-native instances. */
  readonly connect: boolean;
  readonly passingOnly?: boolean;
  readonly tags?: readonly string[];
  /** A bexpr filter over CheckServiceNode ("" = none), e.g. a resolver subset's Filter. */
  readonly filter?: string;
}

/** The health type over `reader`. A filter that does not compile fails the fetch with the compiler's message. */
export function healthServicesType(reader: StateReader): CacheType<HealthServicesRequest, readonly CheckServiceNode[]> {
  return blockingQueryType({
    name: "health-services",
    key: (r) => JSON.stringify([r.datacenter ?? "", r.service, r.connect, r.passingOnly ?? false, r.tags ?? [], r.filter ?? ""]),
    async query(r, options) {
      const filter = r.filter ? compileFilter(r.filter, CHECK_SERVICE_NODE_SCHEMA) : undefined;
      const res = await blockingRead(
        reader,
        { type: "health-service-nodes", service: r.service, connect: r.connect, passingOnly: r.passingOnly ?? false, ...(r.tags?.length ? { tags: r.tags } : {}) },
        r.datacenter,
        options,
      );
      return { index: res.index, value: filter ? filterList(res.value, filter) : res.value };
    },
  });
}
