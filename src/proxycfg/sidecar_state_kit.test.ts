/**
 * Test kit for the sidecar state machine: a `web` sidecar in dc1 with upstreams `db` and prepared query
 * `geo`, real compiled chains, and a driver that applies events and keeps the watch set like a runner.
 */
import { compileDiscoveryChain, decodeConfigEntry, validateConfigEntry, type CompiledDiscoveryChain, type IssuedCert } from "../connect/index.ts";
import type { CheckServiceNode, ConfigEntry, IndexedCARoots, Intention, Upstream } from "../model/index.ts";
import { SidecarState, type SidecarEvent, type SidecarRegistration } from "./sidecar_state.ts";
import type { Command } from "./reconcile.ts";
import type { WatchRequest } from "./watches.ts";

export const TRUST = "11111111-2222-3333-4444-555555555555.consul";
export const ROOTS: IndexedCARoots = { ActiveRootID: "r1", TrustDomain: TRUST, Roots: [] };
export const LEAF = { SerialNumber: "01", CertPEM: "cert", PrivateKeyPEM: "key", Service: "web", ServiceURI: "", ValidAfter: "", ValidBefore: "", CreateIndex: 1, ModifyIndex: 1 } as IssuedCert;
export const DB: Upstream = { DestinationName: "db", LocalBindPort: 9191 };
export const GEO: Upstream = { DestinationType: "prepared_query", DestinationName: "geo", LocalBindPort: 8181 };

export function registration(upstreams: readonly Upstream[] = [DB, GEO], config?: Record<string, unknown>): SidecarRegistration {
  return {
    ProxyID: "web-sidecar-proxy", Service: "web-sidecar-proxy", Address: "", Port: 21000, Meta: {}, TaggedAddresses: {},
    Proxy: { DestinationServiceName: "web", DestinationServiceID: "web", LocalServicePort: 8080, Upstreams: upstreams, MeshGateway: {}, Expose: {}, ...(config ? { Config: config } : {}) },
  };
}

export function entry(raw: Record<string, unknown>): ConfigEntry {
  const e = decodeConfigEntry(raw);
  validateConfigEntry(e);
  return e;
}

export function chain(service: string, entries: readonly Record<string, unknown>[] = [], o: { protocol?: string; meshGateway?: "local" | "remote" } = {}): CompiledDiscoveryChain {
  return compileDiscoveryChain({
    serviceName: service, evaluateInDatacenter: "dc1", evaluateInTrustDomain: TRUST, useInDatacenter: "dc1",
    ...(o.protocol ? { overrideProtocol: o.protocol } : {}),
    ...(o.meshGateway ? { overrideMeshGateway: { Mode: o.meshGateway } } : {}),
    entries: entries.map(entry),
  });
}

export function node(name: string, service: string, dc = "dc1"): CheckServiceNode {
  return {
    Node: { ID: "", Node: name, Address: "10.0.0.1", Datacenter: dc, TaggedAddresses: {}, Meta: {}, CreateIndex: 1, ModifyIndex: 1 },
    Service: { Kind: "connect-proxy", ID: `${service}-sidecar-proxy`, Service: `${service}-sidecar-proxy`, Tags: null, Address: "", Meta: null, Port: 21000, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: { DestinationServiceName: service, MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 1, ModifyIndex: 1 },
    Checks: [],
  };
}

export function intention(source: string): Intention {
  return {
    ID: `ixn-${source}`, Description: "", SourceNS: "default", SourceName: source, DestinationNS: "default", DestinationName: "web",
    SourceType: "consul", Action: "allow", DefaultAddr: "", DefaultPort: 0, Meta: {}, Precedence: 9,
    CreatedAt: "", UpdatedAt: "", Hash: "", CreateIndex: 1, ModifyIndex: 1,
  } as Intention;
}

/**
 * The watch set a runner keeps for a machine's commands; `apply` throws on a cancel of a watch not held
 * or a watch started twice, and returns the commands as short lines ("watch <id>", "cancel <id>").
 */
export function watchTracker<R>() {
  const held = new Map<string, R>();
  const apply = (cmds: readonly Command<R>[]) => {
    for (const c of cmds) {
      if (c.op === "cancel") {
        if (!held.delete(c.watchId)) throw new Error(`cancel of a watch not held: ${c.watchId}`);
      } else {
        if (held.has(c.watchId)) throw new Error(`watch started twice: ${c.watchId}`);
        held.set(c.watchId, c.request);
      }
    }
    return cmds.map((c) => `${c.op} ${c.watchId}`);
  };
  return { held, apply, ids: () => [...held.keys()].sort() };
}

/** A machine with the watch set a runner would keep; `send` returns the commands as short lines. */
export function driver(reg = registration()) {
  const m = new SidecarState({ datacenter: "dc1", advertiseAddrLan: "10.0.0.9", intentionDefaultAllow: true }, reg);
  const t = watchTracker<WatchRequest>();
  return {
    machine: m,
    held: t.held,
    start: () => t.apply(m.start()),
    send: (ev: SidecarEvent) => t.apply(m.handle(ev)),
    ids: t.ids,
  };
}

/** Answers every config-entry watch held with null (no central config). */
export function noConfigEntries(d: ReturnType<typeof driver>): string[] {
  const out: string[] = [];
  for (const [id, r] of [...d.held]) if (r.kind === "config-entry") out.push(...d.send({ kind: "config-entry", watchId: id, value: null }));
  return out;
}
