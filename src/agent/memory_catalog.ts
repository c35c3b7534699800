/**
 * An in-memory CatalogPort with the write semantics of Consul's catalog for one datacenter (upsert of
 * node, service and checks; deregistering a service drops its checks), a log of calls and switchable
 * failures. For tests of the agent and of code built on it; not a replacement for src/state.
 */
import type { DeregisterRequest, HealthCheck, Node, NodeService, RegisterRequest } from "../model/index.ts";
import type { CatalogNodeServices, CatalogPort } from "./ports.ts";

export interface MemoryCatalogCall {
  readonly op: "nodeServices" | "nodeChecks" | "register" | "deregister";
  readonly node: string;
  readonly req?: RegisterRequest | DeregisterRequest;
}

export interface MemoryCatalog extends CatalogPort {
  /** Every call in order, failed ones included. */
  readonly calls: MemoryCatalogCall[];
  /** While set, every call rejects with this message. */
  failWith: string | undefined;
  /** The stored records of a node (for assertions and for simulating drift by editing). */
  servicesOf(node: string): Map<string, NodeService>;
  checksOf(node: string): Map<string, HealthCheck>;
  nodeOf(node: string): Node | undefined;
  /** Current Raft-like index. */
  readonly index: number;
}

/** Creates an empty catalog. */
export function createMemoryCatalog(): MemoryCatalog {
  let index = 1;
  const nodes = new Map<string, Node>();
  const services = new Map<string, Map<string, NodeService>>();
  const checks = new Map<string, Map<string, HealthCheck>>();
  const table = <T>(m: Map<string, Map<string, T>>, node: string) => {
    let t = m.get(node);
    if (!t) m.set(node, (t = new Map()));
    return t;
  };
  const cat: MemoryCatalog = {
    calls: [],
    failWith: undefined,
    get index() {
      return index;
    },
    servicesOf: (node) => table(services, node),
    checksOf: (node) => table(checks, node),
    nodeOf: (node) => nodes.get(node),
    async nodeServices(node): Promise<CatalogNodeServices | undefined> {
      cat.calls.push({ op: "nodeServices", node });
      if (cat.failWith) throw new Error(cat.failWith);
      const n = nodes.get(node);
      return n ? { index, node: n, services: [...table(services, node).values()] } : undefined;
    },
    async nodeChecks(node) {
      cat.calls.push({ op: "nodeChecks", node });
      if (cat.failWith) throw new Error(cat.failWith);
      return [...table(checks, node).values()];
    },
    async register(req) {
      cat.calls.push({ op: "register", node: req.Node, req });
      if (cat.failWith) throw new Error(cat.failWith);
      index++;
      const existing = nodes.get(req.Node);
      if (!existing || !req.SkipNodeUpdate) {
        nodes.set(req.Node, {
          ID: req.ID ?? "", Node: req.Node, Address: req.Address, Datacenter: req.Datacenter ?? "",
          TaggedAddresses: { ...req.TaggedAddresses }, Meta: { ...req.NodeMeta },
          CreateIndex: existing?.CreateIndex ?? index, ModifyIndex: index,
        });
      }
      if (req.Service) {
        const old = table(services, req.Node).get(req.Service.ID);
        table(services, req.Node).set(req.Service.ID, { ...req.Service, CreateIndex: old?.CreateIndex ?? index, ModifyIndex: index });
      }
      for (const c of [...(req.Check ? [req.Check] : []), ...(req.Checks ?? [])]) {
        if (c.ServiceID && !table(services, req.Node).has(c.ServiceID)) throw new Error(`Missing service for check ${c.CheckID}`);
        const old = table(checks, req.Node).get(c.CheckID);
        table(checks, req.Node).set(c.CheckID, { ...c, Node: req.Node, CreateIndex: old?.CreateIndex ?? index, ModifyIndex: index });
      }
    },
    async deregister(req) {
      cat.calls.push({ op: "deregister", node: req.Node, req });
      if (cat.failWith) throw new Error(cat.failWith);
      index++;
      if (req.ServiceID) {
        table(services, req.Node).delete(req.ServiceID);
        for (const [id, c] of table(checks, req.Node)) if (c.ServiceID === req.ServiceID) table(checks, req.Node).delete(id);
      } else if (req.CheckID) {
        table(checks, req.Node).delete(req.CheckID);
      } else {
        nodes.delete(req.Node);
        services.delete(req.Node);
        checks.delete(req.Node);
      }
    },
  };
  return cat;
}
