import { describe, expect, test } from "bun:test";
import { canSign, newClusterId, parseSpiffeId, spiffeServiceId, spiffeSigningId, trustDomain } from "./index.ts";
import { colonHex, defaultCaConfiguration, formatRfc3339 } from "./index.ts";

const TD = "11111111-2222-3333-4444-555555555555.consul";

describe("cluster ID and trust domain", () => {
  test("newClusterId formats 16 injected bytes as 8-4-4-4-12 hex (go-uuid style, no version bits)", () => {
    const id = newClusterId({ bytes: (n) => Uint8Array.from({ length: n }, (_, i) => i * 17) });
    expect(id).toBe("00112233-4455-6677-8899-aabbccddeeff");
    expect(newClusterId({ bytes: (n) => new Uint8Array(n).fill(0xff) })).toBe("ffffffff-ffff-ffff-ffff-ffffffffffff");
  });

  test("trust domain and signing ID", () => {
    expect(trustDomain("11111111-2222-3333-4444-555555555555")).toBe(TD);
    expect(spiffeSigningId(TD)).toBe(`spiffe://${TD}`);
    expect(() => trustDomain("")).toThrow(/empty/);
  });
});

describe("service SPIFFE IDs", () => {
  test.each([
    [{ datacenter: "dc1", service: "web" }, `spiffe://${TD}/ns/default/dc/dc1/svc/web`],
    [{ namespace: "", datacenter: "dc1", service: "web" }, `spiffe://${TD}/ns/default/dc/dc1/svc/web`],
    [{ namespace: "team-a", datacenter: "dc2", service: "db" }, `spiffe://${TD}/ns/team-a/dc/dc2/svc/db`],
    [{ datacenter: "dc1", service: "web sidecar" }, `spiffe://${TD}/ns/default/dc/dc1/svc/web%20sidecar`],
    [{ datacenter: "dc1", service: "a:b@c=d" }, `spiffe://${TD}/ns/default/dc/dc1/svc/a:b@c=d`],
    [{ datacenter: "dc1", service: "it's(x)*!" }, `spiffe://${TD}/ns/default/dc/dc1/svc/it%27s%28x%29%2A%21`],
    [{ datacenter: "dc1", service: "a/b" }, `spiffe://${TD}/ns/default/dc/dc1/svc/a%2Fb`],
  ])("format %o", (parts, uri) => {
    expect(spiffeServiceId({ trustDomain: TD, ...parts })).toBe(uri);
    const back = parseSpiffeId(uri);
    expect(back).toEqual({ kind: "service", host: TD, namespace: parts.namespace || "default", datacenter: parts.datacenter, service: parts.service });
  });

  test("empty datacenter or service throws", () => {
    expect(() => spiffeServiceId({ trustDomain: TD, datacenter: "", service: "web" })).toThrow();
    expect(() => spiffeServiceId({ trustDomain: TD, datacenter: "dc1", service: "" })).toThrow();
  });
});

describe("parseSpiffeId", () => {
  test.each([
    ["spiffe://td.consul/ns/default/dc/dc1/svc/web", { kind: "service", host: "td.consul", namespace: "default", datacenter: "dc1", service: "web" }],
    ["SPIFFE://td.consul/ns/n/dc/d/svc/s", { kind: "service", host: "td.consul", namespace: "n", datacenter: "d", service: "s" }],
    ["spiffe://td.consul/ns/n/dc/d/svc/s?x=1#f", { kind: "service", host: "td.consul", namespace: "n", datacenter: "d", service: "s" }],
    ["spiffe://1234.consul", { kind: "signing", host: "1234.consul", clusterId: "1234", domain: "consul" }],
    ["spiffe://a.b.c", { kind: "signing", host: "a.b.c", clusterId: "a", domain: "b.c" }],
  ])("%s", (uri, want) => {
    expect(parseSpiffeId(uri)).toEqual(want as never);
  });

  test.each([
    ["https://td.consul/ns/n/dc/d/svc/s", "SPIFFE ID must have 'spiffe' scheme"],
    ["spiffe://td.consul/ns/n/dc/d/svc/", "SPIFFE ID is not in the expected format"],
    ["spiffe://td.consul/ns/n/dc/d/svc/s/extra", "SPIFFE ID is not in the expected format"],
    ["spiffe://td.consul/dc/d/svc/s", "SPIFFE ID is not in the expected format"],
    ["spiffe://nodot", "SPIFFE ID is not in the expected format"],
    ["spiffe://.consul", "SPIFFE ID is not in the expected format"],
    ["spiffe://td.consul/", "SPIFFE ID is not in the expected format"],
    ["not a uri", "SPIFFE ID is not in the expected format"],
    ["spiffe://td.consul/ns/n/dc/d/svc/%zz", "Invalid service"],
  ])("rejects %s", (uri, message) => {
    expect(() => parseSpiffeId(uri)).toThrow(message);
  });

  test("canSign compares the trust domain case-insensitively", () => {
    expect(canSign(TD, parseSpiffeId(spiffeServiceId({ trustDomain: TD.toUpperCase(), datacenter: "dc1", service: "web" })))).toBe(true);
    expect(canSign(TD, parseSpiffeId("spiffe://other.consul/ns/default/dc/dc1/svc/web"))).toBe(false);
  });
});

describe("wire helpers", () => {
  test("formatRfc3339 matches Go's time.Time JSON", () => {
    expect(formatRfc3339(Date.UTC(2018, 4, 25, 21, 39, 23))).toBe("2018-05-25T21:39:23Z");
    expect(formatRfc3339(Date.UTC(2018, 4, 25, 21, 39, 23, 500))).toBe("2018-05-25T21:39:23.5Z");
    expect(formatRfc3339(Date.UTC(2018, 4, 25, 21, 39, 23, 120))).toBe("2018-05-25T21:39:23.12Z");
  });

  test("colonHex", () => {
    expect(colonHex(Uint8Array.from([0x0a, 0xff, 0]))).toBe("0a:ff:00");
    expect(colonHex("c7bd55")).toBe("c7:bd:55");
    expect(colonHex("")).toBe("");
  });

  test("default configuration", () => {
    expect(defaultCaConfiguration("abc")).toEqual({
      ClusterID: "abc", Provider: "consul",
      Config: { LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h" },
      CreateIndex: 0, ModifyIndex: 0,
    });
  });
});
