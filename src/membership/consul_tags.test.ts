import { describe, expect, test } from "bun:test";
import { MAX_META_BYTES } from "./config.ts";
import {
  FEATURE_FEDERATION_STATES, clientTags, hostOf, isClient, joinHostPort, parseServer, parseWanName,
  serverHasFeature, serverTags, wanName, type TaggedMember,
} from "./consul_tags.ts";
import { decodeTags, encodeTags, type Tags } from "./tags.ts";

const NODE_ID = "5e3a1f4c-9d2b-4c7e-8a61-0f2d3b4c5d6e";
const server = (extra: Partial<Parameters<typeof serverTags>[0]> = {}) =>
  serverTags({ datacenter: "dc1", nodeId: NODE_ID, port: 8300, build: "0.1.0:abc1234", ...extra });
const member = (tags: Tags, name = "s1", addr = "10.0.0.1:8301"): TaggedMember => ({ name, addr, tags, status: "alive" });

describe("serverTags / clientTags", () => {
  test("server tags carry Consul's names and values", () => {
    const t = server({ bootstrapExpect: 3, wanJoinPort: 8302, features: [FEATURE_FEDERATION_STATES] });
    expect(t).toEqual({
      role: "consul", dc: "dc1", segment: "", id: NODE_ID, vsn: "2", vsn_min: "2", vsn_max: "3", raft_vsn: "3",
      build: "0.1.0:abc1234", port: "8300", wan_join_port: "8302", expect: "3", ft_fs: "1",
    });
    expect(server({ bootstrap: true, nonVoter: true, useTls: true })).toMatchObject({ bootstrap: "1", nonvoter: "1", use_tls: "1" });
    expect(server()).not.toHaveProperty("expect");
    expect(server()).not.toHaveProperty("wan_join_port");
  });

  test("client tags have role node and no server fields", () => {
    const t = clientTags({ datacenter: "dc1", nodeId: NODE_ID, build: "0.1.0" });
    expect(t["role"]).toBe("node");
    expect(t).not.toHaveProperty("port");
    expect(isClient(t)).toBe(true);
    expect(isClient(server())).toBe(false);
  });

  test("builders reject bad input", () => {
    expect(() => server({ port: 0 })).toThrow(RangeError);
    expect(() => server({ port: 70000 })).toThrow(RangeError);
    expect(() => server({ datacenter: "" })).toThrow(RangeError);
    expect(() => server({ build: "dev" })).toThrow(RangeError);
    expect(() => server({ bootstrapExpect: 1.5 })).toThrow(RangeError);
    expect(() => server({ features: [""] })).toThrow(RangeError);
  });

  test("a full server tag set fits the metadata limit with room to spare", () => {
    const bytes = encodeTags(server({ bootstrapExpect: 5, wanJoinPort: 8302, bootstrap: true, useTls: true, features: ["fs", "si"] }));
    expect(bytes.length).toBeLessThan(MAX_META_BYTES / 2);
  });
});

describe("parseServer (metadata.IsConsulServer)", () => {
  test("round trips through metadata bytes", () => {
    const tags = decodeTags(encodeTags(server({ bootstrapExpect: 3, wanJoinPort: 8302, features: ["fs"] })));
    const s = parseServer(member(tags))!;
    expect(s).toEqual({
      name: "s1", shortName: "s1", id: NODE_ID, datacenter: "dc1", segment: "", port: 8300, rpcAddr: "10.0.0.1:8300",
      wanJoinPort: 8302, bootstrap: false, expect: 3, build: "0.1.0", version: 2, raftVersion: 3,
      readReplica: false, useTls: false, features: { fs: 1 }, status: "alive",
    });
    expect(serverHasFeature(s, FEATURE_FEDERATION_STATES)).toBe(true);
    expect(serverHasFeature(parseServer(member(server()))!, FEATURE_FEDERATION_STATES)).toBe(false);
  });

  test("clients and non-consul members are not servers", () => {
    expect(parseServer(member(clientTags({ datacenter: "dc1", nodeId: NODE_ID, build: "0.1.0" })))).toBeUndefined();
    expect(parseServer(member({}))).toBeUndefined();
  });

  test("a bad or missing required tag means not a server", () => {
    const base = server();
    const without = (k: string) => Object.fromEntries(Object.entries(base).filter(([key]) => key !== k));
    for (const bad of [
      { ...base, port: "eighty" }, { ...base, port: "0" }, { ...base, port: "65536" }, { ...base, port: "" }, without("port"),
      { ...base, dc: "" }, without("dc"), without("vsn"), { ...base, vsn: "2.0" },
      { ...base, build: "dev" }, without("build"),
      { ...base, expect: "three" }, { ...base, wan_join_port: "x" }, { ...base, raft_vsn: "" }, { ...base, ft_fs: "yes" },
    ]) expect(parseServer(member(bad))).toBeUndefined();
  });

  test("WAN member: short name without the dc suffix, IPv6 rpc address bracketed", () => {
    const s = parseServer(member(server({ datacenter: "dc2" }), wanName("s1", "dc2"), "[fd00::1]:8302"))!;
    expect(s.name).toBe("s1.dc2");
    expect(s.shortName).toBe("s1");
    expect(s.rpcAddr).toBe("[fd00::1]:8300");
  });

  test("flags by presence, read replica from either tag", () => {
    const s = parseServer(member({ ...server(), bootstrap: "", read_replica: "1", use_tls: "1" }))!;
    expect([s.bootstrap, s.readReplica, s.useTls]).toEqual([true, true, true]);
  });
});

describe("addresses and WAN names", () => {
  test("hostOf / joinHostPort", () => {
    expect(hostOf("10.0.0.1:8301")).toBe("10.0.0.1");
    expect(hostOf("[::1]:8301")).toBe("::1");
    expect(hostOf("fd00::2")).toBe("fd00::2");
    expect(hostOf("node-a")).toBe("node-a");
    expect(joinHostPort("::1", 8300)).toBe("[::1]:8300");
    expect(joinHostPort("10.0.0.1", 8300)).toBe("10.0.0.1:8300");
  });

  test("wanName / parseWanName", () => {
    expect(wanName("node1", "dc1")).toBe("node1.dc1");
    expect(parseWanName("node1.dc1")).toEqual({ node: "node1", dc: "dc1" });
    for (const bad of ["node1", "a.b.c", ".dc1", "node1.", ""]) expect(parseWanName(bad)).toBeUndefined();
    expect(() => wanName("a.b", "dc1")).toThrow(RangeError);
    expect(() => wanName("a", "")).toThrow(RangeError);
  });
});
