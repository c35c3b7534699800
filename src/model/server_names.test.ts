import { expect, test } from "bun:test";
import { SERVER_PORT_ALPN, serverSni, WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./server_names.ts";

test("the server port's ALPN names are Causeway's own and distinct; the WAN gossip ones are entries of the table", () => {
  const names = Object.values(SERVER_PORT_ALPN);
  expect(new Set(names).size).toBe(names.length);
  expect(names.filter((n) => n !== "h2").every((n) => n.startsWith("causeway/"))).toBe(true);
  expect([WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN]).toEqual(["causeway/wan-gossip/packet", "causeway/wan-gossip/stream"]);
});

test("serverSni: a node's name, or any server's with no node or *", () => {
  expect([serverSni("dc2", "s1", "consul."), serverSni("dc2", "", "consul"), serverSni("dc1", "*", "consul")]).toEqual([
    "s1.server.dc2.consul", "server.dc2.consul", "server.dc1.consul",
  ]);
});
