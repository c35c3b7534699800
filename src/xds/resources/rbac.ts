/**
 * Intentions as Envoy RBAC (Consul 1.9 agent/xds/rbac.go, which replaced 1.8's ext_authz callback):
 * the intentions for the proxy's destination, in precedence order, plus the default decision become one
 * allow-list (default deny) or deny-list (default allow). Walking from the lowest precedence up, an
 * intention with the default's action is folded into every later intention it covers as `AND NOT source`
 * and then dropped, which removes precedence. Sources are matched on the peer certificate's SPIFFE URI
 * (`^spiffe://<any>/ns/<ns>/dc/<any>/svc/<name>$`), so any trust domain and datacenter match.
 */
import { create } from "@bufbuild/protobuf";
import { RBAC_Action, RBACSchema, type Principal, type RBAC } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import { RBACSchema as HttpRbacSchema } from "../../gen/envoy/extensions/filters/http/rbac/v3/rbac_pb.ts";
import { RBACSchema as NetworkRbacSchema } from "../../gen/envoy/extensions/filters/network/rbac/v3/rbac_pb.ts";
import { FilterSchema, type Filter } from "../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import {
  HttpFilterSchema,
  type HttpFilter,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { Intention } from "../../model/index.ts";
import { pack } from "./common.ts";

const WILDCARD = "*";

interface SourceName {
  readonly ns: string;
  readonly name: string;
}

interface RbacIntention {
  readonly source: SourceName;
  readonly allow: boolean;
  notSources: SourceName[];
  skip: boolean;
}

function sourceOf(ixn: Intention): SourceName {
  return { ns: ixn.SourceNS || "default", name: ixn.SourceName };
}

function countWild(s: SourceName): number {
  if (s.ns === WILDCARD) return 2;
  return s.name === WILDCARD ? 1 : 0;
}

/** `ixnSourceMatches`: whether `against` (strictly more wildcarded) covers `tester`. */
function sourceCovers(tester: SourceName, against: SourceName): boolean {
  if (countWild(tester) >= countWild(against)) return false;
  return (tester.ns === against.ns || against.ns === WILDCARD) && (tester.name === against.name || against.name === WILDCARD);
}

function sameSource(a: SourceName, b: SourceName): boolean {
  return a.ns === b.ns && a.name === b.name;
}

/** Drops NOT-sources covered by a broader NOT-source of the same rule (`simplifyNotSourceSlice`). */
function simplify(notSources: SourceName[]): SourceName[] {
  if (notSources.length <= 1) return notSources;
  const sorted = [...notSources].sort((a, b) => countWild(a) - countWild(b));
  return sorted.filter((s, i) => !sorted.slice(i + 1).some((t) => sourceCovers(s, t)));
}

/** The SPIFFE URI pattern of a source: exact namespace and name, or wildcards. */
export function spiffePattern(s: SourceName): string {
  const any = "[^/]+";
  const ns = s.ns === WILDCARD ? any : escapeRegex(s.ns);
  const name = s.name === WILDCARD ? any : escapeRegex(s.name);
  return `^spiffe://${any}/ns/${ns}/dc/${any}/svc/${name}$`;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function idPrincipal(s: SourceName): Principal["identifier"] {
  return {
    case: "authenticated",
    value: { principalName: { matchPattern: { case: "safeRegex", value: { engineType: { case: "googleRe2", value: {} }, regex: spiffePattern(s) } } } },
  } as Principal["identifier"];
}

/**
 * `makeRBACRules`: intentions (highest precedence first) and the default decision as RBAC rules. With no
 * principal left the rules are `{action}` alone: ALLOW with no policy denies everything, DENY with no
 * policy allows everything.
 */
export function makeRbacRules(intentions: readonly Intention[], defaultAllow: boolean): RBAC {
  const seen: SourceName[] = [];
  const rules: RbacIntention[] = [];
  for (const ixn of intentions) {
    const source = sourceOf(ixn);
    // removeSameSourceIntentions: a higher-precedence intention already decided this exact source.
    if (seen.some((s) => sameSource(s, source))) continue;
    seen.push(source);
    rules.push({ source, allow: ixn.Action === "allow", notSources: [], skip: false });
  }
  for (let i = rules.length - 1; i >= 0; i--) {
    const ri = rules[i]!;
    if (ri.allow !== defaultAllow) continue;
    for (let j = i + 1; j < rules.length; j++) {
      const rj = rules[j]!;
      if (!rj.skip && sourceCovers(ri.source, rj.source)) rj.notSources.push(ri.source);
    }
    ri.skip = true;
  }
  const principals = rules
    .filter((r) => !r.skip)
    .map((r) => {
      const not = simplify(r.notSources);
      if (not.length === 0) return { identifier: idPrincipal(r.source) };
      return {
        identifier: {
          case: "andIds" as const,
          value: { ids: [{ identifier: idPrincipal(r.source) }, ...not.map((n) => ({ identifier: { case: "notId" as const, value: { identifier: idPrincipal(n) } } }))] },
        },
      };
    });
  return create(RBACSchema, {
    action: defaultAllow ? RBAC_Action.DENY : RBAC_Action.ALLOW,
    policies: principals.length === 0 ? {} : { "consul-intentions": { principals, permissions: [{ rule: { case: "any", value: true } }] } },
  });
}

/** The network RBAC filter (tcp public listeners and escape-hatch listeners), stat prefix "connect_authz". */
export function rbacNetworkFilter(intentions: readonly Intention[], defaultAllow: boolean): Filter {
  return create(FilterSchema, {
    name: "envoy.filters.network.rbac",
    configType: { case: "typedConfig", value: pack(NetworkRbacSchema, { rules: makeRbacRules(intentions, defaultAllow), statPrefix: "connect_authz" }) },
  });
}

/** The HTTP RBAC filter (http, http2 and grpc public listeners), placed before the router. */
export function rbacHttpFilter(intentions: readonly Intention[], defaultAllow: boolean): HttpFilter {
  return create(HttpFilterSchema, {
    name: "envoy.filters.http.rbac",
    configType: { case: "typedConfig", value: pack(HttpRbacSchema, { rules: makeRbacRules(intentions, defaultAllow) }) },
  });
}
