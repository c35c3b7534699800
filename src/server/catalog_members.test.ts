import { describe, expect, test } from "bun:test";
import { clientTags, serverTags, type PoolMember } from "../membership/index.ts";
import { handlesMember, memberWrite, reapedNodes, SERF_ALIVE_OUTPUT, SERF_FAILED_OUTPUT, type CatalogNodeFacts } from "./catalog_members.ts";

const server = (name: string, status: PoolMember["status"] = "alive", dc = "dc1"): PoolMember => ({
  name, addr: "10.0.0.1", port: 8301, status,
  tags: serverTags({ datacenter: dc, nodeId: `id-${name}`, port: 8300, build: "0.1.0" }),
});
const client = (name: string, status: PoolMember["status"] = "alive"): PoolMember => ({
  name, addr: "10.0.0.2", port: 8301, status, tags: clientTags({ datacenter: "dc1", nodeId: `id-${name}`, build: "0.1.0" }),
});
const none: CatalogNodeFacts = { node: undefined, serviceIds: [], serfStatus: undefined };
const registered = (addr: string, serfStatus: CatalogNodeFacts["serfStatus"], serviceIds: string[] = []): CatalogNodeFacts => ({
  node: { Address: addr, TaggedAddresses: { lan: addr }, Meta: { rack: "r1" } }, serviceIds, serfStatus,
});
const o = { datacenter: "dc1", selfName: "s1" };

describe("memberWrite", () => {
  test("an alive client missing from the catalog is registered with a passing serfHealth check", () => {
    const w = memberWrite(client("c1"), none, o);
    expect(w?.kind).toBe("register");
    const r = w!.kind === "register" ? w!.request : undefined;
    expect(r).toMatchObject({ Node: "c1", ID: "id-c1", Address: "10.0.0.2", Datacenter: "dc1" });
    expect(r?.Check).toMatchObject({ CheckID: "serfHealth", Name: "Serf Health Status", Status: "passing", Output: SERF_ALIVE_OUTPUT });
    expect(r?.Service).toBeUndefined();
  });

  test("an alive server also registers the consul service on its server port", () => {
    const w = memberWrite(server("s2"), none, o);
    const r = w?.kind === "register" ? w.request : undefined;
    expect(r?.Service).toMatchObject({ ID: "consul", Service: "consul", Port: 8300, Weights: { Passing: 1, Warning: 1 } });
    expect(r?.Service?.Meta).toMatchObject({ raft_version: "3", version: "0.1.0", non_voter: "false" });
  });

  test("nothing is written when the catalog already agrees", () => {
    expect(memberWrite(client("c1"), registered("10.0.0.2", "passing"), o)).toBeUndefined();
    expect(memberWrite(server("s2"), registered("10.0.0.1", "passing", ["consul"]), o)).toBeUndefined();
  });

  test("a changed address, a missing consul service or a critical check re-registers, keeping tagged addresses and meta", () => {
    for (const facts of [registered("10.9.9.9", "passing", ["consul"]), registered("10.0.0.1", "passing"), registered("10.0.0.1", "critical", ["consul"])]) {
      const w = memberWrite(server("s2"), facts, o);
      expect(w?.kind).toBe("register");
      expect(w?.kind === "register" && w.request).toMatchObject({ TaggedAddresses: { lan: facts.node!.Address }, NodeMeta: { rack: "r1" } });
    }
  });

  test("a failed member gets a critical serfHealth check without touching the node; unknown nodes are ignored", () => {
    const w = memberWrite(client("c1", "failed"), registered("10.0.0.2", "passing"), o);
    expect(w?.kind === "register" && w.request).toMatchObject({ SkipNodeUpdate: true, Check: { Status: "critical", Output: SERF_FAILED_OUTPUT } });
    expect(memberWrite(client("c1", "failed"), registered("10.0.0.2", "critical"), o)).toBeUndefined();
    expect(memberWrite(client("c1", "failed"), none, o)).toBeUndefined();
  });

  test("left and reaped members are deregistered, never the leader itself", () => {
    expect(memberWrite(client("c1", "left"), registered("10.0.0.2", "passing"), o)).toEqual({ kind: "deregister", request: { Datacenter: "dc1", Node: "c1" } });
    expect(memberWrite(client("c1", "failed"), registered("10.0.0.2", "critical"), { ...o, reaped: true })?.kind).toBe("deregister");
    expect(memberWrite(server("s1", "left"), registered("10.0.0.1", "passing"), o)).toBeUndefined();
    expect(memberWrite(client("c1", "left"), none, o)).toBeUndefined();
  });

  test("a leaving member is left alone until it has left", () => {
    expect(memberWrite(client("c1", "leaving"), registered("10.0.0.2", "passing"), o)).toBeUndefined();
  });
});

describe("handlesMember and reapedNodes", () => {
  test("only agents and servers of this datacenter are reconciled", () => {
    expect(handlesMember(client("c1"), "dc1")).toBe(true);
    expect(handlesMember(server("s2"), "dc1")).toBe(true);
    expect(handlesMember(server("s9", "alive", "dc2"), "dc1")).toBe(false);
    expect(handlesMember({ name: "x", addr: "1.1.1.1", port: 1, status: "alive", tags: { role: "other" } }, "dc1")).toBe(false);
  });

  test("catalog nodes with a serf check that gossip no longer knows are reaped, except ourselves", () => {
    expect(reapedNodes(["s1", "c1", "gone", "gone2"], [server("s1"), client("c1")], "s1")).toEqual(["gone", "gone2"]);
    expect(reapedNodes(["s1"], [], "s1")).toEqual([]);
  });
});
