/**
 * The network filter of a listener (Consul agent/xds makeListenerFilter / makeHTTPFilter /
 * makeTCPProxyFilter): tcp_proxy for "tcp" (and any unknown protocol), http_connection_manager for http,
 * http2 and grpc, either with RDS over ADS (upstream L7 chains) or an inline single-route configuration.
 */
import { create } from "@bufbuild/protobuf";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source_pb.ts";
import { FilterSchema, type Filter } from "../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { RouterSchema } from "../../gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import {
  HttpConnectionManagerSchema,
  HttpFilterSchema,
  type HttpFilter,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { TcpProxySchema } from "../../gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { pack, ResourceGenerationError, statPrefix } from "./common.ts";
import { GrpcHttp1BridgeConfigSchema } from "./registry.ts";

export interface ListenerFilterOptions {
  /** true: routes come from RDS named `filterName`; false: one inline route to `cluster`. */
  readonly useRds: boolean;
  readonly protocol: string;
  /** Names the filter, the stat prefix and (with RDS) the route configuration. */
  readonly filterName: string;
  /** Required without RDS. */
  readonly cluster: string;
  readonly statPrefix: string;
  /** An exact path for the inline route instead of prefix "/" (exposed paths). */
  readonly routePath?: string;
  /** HTTP RBAC filter placed before the router (public listeners with an HTTP protocol). */
  readonly httpAuthz?: HttpFilter;
}

/** The network filter for `opts.protocol`; throws ResourceGenerationError on an impossible combination. */
export function makeListenerFilter(opts: ListenerFilterOptions): Filter {
  switch (opts.protocol) {
    case "grpc":
    case "http2":
    case "http":
      return makeHttpFilter(opts);
    default:
      if (opts.useRds) throw new ResourceGenerationError("RDS is not compatible with the tcp proxy filter");
      if (opts.cluster === "") throw new ResourceGenerationError("cluster name is required for a tcp proxy filter");
      return tcpProxyFilter(opts.filterName, opts.cluster, opts.statPrefix);
  }
}

/** `envoy.filters.network.tcp_proxy` to `cluster`. */
export function tcpProxyFilter(filterName: string, cluster: string, prefix: string): Filter {
  return create(FilterSchema, {
    name: "envoy.filters.network.tcp_proxy",
    configType: {
      case: "typedConfig",
      value: pack(TcpProxySchema, { statPrefix: statPrefix("tcp", prefix, filterName), clusterSpecifier: { case: "cluster", value: cluster } }),
    },
  });
}

function makeHttpFilter(opts: ListenerFilterOptions): Filter {
  const grpc = opts.protocol === "grpc";
  const http2 = grpc || opts.protocol === "http2";
  const filters: HttpFilter[] = [];
  if (grpc) {
    filters.push(
      create(HttpFilterSchema, {
        name: "envoy.filters.http.grpc_http1_bridge",
        configType: { case: "typedConfig", value: pack(GrpcHttp1BridgeConfigSchema, {}) },
      }),
    );
  }
  if (opts.httpAuthz) filters.push(opts.httpAuthz);
  filters.push(create(HttpFilterSchema, { name: "envoy.filters.http.router", configType: { case: "typedConfig", value: pack(RouterSchema, {}) } }));

  let routeSpecifier;
  if (opts.useRds) {
    if (opts.cluster !== "") throw new ResourceGenerationError("cannot specify cluster name when using RDS");
    routeSpecifier = {
      case: "rds" as const,
      value: { routeConfigName: opts.filterName, configSource: { resourceApiVersion: ApiVersion.V3, configSourceSpecifier: { case: "ads" as const, value: {} } } },
    };
  } else {
    if (opts.cluster === "") throw new ResourceGenerationError("must specify cluster name when not using RDS");
    const pathSpecifier = opts.routePath ? { case: "path" as const, value: opts.routePath } : { case: "prefix" as const, value: "/" };
    routeSpecifier = {
      case: "routeConfig" as const,
      value: {
        name: opts.filterName,
        virtualHosts: [
          {
            name: opts.filterName,
            domains: ["*"],
            routes: [{ match: { pathSpecifier }, action: { case: "route" as const, value: { clusterSpecifier: { case: "cluster" as const, value: opts.cluster } } } }],
          },
        ],
      },
    };
  }
  return create(FilterSchema, {
    name: "envoy.filters.network.http_connection_manager",
    configType: {
      case: "typedConfig",
      value: pack(HttpConnectionManagerSchema, {
        statPrefix: statPrefix(grpc ? "grpc" : "http", opts.statPrefix, opts.filterName),
        routeSpecifier,
        httpFilters: filters,
        // Requests are not traced unless the client propagates trace headers that ask for it.
        tracing: { randomSampling: { value: 0 } },
        ...(http2 ? { http2ProtocolOptions: {} } : {}),
      }),
    },
  });
}
