/**
 * RouteConfigurations of a connect-proxy sidecar (Consul 1.8 agent/xds/routes.go, v3 shapes, RE2 safe
 * regexes): one per upstream whose chain is not the default one, named after the upstream, served over
 * RDS to its http_connection_manager. A router start node gives its routes in order (the compiler appends
 * the catch-all `prefix "/"`); a splitter gives one catch-all route with weighted clusters (weights x100,
 * totalling 10000); a resolver gives one catch-all route to its cluster. Returned sorted by name.
 */
import { create } from "@bufbuild/protobuf";
import { RouteConfigurationSchema, type RouteConfiguration } from "../../gen/envoy/config/route/v3/route_pb.ts";
import type { HeaderMatcher, QueryParameterMatcher, RouteAction, RouteMatch } from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import type { CompiledDiscoveryChain, DiscoverySplit } from "../../connect/index.ts";
import type { ServiceRouteHTTPMatch } from "../../model/index.ts";
import { upstreamIdentifier, type SidecarSnapshot } from "../../proxycfg/index.ts";
import { byName, customizeClusterName, goDuration, isDefaultChain, ResourceGenerationError } from "./common.ts";
import { createMemo } from "./memo.ts";

type Init<T> = Partial<Omit<T, "$typeName" | "$unknown">>;

/** All route configurations of the sidecar, sorted by name. */
export function sidecarRoutes(snap: SidecarSnapshot): RouteConfiguration[] {
  const out: RouteConfiguration[] = [];
  for (const u of snap.Proxy.Upstreams ?? []) {
    if (u.DestinationType === "prepared_query") continue;
    const id = upstreamIdentifier(u);
    const chain = snap.ConnectProxy.DiscoveryChain[id];
    if (!chain || isDefaultChain(chain)) continue;
    out.push(routeMemo.get([chain], id, () => chainRouteConfiguration(id, chain)));
  }
  return byName(out, (r) => r.name);
}

/** Memoized by the chain's identity and the upstream identifier: shared, never mutate the result. */
const routeMemo = createMemo<RouteConfiguration>();

function chainRouteConfiguration(id: string, chain: CompiledDiscoveryChain): RouteConfiguration {
  return create(RouteConfigurationSchema, {
    name: id,
    virtualHosts: [{ name: id, domains: ["*"], routes: chainRoutes(chain) }],
    // RDS defaults validate_clusters to false; true keeps a route to a missing cluster from null-routing.
    validateClusters: true,
  });
}

const CATCH_ALL: Init<RouteMatch> = { pathSpecifier: { case: "prefix", value: "/" } };

function chainRoutes(chain: CompiledDiscoveryChain) {
  const start = chain.Nodes[chain.StartNode];
  if (!start) throw new ResourceGenerationError(`missing first node in compiled discovery chain for: ${chain.ServiceName}`);
  switch (start.Type) {
    case "router":
      return (start.Routes ?? []).map((dr) => {
        const action = routeNextAction(chain, dr.NextNode, splitterAction);
        const dest = dr.Definition.Destination;
        if (dest?.PrefixRewrite) action.prefixRewrite = dest.PrefixRewrite;
        const timeout = dest?.RequestTimeout ? goDuration(dest.RequestTimeout) : undefined;
        if (timeout && (timeout.seconds > 0n || timeout.nanos > 0)) action.timeout = timeout;
        const codes = dest?.RetryOnStatusCodes ?? [];
        if ((dest?.NumRetries ?? 0) > 0 || dest?.RetryOnConnectFailure || codes.length > 0) {
          const retryOn = [...(dest?.RetryOnConnectFailure ? ["connect-failure"] : []), ...(codes.length > 0 ? ["retriable-status-codes"] : [])];
          action.retryPolicy = {
            retryOn: retryOn.join(","),
            ...((dest?.NumRetries ?? 0) > 0 ? { numRetries: dest!.NumRetries } : {}),
            retriableStatusCodes: [...codes],
          } as RouteAction["retryPolicy"];
        }
        return { match: routeMatch(dr.Definition.Match?.HTTP), action: { case: "route" as const, value: action } };
      });
    case "splitter":
      return [{ match: CATCH_ALL, action: { case: "route" as const, value: splitterAction(start.Splits ?? [], chain) } }];
    case "resolver":
      return [{ match: CATCH_ALL, action: { case: "route" as const, value: clusterAction(start.Resolver!.Target, chain) } }];
  }
}

/**
 * The action of a router's route: the splitter it leads to (rendered by `split`, which differs between
 * Envoy and proxyless gRPC) or its resolver's cluster. A route must lead to one of those two.
 */
