import { describe, expect, test } from "bun:test";
import type * as tls from "node:tls";
import { certificateDnsNames, certificateNamesServerOf, serverCertificateDatacenter } from "./server_cert.ts";

const cert = (subjectaltname?: string) => ({ subject: { CN: "server.dc1.consul" }, subjectaltname }) as unknown as tls.PeerCertificate;

describe("certificateDnsNames", () => {
  test("DNS entries of node:tls's subjectaltname, JSON-quoted ones decoded, other kinds skipped", () => {
    expect(certificateDnsNames(cert("DNS:server.dc1.consul, DNS:localhost, IP Address:127.0.0.1, URI:spiffe://x"))).toEqual(["server.dc1.consul", "localhost"]);
    expect(certificateDnsNames(cert('DNS:"a\\u002cb", DNS:ok'))).toEqual(["a,b", "ok"]);
    expect(certificateDnsNames(cert(undefined))).toEqual([]);
    expect(certificateDnsNames(undefined)).toEqual([]);
  });
});

describe("serverCertificateDatacenter (AuthorizeServerConn's server.<dc>.<domain>)", () => {
  const rows: [string, string | undefined, string, string | undefined][] = [
    ["a dc1 server", "DNS:server.dc1.consul, DNS:localhost", "consul", "dc1"],
    ["a server of another datacenter", "DNS:s7.server.east.consul, DNS:server.east.consul", "consul", "east"],
    ["names compare case-insensitively; a trailing dot of the domain is ignored", "DNS:Server.DC2.Consul", "consul.", "dc2"],
    ["a multi-label domain", "DNS:server.dc1.mesh.example.com", "mesh.example.com", "dc1"],
    ["a client agent's name", "DNS:client.dc1.consul, DNS:localhost", "consul", undefined],
    ["only a node's name: not the datacenter-wide server name", "DNS:s1.server.dc1.consul", "consul", undefined],
    ["a wildcard for the nodes does not stand for the server name", "DNS:*.server.dc1.consul", "consul", undefined],
    ["a wildcard for the datacenter covers its server name (Go's x509 accepts it)", "DNS:*.dc1.consul", "consul", "dc1"],
    ["a wildcard in the datacenter label", "DNS:server.*.consul", "consul", undefined],
    ["another domain", "DNS:server.dc1.example", "consul", undefined],
    ["no datacenter label", "DNS:server.consul", "consul", undefined],
    ["two labels where the datacenter goes", "DNS:server.a.b.consul", "consul", undefined],
    ["the common name alone is not consulted", undefined, "consul", undefined],
    ["an IP address only", "IP Address:10.0.0.1", "consul", undefined],
  ];
  for (const [name, san, domain, want] of rows) test(name, () => expect(serverCertificateDatacenter(cert(san), domain)).toBe(want));
});

describe("certificateNamesServerOf (Raft's check: a server of this datacenter)", () => {
  test("any of the names counts, not only the first; wildcards for the datacenter count; other datacenters do not", () => {
    expect(certificateNamesServerOf(cert("DNS:server.dc2.consul, DNS:server.dc1.consul"), "dc1", "consul")).toBe(true);
    expect(certificateNamesServerOf(cert("DNS:*.DC1.consul"), "dc1", "consul.")).toBe(true);
    expect(certificateNamesServerOf(cert("DNS:server.dc2.consul"), "dc1", "consul")).toBe(false);
    expect(certificateNamesServerOf(cert("DNS:*.server.dc1.consul, DNS:client.dc1.consul"), "dc1", "consul")).toBe(false);
    expect(certificateNamesServerOf(undefined, "dc1", "consul")).toBe(false);
  });
});
