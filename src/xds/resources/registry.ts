/**
 * The type registry of every Envoy message the sidecar resources carry (top-level resources and the
 * typed configs packed in Any fields), for JSON with Any (`@type`) and for decoding escape hatches.
 */
import { create, createFileRegistry, createRegistry, type DescMessage, type Registry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { file_envoy_config_cluster_v3_cluster } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { file_envoy_config_endpoint_v3_endpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { file_envoy_config_listener_v3_listener } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { file_envoy_config_route_v3_route } from "../../gen/envoy/config/route/v3/route_pb.ts";
import { file_envoy_extensions_filters_http_rbac_v3_rbac } from "../../gen/envoy/extensions/filters/http/rbac/v3/rbac_pb.ts";
import { file_envoy_extensions_filters_http_router_v3_router } from "../../gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import { file_envoy_extensions_filters_listener_tls_inspector_v3_tls_inspector } from "../../gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import { file_envoy_extensions_filters_network_http_connection_manager_v3_http_connection_manager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { file_envoy_extensions_filters_network_rbac_v3_rbac } from "../../gen/envoy/extensions/filters/network/rbac/v3/rbac_pb.ts";
import { file_envoy_extensions_filters_network_sni_cluster_v3_sni_cluster } from "../../gen/envoy/extensions/filters/network/sni_cluster/v3/sni_cluster_pb.ts";
import { file_envoy_extensions_filters_network_tcp_proxy_v3_tcp_proxy } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { file_envoy_extensions_transport_sockets_tls_v3_tls } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";

/**
 * `envoy.extensions.filters.http.grpc_http1_bridge.v3.Config`, described here as the empty message it was
 * when Consul adopted it, because src/gen does not include its .proto yet (build.ts ENVOY_PROTOS should
 * list `envoy/extensions/filters/http/grpc_http1_bridge/v3/config.proto`; then import the generated
 * schema instead). An empty Config encodes to zero bytes in either description.
 */
const bridgeFile = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "envoy/extensions/filters/http/grpc_http1_bridge/v3/config.proto",
    package: "envoy.extensions.filters.http.grpc_http1_bridge.v3",
    syntax: "proto3",
    messageType: [{ name: "Config" }],
  }),
  () => undefined,
);
export const GrpcHttp1BridgeConfigSchema: DescMessage = bridgeFile.getMessage("envoy.extensions.filters.http.grpc_http1_bridge.v3.Config")!;

/** Envoy resource and extension types Causeway generates or accepts in escape hatches. */
export const envoyRegistry: Registry = createRegistry(
  file_envoy_config_listener_v3_listener,
  file_envoy_config_cluster_v3_cluster,
  file_envoy_config_endpoint_v3_endpoint,
  file_envoy_config_route_v3_route,
  file_envoy_extensions_filters_network_http_connection_manager_v3_http_connection_manager,
  file_envoy_extensions_filters_network_tcp_proxy_v3_tcp_proxy,
  file_envoy_extensions_filters_network_rbac_v3_rbac,
  file_envoy_extensions_filters_network_sni_cluster_v3_sni_cluster,
  file_envoy_extensions_filters_http_rbac_v3_rbac,
  file_envoy_extensions_filters_http_router_v3_router,
  file_envoy_extensions_filters_listener_tls_inspector_v3_tls_inspector,
  file_envoy_extensions_transport_sockets_tls_v3_tls,
  GrpcHttp1BridgeConfigSchema,
);
