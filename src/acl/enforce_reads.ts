/**
 * What a token may see of a read (Consul 1.8 agent/consul/acl.go aclFilter and the read endpoints'
 * checks). Point reads it may not make are denied (403 "Permission denied"); lists drop what it may
 * not read, silently (1.8 has no header saying so):
 * - KV: a key needs key:read (denied); a recursive read or key list needs key:list on the prefix only
 *   with `enable_key_list_policy`, then entries are filtered by key:read;
 * - catalog and health: nodes need node:read; a service instance or a service's check needs node:read
 *   on its node and service:read on its service; `catalog-node-services` of an unreadable node is null;
 * - sessions: session:read on the session's node; coordinates: node:read;
 * - config entries: service:read on the name (proxy-defaults are open); intentions: intentions:read on
 *   the source or the destination (a point read of neither is denied);
 * - prepared queries: query:read on the name prefix (unnamed ones only with acl:write), and their
 *   captured Token shown as `<hidden>` without acl:write; executions are filtered as health reads;
 * - CA configuration, autopilot configuration and federation states need operator:read; CA roots need nothing;
 *   a snapshot needs acl:write, as the snapshot API does;
 * - ACL objects need acl:read, a token's secret shows as `<hidden>` without acl:write, and the write
 *   context (secrets included) needs acl:write; a token read by its own secret, the bootstrap state
 *   and the login view of an auth method (its Name and Type, never its Config) need nothing.
 */
import type { CheckServiceNode, HealthCheck, PreparedQuery, ReadQuery, ReadValue, TxnResult } from "../model/index.ts";
import type { Authorizer } from "./authorizer.ts";
import { PERMISSION_DENIED, txnDenials } from "./enforce_writes.ts";

export type ReadDecision<V> = { readonly denied: string } | { readonly value: V };

/** Consul's redactedToken. */
export const REDACTED_TOKEN = "<hidden>";

export interface ReadAuthorizeOptions {
  /** `acl.enable_key_list_policy`. */
  readonly enableKeyListPolicy: boolean;
}

/** The part of `value` (the result of `q`) that `a` may see, or a denial. */
export function authorizeRead<Q extends ReadQuery>(q: Q, value: ReadValue<Q>, a: Authorizer, o: ReadAuthorizeOptions): ReadDecision<ReadValue<Q>> {
  return decide(q, value as never, a, o) as ReadDecision<ReadValue<Q>>;
}

const ok = <V>(value: V): ReadDecision<V> => ({ value });
const DENIED = { denied: PERMISSION_DENIED } as const;

type NodeInfoLike = { readonly Node: string; readonly Services: readonly { readonly Service: string }[]; readonly Checks: readonly HealthCheck[] };

