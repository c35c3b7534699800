/**
 * Which state commands a token may propose (Consul 1.8's RPC endpoints: vetRegisterWithACL,
 * vetDeregisterWithACL, kvsPreApply, Session.Apply, Intention.Apply, PreparedQuery.Apply,
 * ConfigEntry.Apply, Coordinate.Update, Txn.preCheck, and the operator endpoints). The checks that need
 * the current state (a service's existing name, a session's node, an intention's old destination)
 * read it from `store`. Pure apart from those reads.
 *
 * `commandDenial` answers undefined when allowed, else the error text ("Permission denied", or
 * Consul's "Unknown service '...'" where it refuses for that reason); a transaction's denials are
 * per operation (`txnDenials`), answered 409 with `{OpIndex, What}` by the caller.
 */
import type { RegisterRequest, TxnError, TxnOp } from "../model/index.ts";
import {
  catalogNodeServices, healthNodeChecks, intentionGet, preparedQueryGet, sessionGet, WatchSet, type StateCommand, type StateStore,
} from "../state/index.ts";
import type { AclAccess, AclResource, Authorizer } from "./authorizer.ts";

export const PERMISSION_DENIED = "Permission denied";

const allowed = (a: Authorizer, resource: AclResource, access: AclAccess, segment?: string) => a.check(resource, access, segment) === "allow";

/** ChangesNode: whether a registration (re)writes the node's own fields. */
function changesNode(req: RegisterRequest, store: StateStore): boolean {
  const ns = catalogNodeServices(store, new WatchSet(), req.Node).value;
  if (!ns) return true;
  if (req.SkipNodeUpdate) return false;
  const n = ns.Node;
  const same = (a: Readonly<Record<string, string>> | null | undefined, b: Readonly<Record<string, string>> | null | undefined) =>
    JSON.stringify(Object.entries(a ?? {}).sort()) === JSON.stringify(Object.entries(b ?? {}).sort());
  return (req.ID ?? "") !== (n.ID ?? "") || req.Node !== n.Node || req.Address !== n.Address || !same(req.TaggedAddresses, n.TaggedAddresses) || !same(req.NodeMeta, n.Meta);
}

/** vetRegisterWithACL. */
function registerDenial(req: RegisterRequest, a: Authorizer, store: StateStore): string | undefined {
  const ns = catalogNodeServices(store, new WatchSet(), req.Node).value;
  if (changesNode(req, store) && !allowed(a, "node", "write", req.Node)) return PERMISSION_DENIED;
  if (req.Service) {
    if (!allowed(a, "service", "write", req.Service.Service)) return PERMISSION_DENIED;
    const other = ns?.Services[req.Service.ID];
    if (other && !allowed(a, "service", "write", other.Service)) return PERMISSION_DENIED;
  }
  for (const check of [...(req.Check ? [req.Check] : []), ...(req.Checks ?? [])]) {
    if (check.Node && check.Node !== req.Node) return `Node '${check.Node}' for check '${check.CheckID}' doesn't match register request node '${req.Node}'`;
    if (!check.ServiceID) {
      if (!allowed(a, "node", "write", req.Node)) return PERMISSION_DENIED;
      continue;
    }
    if (req.Service && req.Service.ID === check.ServiceID) continue;
    const other = ns?.Services[check.ServiceID];
    if (!other) return `Unknown service '${check.ServiceID}' for check '${check.CheckID}'`;
    if (!allowed(a, "service", "write", other.Service)) return PERMISSION_DENIED;
  }
  return undefined;
}

/** vetDeregisterWithACL, in applyDeregister's order: service, else check, else the whole node. */
function deregisterDenial(req: { Node: string; ServiceID?: string; CheckID?: string }, a: Authorizer, store: StateStore): string | undefined {
  if (req.ServiceID) {
    const svc = catalogNodeServices(store, new WatchSet(), req.Node).value?.Services[req.ServiceID];
    if (!svc) return `Unknown service '${req.ServiceID}'`;
    return allowed(a, "service", "write", svc.Service) ? undefined : PERMISSION_DENIED;
  }
  if (req.CheckID) {
    const check = healthNodeChecks(store, new WatchSet(), req.Node).value.find((c) => c.CheckID === req.CheckID);
    if (!check) return `Unknown check '${req.CheckID}'`;
    const ok = check.ServiceID ? allowed(a, "service", "write", check.ServiceName) : allowed(a, "node", "write", req.Node);
    return ok ? undefined : PERMISSION_DENIED;
  }
  return allowed(a, "node", "write", req.Node) ? undefined : PERMISSION_DENIED;
}

