import { describe, expect, test } from "bun:test";
import { check, gateway } from "../model/federation_state_fixtures.test.ts";
import { bestAddress, fresherGateways, gatewayAddresses, isWanFederationGateway, maxServiceModifyIndex } from "./gateways.ts";

describe("bestAddress (CheckServiceNode.BestAddress)", () => {
  const rows: [string, Parameters<typeof gateway>, boolean, { address: string; port: number }][] = [
    ["lan: the service address", [{}, {}], false, { address: "10.0.0.1", port: 8443 }],
    ["wan: the service's wan tagged address and port", [{}, {}], true, { address: "198.18.0.1", port: 443 }],
    ["wan tag with port 0 keeps the service port", [{}, { TaggedAddresses: { wan: { Address: "198.18.0.9", Port: 0 } } }], true, { address: "198.18.0.9", port: 8443 }],
    ["no service address: the node's address (lan)", [{}, { Address: "", TaggedAddresses: {} }], false, { address: "10.0.0.1", port: 8443 }],
    ["no service address: the node's wan tagged address (wan)", [{}, { Address: "", TaggedAddresses: {} }], true, { address: "198.18.0.1", port: 8443 }],
    ["no node wan tag: the node address (wan)", [{ TaggedAddresses: {} }, { Address: "", TaggedAddresses: {} }], true, { address: "10.0.0.1", port: 8443 }],
    ["a wan service tag with an empty address falls to the node's wan address (Consul)", [{}, { TaggedAddresses: { wan: { Address: "", Port: 9443 } } }], true, { address: "198.18.0.1", port: 9443 }],
    ["lan ignores the wan tags", [{}, { Address: "", TaggedAddresses: { wan: { Address: "198.18.0.7", Port: 1 } } }], false, { address: "10.0.0.1", port: 8443 }],
  ];
  for (const [name, args, wan, want] of rows) test(name, () => expect(bestAddress(gateway(...args), wan)).toEqual(want));
});

describe("which gateways carry federation traffic", () => {
  const rows: [string, Parameters<typeof gateway>, boolean][] = [
    ["meta consul-wan-federation=1 and passing", [{}, {}], true],
    ["#10139/#9199: no wanfed meta (not registered with -expose-servers)", [{}, { Meta: {} }], false],
    ["#10139: null meta", [{}, { Meta: null }], false],
    ["meta value other than 1", [{}, { Meta: { "consul-wan-federation": "true" } }], false],
    ["#10139: a critical check (unhealthy gateway)", [{}, {}, [check(), check({ CheckID: "svc", Status: "critical" })]], false],
    ["a warning check is still usable", [{}, {}, [check({ Status: "warning" })]], true],
    ["no checks at all", [{}, {}, []], true],
  ];
  for (const [name, args, want] of rows) test(name, () => expect(isWanFederationGateway(gateway(...args))).toBe(want));

  test("addresses: usable only, formatted host:port, IPv6 in brackets, sorted, deduplicated", () => {
    const gws = [
      gateway({ Node: "b" }, { Address: "10.0.0.9" }),
      gateway({ Node: "a" }, { Address: "10.0.0.2" }),
      gateway({ Node: "c" }, { Address: "fd00::1", TaggedAddresses: { wan: { Address: "2001:db8::1", Port: 443 } } }),
      gateway({ Node: "d" }, { Address: "10.0.0.2" }),
      gateway({ Node: "e" }, { Address: "10.0.0.3", Meta: {} }),
    ];
    expect(gatewayAddresses(gws, false)).toEqual(["10.0.0.2:8443", "10.0.0.9:8443", "[fd00::1]:8443"]);
    expect(gatewayAddresses(gws, true)).toEqual(["198.18.0.1:443", "[2001:db8::1]:443"]);
    expect(gatewayAddresses(undefined, true)).toEqual([]);
  });
});

describe("fresherGateways (#10132, PR #11522)", () => {
  const at = (addr: string, idx: number) => gateway({}, { Address: addr, TaggedAddresses: {}, ModifyIndex: idx });
  const rows: [string, ReturnType<typeof at>[] | undefined, ReturnType<typeof at>[] | undefined, "catalog" | "federation-state"][] = [
    ["#10132/#11522: a newer gateway address in the federation state beats a stale remote dump", [at("10.0.0.1", 50)], [at("10.0.0.2", 90)], "federation-state"],
    ["#11522: the catalog wins when it is newer", [at("10.0.0.3", 120)], [at("10.0.0.2", 90)], "catalog"],
    ["#11522: a tie keeps the catalog listing (strictly greater wins)", [at("10.0.0.1", 90)], [at("10.0.0.2", 90)], "catalog"],
    ["#11522: the largest index of each listing decides, not the first", [at("10.0.0.1", 10), at("10.0.0.4", 95)], [at("10.0.0.2", 90)], "catalog"],
    ["#11522: no catalog listing at all: the federation state", undefined, [at("10.0.0.2", 1)], "federation-state"],
    ["#11522: no federation state: the catalog", [at("10.0.0.1", 1)], undefined, "catalog"],
  ];
  for (const [name, catalog, fed, want] of rows) {
    test(name, () => {
      const got = fresherGateways(catalog, fed);
      expect(got.source).toBe(want);
      expect(got.gateways).toEqual((want === "catalog" ? catalog : fed) ?? []);
    });
  }

  test("maxServiceModifyIndex reads Service.ModifyIndex", () => {
    expect(maxServiceModifyIndex([at("a", 3), at("b", 7), at("c", 5)])).toBe(7);
    expect(maxServiceModifyIndex([])).toBe(0);
  });
});
