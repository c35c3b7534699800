import { describe, expect, test } from "bun:test";
import { serverTags, type PoolMember } from "../membership/index.ts";
import { datacenterSupportsFederationStates, federationStatesGate, gatedServers, type GatedServer } from "./leader_federation_gate.ts";

const fs = (status: GatedServer["status"] = "alive"): GatedServer => ({ status, features: { fs: 1 } });
const old = (status: GatedServer["status"] = "alive"): GatedServer => ({ status, features: {} });

describe("federation-state feature gate (ft_fs)", () => {
  test("a datacenter supports federation states when every alive or failed server advertises fs=1 and one was found", () => {
    expect(datacenterSupportsFederationStates([fs(), fs("failed")])).toBe(true);
    expect(datacenterSupportsFederationStates([fs(), old()])).toBe(false);
    expect(datacenterSupportsFederationStates([fs(), old("failed")])).toBe(false);
    // Left and leaving servers count as meeting it (serversFederationStatesInfo.update).
    expect(datacenterSupportsFederationStates([fs(), old("left"), old("leaving")])).toBe(true);
    expect(datacenterSupportsFederationStates([old("left")])).toBe(false);
    expect(datacenterSupportsFederationStates([])).toBe(false);
    expect(datacenterSupportsFederationStates([{ status: "alive", features: { fs: 2 } }])).toBe(false);
  });

  test("the primary: only its own servers count; latched once true", () => {
    const servers: Record<string, GatedServer[]> = { dc1: [fs(), old()] };
    const gate = federationStatesGate({ localDc: "dc1", primaryDc: "dc1", servers: (dc) => servers[dc] ?? [], hasStates: () => false });
    expect(gate.supported()).toBe(false);
    servers["dc1"] = [fs(), fs()];
    expect(gate.supported()).toBe(true);
    servers["dc1"] = [old()];
    expect(gate.supported()).toBe(true);
  });

  test("a secondary also needs the primary's servers, and at least one of them known", () => {
    const servers: Record<string, GatedServer[]> = { dc2: [fs()] };
    const gate = federationStatesGate({ localDc: "dc2", primaryDc: "dc1", servers: (dc) => servers[dc] ?? [], hasStates: () => false });
    expect(gate.supported()).toBe(false);
    servers["dc1"] = [fs(), old()];
    expect(gate.supported()).toBe(false);
    servers["dc1"] = [fs(), fs()];
    servers["dc2"] = [old()];
    expect(gate.supported()).toBe(false);
    servers["dc2"] = [fs()];
    expect(gate.supported()).toBe(true);
  });

  test("a stored federation state latches the gate whatever gossip shows (PR #9519)", () => {
    let stored = false;
    const gate = federationStatesGate({ localDc: "dc2", primaryDc: "dc1", servers: () => [old()], hasStates: () => stored });
    expect(gate.supported()).toBe(false);
    stored = true;
    expect(gate.supported()).toBe(true);
    stored = false;
    expect(gate.supported()).toBe(true);
  });

  test("gatedServers reads the ft_fs tag of a pool's Consul servers of one datacenter", () => {
    const member = (name: string, dc: string, features: string[], status: PoolMember["status"] = "alive"): PoolMember => ({
      name, addr: "10.0.0.1", port: 8301, status,
      tags: serverTags({ datacenter: dc, nodeId: name, port: 8300, build: "1.8.0", features }),
    });
    const members = [
      member("a", "dc1", ["fs"]), member("b", "dc1", [], "failed"), member("c", "dc2", ["fs"]),
      { name: "client", addr: "10.0.0.9", port: 8301, status: "alive", tags: { role: "node", dc: "dc1" } } as PoolMember,
    ];
    expect(gatedServers(members, "dc1")).toEqual([{ status: "alive", features: { fs: 1 } }, { status: "failed", features: {} }]);
    expect(gatedServers(members, "dc2")).toEqual([{ status: "alive", features: { fs: 1 } }]);
  });
});