/** kvsPreApply and Txn.preCheck for one operation: undefined when allowed, else the error text. */
function txnOpDenial(op: TxnOp, a: Authorizer): string | undefined {
  const deny = (ok: boolean) => (ok ? undefined : PERMISSION_DENIED);
  if (op.KV) {
    switch (op.KV.Verb) {
      case "get":
      case "get-tree":
        return undefined; // filtered on the way out
      case "check-index":
      case "check-session":
      case "check-not-exists":
        return deny(allowed(a, "key", "read", op.KV.Key));
      case "delete-tree":
        return deny(a.keyWritePrefix(op.KV.Key) === "allow");
      default:
        return deny(allowed(a, "key", "write", op.KV.Key));
    }
  }
  if (op.Node) return op.Node.Verb === "get" ? undefined : deny(allowed(a, "node", "write", op.Node.Node.Node));
  if (op.Service) {
    if (op.Service.Verb === "get") return undefined;
    const s = op.Service.Service;
    if (!allowed(a, "service", "write", s.Service ?? "")) return PERMISSION_DENIED;
    return s.Kind === "connect-proxy" && s.Proxy ? deny(allowed(a, "service", "write", s.Proxy.DestinationServiceName)) : undefined;
  }
  const c = op.Check!.Check;
  if (op.Check!.Verb === "get") return undefined;
  return deny(c.ServiceID ? allowed(a, "service", "write", c.ServiceName ?? "") : allowed(a, "node", "write", c.Node));
}

/** Each denied operation of a transaction, in order (empty: all allowed). */
export function txnDenials(ops: readonly TxnOp[], a: Authorizer): TxnError[] {
  const out: TxnError[] = [];
  ops.forEach((op, i) => {
    const what = txnOpDenial(op, a);
    if (what) out.push({ OpIndex: i, What: what });
  });
  return out;
}

/** A prepared query's ACL prefix (GetACLPrefix): its name, or its template's name prefix; none when unnamed. */
const queryPrefix = (q: { Name: string }) => (q.Name === "" ? undefined : q.Name);

/** Whether `a` may propose `cmd`; undefined when allowed, else the error text. Transactions: see txnDenials. */
export function commandDenial(cmd: StateCommand, a: Authorizer, store: StateStore): string | undefined {
  const deny = (ok: boolean) => (ok ? undefined : PERMISSION_DENIED);
  const operator = () => deny(allowed(a, "operator", "write"));
  switch (cmd.type) {
    case "register":
      return registerDenial(cmd.req, a, store);
    case "deregister":
      return deregisterDenial(cmd.req, a, store);
    case "kv":
      return cmd.op === "delete-tree" ? deny(a.keyWritePrefix(cmd.entry.Key) === "allow") : deny(allowed(a, "key", "write", cmd.entry.Key));
    case "txn":
      return txnDenials(cmd.ops, a).length ? PERMISSION_DENIED : undefined;
    case "session":
      if (cmd.op === "create") return deny(allowed(a, "session", "write", cmd.session.Node));
      {
        const existing = sessionGet(store, new WatchSet(), cmd.id).value;
        return existing ? deny(allowed(a, "session", "write", existing.Node)) : undefined;
      }
    case "intention": {
      const id = cmd.op === "delete" ? cmd.id : cmd.intention.ID;
      const old = intentionGet(store, new WatchSet(), id).value;
      if (cmd.op === "upsert" && !allowed(a, "intention", "write", cmd.intention.DestinationName)) return PERMISSION_DENIED;
      return old && !allowed(a, "intention", "write", old.DestinationName) ? PERMISSION_DENIED : undefined;
    }
    case "config-entry": {
      const kind = cmd.op === "delete" ? cmd.kind : cmd.entry.Kind;
      const name = cmd.op === "delete" ? cmd.name : cmd.entry.Name;
      return kind === "proxy-defaults" ? operator() : deny(allowed(a, "service", "write", name));
    }
    case "prepared-query": {
      if (cmd.op !== "delete") {
        const prefix = queryPrefix(cmd.query);
        if (prefix !== undefined && !allowed(a, "query", "write", prefix)) return PERMISSION_DENIED;
        if (cmd.op === "create") return undefined;
      }
      const existing = preparedQueryGet(store, new WatchSet(), cmd.op === "delete" ? cmd.id : cmd.query.ID).value;
      const prefix = existing ? queryPrefix(existing) : undefined;
      return prefix !== undefined ? deny(allowed(a, "query", "write", prefix)) : undefined;
    }
    case "coordinate-batch":
      return deny(cmd.updates.every((u) => allowed(a, "node", "write", u.Node)));
    case "ca":
    case "autopilot":
    case "federation-state":
      return operator();
    case "restore":
      return deny(a.snapshot() === "allow");
    case "acl-bootstrap":
      return undefined; // no ACL needed: the bootstrap flag (and the reset file) guard it
    case "acl-token":
    case "acl-policy":
    case "acl-role":
    case "acl-auth-method":
    case "acl-binding-rule":
      return deny(allowed(a, "acl", "write"));
    case "tombstone-reap":
    case "restore-stage":
      // Proposed by servers for themselves, never on a client's behalf.
      return PERMISSION_DENIED;
  }
}
