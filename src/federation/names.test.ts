import { describe, expect, test } from "bun:test";
import { ALPN } from "../rpc/index.ts";
import { serverSni, splitNodeName, WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./names.ts";

describe("serverSni (tlsutil ServerSNI)", () => {
  const rows: [string, string, string, string, string][] = [
    ["a named server", "dc2", "s1", "consul", "s1.server.dc2.consul"],
    ["no node: any server of the datacenter", "dc2", "", "consul", "server.dc2.consul"],
    ["node * (the WAN join placeholder *.<primary>): any server", "dc1", "*", "consul", "server.dc1.consul"],
    ["a trailing dot of the domain is trimmed", "dc1", "s1", "consul.", "s1.server.dc1.consul"],
    ["only one trailing dot is trimmed (strings.TrimSuffix)", "dc1", "", "example..", "server.dc1.example."],
    ["a multi-label domain", "east", "n-3", "mesh.example.com", "n-3.server.east.mesh.example.com"],
  ];
  for (const [name, dc, node, domain, want] of rows) test(name, () => expect(serverSni(dc, node, domain)).toBe(want));
});

describe("splitNodeName (wanfed.SplitNodeName)", () => {
  test("<node>.<dc>", () => {
    expect(splitNodeName("s1.dc2")).toEqual({ node: "s1", dc: "dc2" });
    expect(splitNodeName("*.dc1")).toEqual({ node: "*", dc: "dc1" });
  });
  const bad: [string, string][] = [
    ["#12614: an FQDN node name has too many parts", "s1.example.com.dc2"],
    ["#12614: a node name with one dot plus the datacenter", "s1.local.dc2"],
    ["no datacenter part", "s1"],
    ["empty node part (Causeway is stricter than Consul)", ".dc2"],
    ["empty datacenter part", "s1."],
    ["empty", ""],
  ];
  for (const [name, input] of bad) {
    test(name, () => expect(() => splitNodeName(input)).toThrow(`node name does not encode a datacenter: ${input}`));
  }
});

test("the WAN gossip ALPN names are Causeway's, equal to the server port's reserved ones", () => {
  expect(WAN_GOSSIP_PACKET_ALPN).toBe("causeway/wan-gossip/packet");
  expect(WAN_GOSSIP_STREAM_ALPN).toBe("causeway/wan-gossip/stream");
  expect(WAN_GOSSIP_PACKET_ALPN).toBe(ALPN["wan-gossip-packet"]);
  expect(WAN_GOSSIP_STREAM_ALPN).toBe(ALPN["wan-gossip-stream"]);
});
