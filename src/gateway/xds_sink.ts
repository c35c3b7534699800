/**
 * The seam between the gateway's xDS client (./xds_client.ts: the ADS stream, ACK/NACK, reconnects)
 * and its configuration store (./xds_config.ts: decoding and validating resources into a GatewayConfig).
 */
import type { Any } from "@bufbuild/protobuf/wkt";

/** Envoy v3 type URLs the gateway subscribes to, in the order it applies them on a change (warming). */
export const GATEWAY_TYPE_URLS = {
  cluster: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  endpoint: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  listener: "type.googleapis.com/envoy.config.listener.v3.Listener",
} as const;

/** Where the xDS client delivers resources. */
export interface XdsSink {
  /**
   * Validates the complete set of resources of one type (name -> Any) and, when every one is acceptable,
   * applies it as a whole, replacing the previous set of that type; returns undefined. Otherwise applies
   * nothing and returns the reason for the NACK (Envoy's error_detail message), naming the resource.
   * After a cluster is removed, load assignments no cluster references may remain: ignore them.
   */
  apply(typeUrl: string, resources: ReadonlyMap<string, Any>): string | undefined;
  /**
   * The ClusterLoadAssignment names the applied clusters need (the EDS clusters' names, sorted): the
   * client subscribes to exactly these after each applied Cluster set, and when the Endpoint
   * subscription starts on each (re)connected stream.
   */
  endpointNames(): readonly string[];
}