function decide(q: ReadQuery, v: never, a: Authorizer, o: ReadAuthorizeOptions): ReadDecision<unknown> {
  const can = (resource: Parameters<Authorizer["check"]>[0], segment: string, access: "read" | "list" = "read") => a.check(resource, access, segment) === "allow";
  const node = (n: string) => can("node", n);
  const svc = (s: string) => can("service", s);
  const check = (c: HealthCheck) => node(c.Node) && (!c.ServiceName || svc(c.ServiceName));
  const instance = (x: CheckServiceNode) => node(x.Node.Node) && svc(x.Service.Service);
  const operator = () => a.check("operator", "read") === "allow";
  const manage = () => a.check("acl", "write") === "allow";
  const queries = (list: readonly PreparedQuery[]) =>
    manage() ? list : list.filter((p) => p.Name !== "" && can("query", p.Name)).map((p) => (p.Token ? { ...p, Token: REDACTED_TOKEN } : p));
  switch (q.type) {
    case "kv-get":
      return can("key", q.key) ? ok(v) : DENIED;
    case "kv-list":
    case "kv-keys": {
      if (o.enableKeyListPolicy && !can("key", q.prefix, "list")) return DENIED;
      const list = v as readonly ({ Key: string } | string)[];
      return ok(list.filter((e) => can("key", typeof e === "string" ? e : e.Key)));
    }
    case "catalog-nodes":
      return ok((v as readonly { Node: string }[]).filter((n) => node(n.Node)));
    case "ui-nodes":
      // Nodes without node:read go; of the rest, the services and checks the token may not read.
      return ok((v as readonly NodeInfoLike[]).filter((n) => node(n.Node)).map((n) => ({
        ...n, Services: n.Services.filter((s) => svc(s.Service)), Checks: n.Checks.filter(check),
      })));
    case "ui-services":
      // Consul filters the summaries by service:read, and each one's nodes by node:read.
      return ok((v as readonly { Name: string; Nodes: readonly string[] }[]).filter((x) => svc(x.Name)).map((x) => ({ ...x, Nodes: x.Nodes.filter(node) })));
    case "catalog-services":
      return ok(Object.fromEntries(Object.entries(v as Record<string, readonly string[]>).filter(([name]) => svc(name))));
    case "catalog-service-nodes":
    case "catalog-service-nodes-by-address":
      return ok((v as readonly { Node: string; ServiceName: string }[]).filter((s) => node(s.Node) && svc(s.ServiceName)));
    case "catalog-node-services": {
      const ns = v as { Node: { Node: string }; Services: Record<string, { Service: string }> } | null;
      if (!ns || !node(ns.Node.Node)) return ok(null);
      return ok({ ...ns, Services: Object.fromEntries(Object.entries(ns.Services).filter(([, s]) => svc(s.Service))) });
    }
    case "health-node-checks":
    case "health-service-checks":
    case "health-state":
      return ok((v as readonly HealthCheck[]).filter(check));
    case "health-service-nodes":
    case "health-service-kind-nodes":
      return ok((v as readonly CheckServiceNode[]).filter(instance));
    case "session-info":
    case "session-list":
    case "session-node":
      return ok((v as readonly { Node: string }[]).filter((s) => can("session", s.Node)));
    case "coordinate-nodes":
    case "coordinate-node":
      return ok((v as readonly { Node: string }[]).filter((c) => node(c.Node)));
    case "txn-read": {
      const errors = txnDenials(q.ops, a);
      if (errors.length) return ok({ Results: null, Errors: errors });
      const r = v as { Results: readonly TxnResult[] | null; Errors: unknown };
      return ok(r.Results ? { ...r, Results: r.Results.filter((x) => !x.KV || can("key", x.KV.Key)) } : r);
    }
    case "config-entry-get": {
      const e = v as { Kind: string; Name: string } | null;
      return !e || e.Kind === "proxy-defaults" || svc(e.Name) ? ok(e) : DENIED;
    }
    case "config-entry-list":
      return ok((v as readonly { Kind: string; Name: string }[]).filter((e) => e.Kind === "proxy-defaults" || svc(e.Name)));
    case "intention-get": {
      const x = v as { SourceName: string; DestinationName: string } | null;
      return !x || can("intention", x.SourceName) || can("intention", x.DestinationName) ? ok(x) : DENIED;
    }
    case "intention-list":
      return ok((v as readonly { SourceName: string; DestinationName: string }[]).filter((x) => can("intention", x.SourceName) || can("intention", x.DestinationName)));
    case "prepared-query-list":
      return ok(queries(v as readonly PreparedQuery[]));
    case "prepared-query-get": {
      const p = v as PreparedQuery | null;
      if (!p) return ok(null);
      const [shown] = queries([p]);
      return shown ? ok(shown) : DENIED;
    }
    case "prepared-query-explain":
    case "prepared-query-execute": {
      const out = v as { type: string; query?: PreparedQuery; value?: { Nodes?: readonly CheckServiceNode[] } | null };
      if (out.type !== "found") return ok(out);
      const [shown] = queries([out.query!]);
      if (!shown && !manage()) return DENIED;
      const value = out.value && out.value.Nodes ? { ...out.value, Nodes: out.value.Nodes.filter(instance) } : out.value;
      return ok({ ...out, query: shown ?? out.query, value });
    }
    case "prepared-query-execute-remote": {
      const r = v as { Nodes: readonly CheckServiceNode[] };
      return ok({ ...r, Nodes: r.Nodes.filter(instance) });
    }
    case "ca-config":
    case "autopilot-config":
    case "federation-state-get":
    case "federation-state-list":
    case "federation-state-mesh-gateways":
      return operator() ? ok(v) : DENIED;
    case "snapshot":
      return a.snapshot() === "allow" ? ok(v) : DENIED;
    case "ca-roots":
    case "acl-replication-status":
    case "acl-token-self":
    case "acl-token-resolve":
    case "acl-bootstrap-state":
    case "auth-method-login": // Name and Type only: ACL.Login needs no token
      return ok(v);
    case "acl-token-get":
    case "acl-token-list": {
      if (a.check("acl", "read") !== "allow") return DENIED;
      if (manage()) return ok(v);
      // Without acl:write a token's secret is shown as Consul shows it.
      const hide = (t: { SecretID: string } | null) => (t ? { ...t, SecretID: REDACTED_TOKEN } : t);
      return ok(q.type === "acl-token-get" ? hide(v) : (v as readonly { SecretID: string }[]).map(hide));
    }
    case "acl-policy-get":
    case "acl-policy-list":
    case "acl-role-get":
    case "acl-role-list":
    case "auth-method-get":
    case "auth-method-list":
    case "binding-rule-get":
    case "binding-rule-list":
      return a.check("acl", "read") === "allow" ? ok(v) : DENIED;
    case "acl-write-context":
      return manage() ? ok(v) : DENIED;
  }
}
