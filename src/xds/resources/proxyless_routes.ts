/**
 * RouteConfigurations of a proxyless gRPC client (gRFC A28, A31, A44), one per upstream, named after it,
 * with one virtual host for the names the client may use as authority. Routes follow the discovery chain
 * as the sidecar's do (./routes.ts): a router gives its routes in order (with the compiler's catch-all
 * last), a splitter one catch-all route with weighted clusters (weights x100, totalling 10000), a resolver
 * one catch-all route to its cluster; a default chain is a resolver too, so every upstream has a route.
 * What gRPC honours of a route's destination: RequestTimeout as `max_stream_duration` (A31: gRPC ignores
 * `timeout`), retries (A44) with `retry_on` as gRPC status names -- RetryOnConnectFailure and HTTP 429,
 * 502, 503 and 504 as `unavailable`, HTTP 400 as `internal` (grpc's HTTP-to-gRPC status mapping); other
 * HTTP codes have no retryable gRPC status and are left out. PrefixRewrite is not sent: gRPC clients do
 * not rewrite paths (A28 lists it as unsupported).
 */
import { create } from "@bufbuild/protobuf";
import { RouteConfigurationSchema, type RouteConfiguration } from "../../gen/envoy/config/route/v3/route_pb.ts";
import type { RouteAction } from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import type { CompiledDiscoveryChain, DiscoverySplit } from "../../connect/index.ts";
import type { ServiceRouteDestination } from "../../model/index.ts";
import type { ProxylessSnapshot } from "../../proxycfg/index.ts";
import { byName, goDuration, ResourceGenerationError } from "./common.ts";
import { clusterAction, clusterName, routeMatch, routeNextAction } from "./routes.ts";

type Init<T> = Partial<Omit<T, "$typeName" | "$unknown">>;

/** gRPC status names for Consul's retry conditions (HTTP status -> gRPC status, then A44's names). */
const RETRY_ON_HTTP: Readonly<Record<number, string>> = { 400: "internal", 429: "unavailable", 502: "unavailable", 503: "unavailable", 504: "unavailable" };

/** All route configurations of the client, sorted by name. */
export function proxylessRoutes(snap: ProxylessSnapshot): RouteConfiguration[] {
  const out = Object.values(snap.Upstreams).map((u) =>
    create(RouteConfigurationSchema, {
      name: u.Name,
      virtualHosts: [{ name: u.Name, domains: [u.Name, `${u.Name}:*`], routes: chainRoutes(u.Chain) }],
    }),
  );
  return byName(out, (r) => r.name);
}

function chainRoutes(chain: CompiledDiscoveryChain) {
  const start = chain.Nodes[chain.StartNode];
  if (!start) throw new ResourceGenerationError(`missing first node in compiled discovery chain for: ${chain.ServiceName}`);
  const route = (match: ReturnType<typeof routeMatch>, action: Init<RouteAction>) => ({ match, action: { case: "route" as const, value: action } });
  switch (start.Type) {
    case "router":
      return (start.Routes ?? []).map((dr) => {
        const action = routeNextAction(chain, dr.NextNode, splitterAction);
        return route(routeMatch(dr.Definition.Match?.HTTP), { ...action, ...destinationOptions(dr.Definition.Destination) });
      });
    case "splitter":
      return [route(routeMatch(undefined), splitterAction(start.Splits ?? [], chain))];
    case "resolver":
      if (!start.Resolver) throw new ResourceGenerationError(`resolver node without a resolver in the chain for: ${chain.ServiceName}`);
      return [route(routeMatch(undefined), clusterAction(start.Resolver.Target, chain))];
  }
}

/** The timeout and retry policy of a router destination, as gRPC reads them. */
function destinationOptions(dest: ServiceRouteDestination | undefined): Init<RouteAction> {
  const out: Init<RouteAction> = {};
  const timeout = dest?.RequestTimeout ? goDuration(dest.RequestTimeout) : undefined;
  if (timeout && (timeout.seconds > 0n || timeout.nanos > 0)) out.maxStreamDuration = { maxStreamDuration: timeout } as RouteAction["maxStreamDuration"];
  const retryOn = new Set<string>();
  if (dest?.RetryOnConnectFailure) retryOn.add("unavailable");
  for (const code of dest?.RetryOnStatusCodes ?? []) if (RETRY_ON_HTTP[code]) retryOn.add(RETRY_ON_HTTP[code]!);
  if (retryOn.size > 0) {
    out.retryPolicy = {
      retryOn: [...retryOn].sort().join(","),
      ...((dest?.NumRetries ?? 0) > 0 ? { numRetries: dest!.NumRetries } : {}),
    } as RouteAction["retryPolicy"];
  }
  return out;
}

/** Percentages with two decimals as integers over 10000; zero-weight splits are left out (gRPC needs a positive sum). */
function splitterAction(splits: readonly DiscoverySplit[], chain: CompiledDiscoveryChain): Init<RouteAction> {
  const clusters = splits.flatMap((s) => {
    const next = chain.Nodes[s.NextNode];
    if (next?.Type !== "resolver" || !next.Resolver) throw new ResourceGenerationError(`unexpected splitter destination node type: ${next?.Type ?? s.NextNode}`);
    const weight = Math.round(s.Weight * 100);
    return weight > 0 ? [{ name: clusterName(next.Resolver.Target, chain), weight }] : [];
  });
  return { clusterSpecifier: { case: "weightedClusters", value: { clusters } as never } };
}
