import { describe, expect, test } from "bun:test";
import { parseQueryName } from "./query_name.ts";
import { DnsType } from "./wire.ts";

const parse = (name: string, qtype: number = DnsType.A, alt = "") => parseQueryName(name, qtype, "consul.", alt);
const lookup = (name: string, qtype: number = DnsType.A, alt = "") => parse(name, qtype, alt).lookup;

describe("DNS query names (Consul's dispatch)", () => {
  test("nodes, dotted node names, a datacenter, case", () => {
    expect(lookup("foo.node.consul")).toEqual({ kind: "node", node: "foo" });
    expect(lookup("fOO.node.dc1.consul.")).toEqual({ kind: "node", node: "foo", datacenter: "dc1" });
    expect(lookup("foo.bar.node.consul")).toEqual({ kind: "node", node: "foo.bar" });
    expect(lookup("foo.node.dc1.dc.consul")).toEqual({ kind: "node", node: "foo", datacenter: "dc1" });
  });

  test("services with tags (dotted too) and datacenters; the rightmost keyword wins", () => {
    expect(lookup("db.service.consul")).toEqual({ kind: "service", service: "db" });
    expect(lookup("primary.db.service.dc1.consul")).toEqual({ kind: "service", service: "db", tag: "primary", datacenter: "dc1" });
    expect(lookup("v1.primary.db.service.consul")).toEqual({ kind: "service", service: "db", tag: "v1.primary" });
    expect(lookup("foo.node.service.consul")).toEqual({ kind: "service", service: "node", tag: "foo" });
    expect(lookup("a.service.node.consul")).toEqual({ kind: "node", node: "a.service" });
  });

  test("RFC 2782 names, with or without .service, for SRV", () => {
    expect(lookup("_db._tcp.service.consul", DnsType.SRV)).toEqual({ kind: "service", service: "db" });
    expect(lookup("_db._primary.service.dc1.consul", DnsType.SRV)).toEqual({ kind: "service", service: "db", tag: "primary", datacenter: "dc1" });
    expect(lookup("_db._tcp.consul", DnsType.SRV)).toEqual({ kind: "service", service: "db" });
    expect(lookup("_db._primary.dc1.consul", DnsType.SRV)).toEqual({ kind: "service", service: "db", tag: "primary", datacenter: "dc1" });
    // Without .service only SRV questions take the RFC 2782 form; one "_" label is a literal name.
    expect(lookup("_db._tcp.consul", DnsType.A)).toEqual({ kind: "invalid" });
    expect(lookup("_db.service.consul")).toEqual({ kind: "service", service: "_db" });
  });

  test("connect, ingress and prepared queries", () => {
    expect(lookup("web.connect.consul")).toEqual({ kind: "connect", service: "web" });
    expect(lookup("web.ingress.dc2.consul")).toEqual({ kind: "ingress", service: "web", datacenter: "dc2" });
    expect(lookup("my-query.query.consul")).toEqual({ kind: "query", query: "my-query" });
    expect(lookup("query.name.with.dots.query.consul")).toEqual({ kind: "query", query: "query.name.with.dots" });
    expect(lookup("_my-query._tcp.query.dc1.consul", DnsType.SRV)).toEqual({ kind: "query", query: "my-query", datacenter: "dc1" });
    // A query's locality has no "<dc>.dc" form.
    expect(lookup("q.query.dc1.dc.consul")).toEqual({ kind: "invalid" });
  });

  test(".addr names: IPv4, IPv6, other lengths, bad hex; the suffix is ignored", () => {
    expect(lookup("7f000001.addr.dc1.consul")).toEqual({ kind: "addr", family: 4, address: "127.0.0.1" });
    expect(lookup("2607002040050808000000000000200e.addr.consul")).toEqual({ kind: "addr", family: 6, address: "2607:20:4005:808::200e" });
    expect(lookup("7f00000101.addr.consul")).toEqual({ kind: "addr", family: undefined, address: undefined });
    expect(lookup("zz000001.addr.consul")).toEqual({ kind: "invalid" });
    expect(lookup("7f000001.addr.a.b.c.consul")).toEqual({ kind: "addr", family: 4, address: "127.0.0.1" });
    expect(lookup("a.7f000001.addr.consul")).toEqual({ kind: "invalid" });
  });

  test("invalid names (Consul's TestDNS_InvalidQueries and friends)", () => {
    for (const n of ["consul.", "node.consul.", "service.consul.", "query.consul.", "foo.node.dc1.extra.more.consul.",
      "foo.service.dc1.extra.more.consul.", "foo.query.dc1.extra.more.consul.", "nonexisting.consul.", "foo.bar.consul."]) {
      expect(lookup(n), n).toEqual({ kind: "invalid" });
    }
  });

  test("the response domain keeps the question's spelling; an alt domain is cut at a label boundary", () => {
    expect(parse("db.service.CONSUL.")).toMatchObject({ responseDomain: "CONSUL", relative: "db.service" });
    expect(parse("db.service.test.consul", DnsType.A, "test.consul.")).toMatchObject({ responseDomain: "test.consul", lookup: { kind: "service", service: "db" } });
    // A datacenter named "latest" is not mistaken for the alt domain "test.consul" (Consul 1.16's fix).
    expect(lookup("db.service.latest.consul", DnsType.A, "test.consul.")).toEqual({ kind: "service", service: "db", datacenter: "latest" });
    expect(parse("web.service.example.com").lookup).toEqual({ kind: "invalid" });
  });
});