export function routeNextAction(
  chain: CompiledDiscoveryChain,
  nextNode: string,
  split: (splits: readonly DiscoverySplit[], chain: CompiledDiscoveryChain) => Init<RouteAction>,
): Init<RouteAction> {
  const next = chain.Nodes[nextNode];
  if (next?.Type === "splitter") return split(next.Splits ?? [], chain);
  if (next?.Type === "resolver" && next.Resolver) return clusterAction(next.Resolver.Target, chain);
  throw new ResourceGenerationError(`unexpected graph node after route ${JSON.stringify(next?.Type ?? nextNode)}`);
}

/** The cluster a chain target is served by (its SNI name, customized when overrides change the chain). */
export function clusterName(targetId: string, chain: CompiledDiscoveryChain): string {
  const t = chain.Targets[targetId];
  if (!t) throw new ResourceGenerationError(`discovery chain for ${chain.ServiceName} has no target ${targetId}`);
  return customizeClusterName(t.Name, chain);
}

/** A route action to one chain target's cluster. */
export function clusterAction(targetId: string, chain: CompiledDiscoveryChain): Init<RouteAction> {
  return { clusterSpecifier: { case: "cluster", value: clusterName(targetId, chain) } };
}

/** Weights are percentages with two decimals; Envoy's are integers, so x100 over a total of 10000. */
function splitterAction(splits: readonly DiscoverySplit[], chain: CompiledDiscoveryChain): Init<RouteAction> {
  const clusters = splits.map((s) => {
    const next = chain.Nodes[s.NextNode];
    if (next?.Type !== "resolver" || !next.Resolver) throw new ResourceGenerationError(`unexpected splitter destination node type: ${next?.Type ?? s.NextNode}`);
    return { name: clusterName(next.Resolver.Target, chain), weight: Math.round(s.Weight * 100) };
  });
  return { clusterSpecifier: { case: "weightedClusters", value: { clusters, totalWeight: 10000 } as never } };
}

function safeRegex(regex: string) {
  return { engineType: { case: "googleRe2" as const, value: {} }, regex };
}

/** `makeRouteMatchForDiscoveryRoute`: path, headers (methods as a `:method` regex) and query parameters. */
export function routeMatch(http: ServiceRouteHTTPMatch | undefined): Init<RouteMatch> {
  if (!http) return CATCH_ALL;
  const m: Init<RouteMatch> = {
    pathSpecifier: http.PathExact
      ? { case: "path", value: http.PathExact }
      : http.PathPrefix
        ? { case: "prefix", value: http.PathPrefix }
        : http.PathRegex
          ? { case: "safeRegex", value: safeRegex(http.PathRegex) as never }
          : { case: "prefix", value: "/" },
  };
  const headers: Init<HeaderMatcher>[] = [];
  for (const h of http.Header ?? []) {
    let spec: Init<HeaderMatcher>["headerMatchSpecifier"];
    if (h.Exact) spec = { case: "exactMatch", value: h.Exact };
    else if (h.Regex) spec = { case: "safeRegexMatch", value: safeRegex(h.Regex) as never };
    else if (h.Prefix) spec = { case: "prefixMatch", value: h.Prefix };
    else if (h.Suffix) spec = { case: "suffixMatch", value: h.Suffix };
    else if (h.Present) spec = { case: "presentMatch", value: true };
    else continue; // impossible after validation
    headers.push({ name: h.Name, headerMatchSpecifier: spec, ...(h.Invert ? { invertMatch: true } : {}) });
  }
  if ((http.Methods ?? []).length > 0) {
    headers.push({ name: ":method", headerMatchSpecifier: { case: "safeRegexMatch", value: safeRegex(http.Methods!.join("|")) as never } });
  }
  if (headers.length > 0) m.headers = headers as HeaderMatcher[];
  const query: Init<QueryParameterMatcher>[] = [];
  for (const q of http.QueryParam ?? []) {
    let spec: Init<QueryParameterMatcher>["queryParameterMatchSpecifier"];
    if (q.Exact) spec = { case: "stringMatch", value: { matchPattern: { case: "exact", value: q.Exact } } as never };
    else if (q.Regex) spec = { case: "stringMatch", value: { matchPattern: { case: "safeRegex", value: safeRegex(q.Regex) } } as never };
    else if (q.Present) spec = { case: "presentMatch", value: true };
    else continue;
    query.push({ name: q.Name, queryParameterMatchSpecifier: spec });
  }
  if (query.length > 0) m.queryParameters = query as QueryParameterMatcher[];
  return m;
}
