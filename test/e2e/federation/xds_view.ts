/** What a sidecar's xDS says about one upstream cluster: its TLS SNI and its endpoints. */
import { toJsonString } from "@bufbuild/protobuf";
import { ClusterSchema } from "../../../src/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../src/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { DiscoveryResponse } from "../../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { envoyRegistry } from "../../../src/xds/index.ts";
import { decodeAll } from "../../harness/ads_client.ts";

/** The SNI of cluster `name`'s upstream TLS in a CDS response (undefined when absent). */
export const sniOf = (r: DiscoveryResponse, name: string): string | undefined => {
  const c = decodeAll(ClusterSchema, r).find((x) => x.name === name);
  return c ? /"sni":\s*"([^"]+)"/.exec(toJsonString(ClusterSchema, c, { registry: envoyRegistry }))?.[1] : undefined;
};

/** Every endpoint of an EDS response as `host:port`. */
export const endpointsOf = (r: DiscoveryResponse): string[] =>
  decodeAll(ClusterLoadAssignmentSchema, r).flatMap((c) => c.endpoints.flatMap((l) => l.lbEndpoints.map((e) => {
    const ep = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
    const sa = ep?.case === "socketAddress" ? ep.value : undefined;
    return `${sa?.address}:${sa?.portSpecifier.case === "portValue" ? sa.portSpecifier.value : "?"}`;
  })));
