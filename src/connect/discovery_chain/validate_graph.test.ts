/**
 * validateEntryInGraph / validateDeleteInGraph: a write is rejected when any chain it affects stops
 * compiling (Consul 1.8 validateProposedConfigEntryInGraph), and accepted otherwise.
 */
import { describe, expect, test } from "bun:test";
import { ConfigEntryError, ConfigEntryGraphError, decodeConfigEntry, type ConfigEntry } from "../config_entries/index.ts";
import { validateDeleteInGraph, validateEntryInGraph } from "./index.ts";

const d = (raw: Record<string, unknown>): ConfigEntry => decodeConfigEntry(raw);
const httpGlobal = d({ Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } });
const webHttp = d({ Kind: "service-defaults", Name: "web", Protocol: "http" });
const webRouter = d({ Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { PathPrefix: "/api" } }, Destination: { Service: "api" } }] });

const REJECTED: [string, ConfigEntry[], Record<string, unknown>, string][] = [
  ["a router on a tcp service", [], { Kind: "service-router", Name: "web" }, 'discovery chain "web" uses a protocol "tcp" that does not permit advanced routing or splitting behavior'],
  ["a splitter on a tcp service", [d({ Kind: "service-defaults", Name: "web", Protocol: "tcp" })], { Kind: "service-splitter", Name: "web", Splits: [{ Weight: 100 }] }, "does not permit advanced routing or splitting behavior"],
  ["proxy-defaults turning routed services into tcp", [webRouter], { Kind: "proxy-defaults", Name: "global", Config: { protocol: "tcp" } }, 'discovery chain "web" uses a protocol "tcp"'],
  ["the target of a route turning tcp", [webHttp, httpGlobal, webRouter], { Kind: "service-defaults", Name: "api", Protocol: "tcp" }, 'discovery chain "web" uses inconsistent protocols; service "api" has "tcp" which is not "http"'],
  ["a redirect closing a cycle", [d({ Kind: "service-resolver", Name: "a", Redirect: { Service: "b" } })], { Kind: "service-resolver", Name: "b", Redirect: { Service: "a" } }, "detected circular resolver redirect: [a.default.dc1 -> b.default.dc1 -> a.default.dc1]"],
  ["a split to an unknown subset", [httpGlobal], { Kind: "service-splitter", Name: "web", Splits: [{ Weight: 100, Service: "api", ServiceSubset: "v2" }] }, 'service "api" does not have a subset named "v2"'],
  ["removing a subset another chain splits to", [httpGlobal, d({ Kind: "service-resolver", Name: "api", Subsets: { v2: {} } }), d({ Kind: "service-splitter", Name: "web", Splits: [{ Weight: 100, Service: "api", ServiceSubset: "v2" }] })], { Kind: "service-resolver", Name: "api", ConnectTimeout: "3s" }, 'service "api" does not have a subset named "v2"'],
  ["a circular split", [httpGlobal, d({ Kind: "service-splitter", Name: "a", Splits: [{ Weight: 100, Service: "b" }] })], { Kind: "service-splitter", Name: "b", Splits: [{ Weight: 100, Service: "a" }] }, "detected circular reference"],
  ["an external SNI on a service with subsets", [d({ Kind: "service-resolver", Name: "web", Subsets: { v1: {} } })], { Kind: "service-defaults", Name: "web", ExternalSNI: "web.example.com" }, 'service "web" has an external SNI set; cannot define subsets for external services'],
  ["a failover to a service of another protocol", [httpGlobal, d({ Kind: "service-defaults", Name: "legacy", Protocol: "tcp" })], { Kind: "service-resolver", Name: "web", Failover: { "*": { Service: "legacy" } } }, "uses inconsistent protocols"],
];

describe("validateEntryInGraph rejects", () => {
  for (const [name, entries, proposed, message] of REJECTED) {
    test(name, () => {
      const before = JSON.stringify(entries);
      expect(() => validateEntryInGraph(entries, d(proposed))).toThrow(ConfigEntryGraphError);
      expect(() => validateEntryInGraph(entries, d(proposed))).toThrow(message);
      expect(JSON.stringify(entries)).toBe(before);
    });
  }
});

describe("validateEntryInGraph accepts", () => {
  test.each([
    ["a router on an http service routing to another http service", [webHttp, d({ Kind: "service-defaults", Name: "api", Protocol: "http" })], webRouter],
    ["a router when proxy-defaults says http", [httpGlobal], webRouter],
    ["replacing a router by one without routes", [httpGlobal, webRouter], d({ Kind: "service-router", Name: "web" })],
    ["a redirect chain without a cycle", [d({ Kind: "service-resolver", Name: "a", Redirect: { Service: "b" } })], d({ Kind: "service-resolver", Name: "b", Redirect: { Service: "c", Datacenter: "dc2" } })],
    ["mutual failover (not a cycle)", [d({ Kind: "service-resolver", Name: "a", Failover: { "*": { Service: "b" } } })], d({ Kind: "service-resolver", Name: "b", Failover: { "*": { Service: "a" } } })],
    ["proxy-defaults other than protocol", [webRouter, httpGlobal], d({ Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" }, MeshGateway: { Mode: "local" } })],
    ["service-defaults for an unrelated service", [httpGlobal, webRouter], d({ Kind: "service-defaults", Name: "other", Protocol: "tcp" })],
  ] as [string, ConfigEntry[], ConfigEntry][])("%s", (_name, entries, proposed) => {
    expect(() => validateEntryInGraph(entries, proposed)).not.toThrow();
  });

  test("the entry is validated on its own first", () => {
    expect(() => validateEntryInGraph([], d({ Kind: "proxy-defaults", Name: "mine" }))).toThrow(ConfigEntryError);
    expect(() => validateEntryInGraph([], d({ Kind: "service-splitter", Name: "web", Splits: [{ Weight: 10 }] }))).toThrow("the sum of all split weights must be 100, not 10.000000");
  });
});

describe("validateDeleteInGraph", () => {
  test("rejects deleting the service-defaults a router depends on", () => {
    expect(() => validateDeleteInGraph([webHttp, webRouter], "service-defaults", "web")).toThrow("does not permit advanced routing or splitting behavior");
  });

  test("rejects deleting the proxy-defaults that made routed chains http", () => {
    expect(() => validateDeleteInGraph([httpGlobal, webRouter], "proxy-defaults", "global")).toThrow(ConfigEntryGraphError);
  });

  test("rejects deleting a subset's resolver that a router targets", () => {
    const entries = [httpGlobal, d({ Kind: "service-resolver", Name: "api", Subsets: { v1: {} } }), d({ Kind: "service-router", Name: "web", Routes: [{ Destination: { Service: "api", ServiceSubset: "v1" } }] })];
    expect(() => validateDeleteInGraph(entries, "service-resolver", "api")).toThrow('service "api" does not have a subset named "v1"');
  });

  test("accepts deleting the router itself", () => {
    expect(() => validateDeleteInGraph([webHttp, webRouter], "service-router", "web")).not.toThrow();
  });
});
