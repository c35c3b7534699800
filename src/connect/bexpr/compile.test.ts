/**
 * Filters evaluated over three realistic /v1/health/service rows: every operator, map and list selectors,
 * any-semantics through lists, missing keys, coercion, escapes, precedence and parentheses.
 */
import { describe, expect, test } from "bun:test";
import type { CheckServiceNode, HealthCheck, Node, NodeService } from "../../model/index.ts";
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter, filterList, filterRecord, NODE_SERVICE_SCHEMA, SERVICE_NODE_SCHEMA } from "./index.ts";

const idx = { CreateIndex: 5, ModifyIndex: 7 };

function node(name: string, address: string, dc: string, extra: Partial<Node> = {}): Node {
  return { ID: `id-${name}`, Node: name, Address: address, Datacenter: dc, TaggedAddresses: { lan: address }, Meta: {}, ...idx, ...extra };
}

function check(nodeName: string, id: string, status: HealthCheck["Status"], extra: Partial<HealthCheck> = {}): HealthCheck {
  return {
    Node: nodeName, CheckID: id, Name: id, Status: status, Notes: "", Output: "", ServiceID: "", ServiceName: "",
    ServiceTags: [], Type: "", Definition: {}, ...idx, ...extra,
  };
}

function service(extra: Partial<NodeService> & Pick<NodeService, "ID" | "Service" | "Port">): NodeService {
  return {
    Kind: "", Tags: [], Address: "", Meta: {}, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false,
    Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, ...idx, ...extra,
  };
}

/** web-1 on node-1 (dc1): all checks passing, tags primary/v2/canary-east, rich meta. */
const WEB1: CheckServiceNode = {
  Node: node("node-1", "10.0.0.1", "dc1", { TaggedAddresses: { lan: "10.0.0.1", wan: "198.18.0.1" }, Meta: { rack: "r1", "with space": "yes" } }),
  Service: service({
    ID: "web-1", Service: "web", Port: 8080, Address: "10.0.0.1", Tags: ["primary", "v2", "canary-east"],
    TaggedAddresses: { lan: { Address: "10.0.0.1", Port: 8080 } },
    Meta: { version: "1.2.3", "team.name": "core", empty: "", quote: 'say "hi"\t!', unicode: "café", path: "C:\\dir", num: "1.50" },
    Weights: { Passing: 10, Warning: 1 },
  }),
  Checks: [
    check("node-1", "serfHealth", "passing", { Type: "serf" }),
    check("node-1", "service:web-1", "passing", { ServiceID: "web-1", ServiceName: "web", ServiceTags: ["primary", "v2"], Type: "http", Output: "HTTP GET: 200 OK" }),
  ],
};

/** web-2 on node-2 (dc1): its service check is critical; Tags and Meta are null. */
const WEB2: CheckServiceNode = {
  Node: node("node-2", "10.0.0.2", "dc1", { Meta: { rack: "r2" } }),
  Service: service({ ID: "web-2", Service: "web", Port: 8081, Tags: ["secondary"], Meta: null, EnableTagOverride: true }),
  Checks: [
    check("node-2", "serfHealth", "passing", { Type: "serf" }),
    check("node-2", "service:web-2", "critical", { ServiceID: "web-2", ServiceName: "web", ServiceTags: ["secondary"], Type: "tcp", Output: "dial tcp: connection refused" }),
  ],
};

/** A sidecar proxy on node-3 (dc2) with two upstreams, no checks, no tags, no tagged addresses. */
const SIDECAR: CheckServiceNode = {
  Node: node("node-3", "10.1.0.3", "dc2", { TaggedAddresses: {} }),
  Service: service({
    ID: "web-sidecar-proxy", Service: "web-sidecar-proxy", Port: 21000, Kind: "connect-proxy", Tags: null, Meta: { version: "2.0.0" },
    Proxy: {
      DestinationServiceName: "web",
      DestinationServiceID: "web-1",
      Upstreams: [
        { DestinationName: "db", LocalBindPort: 9191, MeshGateway: { Mode: "local" } },
        { DestinationName: "cache", LocalBindPort: 9292, Datacenter: "dc2", MeshGateway: {} },
      ],
      MeshGateway: { Mode: "remote" },
      Expose: { Checks: true },
    },
    Connect: { Native: false },
  }),
  Checks: [],
};

const ALL: readonly CheckServiceNode[] = [WEB1, WEB2, SIDECAR];


const A = "web-1", B = "web-2", C = "web-sidecar-proxy";

/** [expression, IDs of the rows it keeps]. */
const CASES: readonly (readonly [string, readonly string[]])[] = [
  // equality, with the value coerced to the field's type
  ["Service.Service == web", [A, B]],
  ['Service.Service == "web"', [A, B]],
  ["Service.Service == `web`", [A, B]],
  ["Service.Service != web", [C]],
  ['Node.Node == "node-1"', [A]],
  ["Node.Datacenter == dc2", [C]],
  ["Service.Port == 8080", [A]],
  ['Service.Port == "8080"', [A]],
  ['Service.Port == "0x1F90"', [A]],
  ['Service.Port == "8_081"', [B]],
  ["Service.Port != 8080", [B, C]],
  ["Service.Port == -1", []],
  ["Service.Weights.Passing == 10", [A]],
  ["Service.EnableTagOverride == true", [B]],
  ["Service.EnableTagOverride == false", [A, C]],
  ["Service.EnableTagOverride == T", [B]],
  ['Service.EnableTagOverride == "0"', [A, C]],
  ['Service.Kind == ""', [A, B]],
  ['Service.Kind == "connect-proxy"', [C]],
  ["Service.Connect.Native == false", [A, B, C]],
  ["Service.Proxy.DestinationServiceName == web", [C]],
  ["Service.Proxy.MeshGateway.Mode == remote", [C]],
  ["Service.Proxy.Expose.Checks == true", [C]],
  ["Service.Service == Node.Node", []], // a bare selector as a value is its text, not a field reference
  ["Service.Meta.num == 1.50", [A]], // numbers keep their text for string fields
  ["Service.Meta.num == 1.5", []],
  // maps: keys by dot or index, key membership, missing keys
  ['Service.Meta.version == "1.2.3"', [A]],
  ['Service.Meta["version"] == "1.2.3"', [A]],
  ['Service.Meta[ "team.name" ] == core', [A]],
  ["Service.Meta[`team.name`] == core", [A]],
  ['Node.Meta["with space"] == yes', [A]],
  ['Service.Meta.version != "1.2.3"', [B, C]],
  ['Service.Meta.empty == ""', [A]],
  ["Service.Meta.missing == x", []],
  ["Service.Meta.missing != x", [A, B, C]],
  ["Service.Meta.missing is empty", [A, B, C]],
  ["Service.Meta.missing is not empty", []],
  ['Service.Meta.missing matches ".*"', []],
  ['Service.Meta.missing not matches "x"', [A, B, C]],
  ['"x" in Service.Meta.missing', []],
  ['"x" not in Service.Meta.missing', [A, B, C]],
  ["version in Service.Meta", [A, C]],
  ['"version" not in Service.Meta', [B]],
  ["Service.Meta is empty", [B]],
  ["Service.Meta is not empty", [A, C]],
  ["Node.Meta.rack == r1", [A]],
  ["Node.TaggedAddresses is empty", [C]],
  ["wan in Node.TaggedAddresses", [A]],
  ["Service.TaggedAddresses.lan.Port == 8080", [A]],
  ['Service.TaggedAddresses.lan.Address contains "10.0"', [A]],
  ["Service.TaggedAddresses.wan.Port != 1", [A, B, C]],
  ['Service.Meta["__proto__"] == x', []],
  ['Service.Meta["constructor"] is empty', [A, B, C]],
  // lists of strings: membership, not substring
  ["primary in Service.Tags", [A]],
  ['"primary" in Service.Tags', [A]],
  ["Service.Tags contains secondary", [B]],
  ["Service.Tags not contains primary", [B, C]],
  ['"canary" in Service.Tags', []],
  ["Service.Tags is empty", [C]],
  ["Service.Tags is not empty", [A, B]],
  // strings: `in`/`contains` are substring tests; `is empty` (extension)
  ['"eb" in Service.Service', [A, B, C]],
  ["Service.Service contains side", [C]],
  ['"10.0.0" not in Node.Address', [C]],
  ["Service.Address is empty", [B, C]],
  ["Service.Address is not empty", [A]],
  // through lists of structs: the match holds if it holds for ANY element, operator included
  ["Checks.Status == passing", [A, B]],
  ["Checks.Status == critical", [B]],
  ["Checks.Status != passing", [B]],
  ["not Checks.Status == critical", [A, C]],
  ["not Checks.Status != passing", [A, C]],
  ["Checks is empty", [C]],
  ["Checks is not empty", [A, B]],
  ["Checks.CheckID == serfHealth and Checks.Status == critical", [B]],
  ["Checks.ServiceTags contains v2", [A]],
  ['Checks.Output matches "refused$"', [B]],
  ['"tc" in Checks.Type', [B]],
  ["Service.Proxy.Upstreams.DestinationName == db", [C]],
  ["Service.Proxy.Upstreams.MeshGateway.Mode == local", [C]],
  ["Service.Proxy.Upstreams.Datacenter == dc2", [C]],
  ["Service.Proxy.Upstreams.LocalBindPort == 9292", [C]],
  ["Service.Proxy.Upstreams is empty", [A, B]],
  // regular expressions (Go syntax, unanchored)
  ["Service.Meta.version matches `^1\\.`", [A]],
  ['Service.Meta.version matches "^1\\\\."', [A]],
  ['Node.Node matches "node-[12]"', [A, B]],
  ['Service.Service not matches "^web$"', [C]],
  ['Service.ID matches "(?i)WEB-1"', [A]],
  ["Node.Meta.rack matches `\\d`", [A, B]],
  ["Service.Service matches ``", [A, B, C]],
  // strings with escapes
  ['Service.Meta.quote == "say \\"hi\\"\\t!"', [A]],
  ["Service.Meta.quote == `say \"hi\"\t!`", [A]],
  ['Service.Meta.unicode == "caf\\u00e9"', [A]],
  ['Service.Meta.unicode == "caf\\xc3\\xa9"', [A]],
  ['Service.Meta.unicode == "caf\\303\\251"', [A]],
  ["Service.Meta.path == `C:\\dir`", [A]],
  ['Service.Meta.path == "C:\\\\dir"', [A]],
  // boolean logic: not > and > or, parentheses, whitespace
  ["Service.Port == 8080 or Service.Port == 8081", [A, B]],
  ["Service.Service == web and Service.Port == 8081", [B]],
  ["Service.Port == 8080 or Service.Port == 8081 and Service.EnableTagOverride == false", [A]],
  ["(Service.Port == 8080 or Service.Port == 8081) and Service.EnableTagOverride == true", [B]],
  ["not Service.Port == 8080 and Service.Service == web", [B]],
  ["not (Service.Port == 8080 and Service.Service == web)", [B, C]],
  ["not not Service.Port == 8080", [A]],
  ["Service.Service == web and not primary in Service.Tags", [B]],
  ["Service.Port == 1 or Service.Port == 2 or Node.Node == \"node-3\"", [C]],
  ["( ( Node.Datacenter == dc1 ) )", [A, B]],
  ["Service.Service == web\n\tand\r\n Service.Port == 8081", [B]],
  ["Service.Port==8081", [B]],
  ["not(Service.Port == 8080)", [B, C]],
  ['Service.Service == web or Service.Service == "web-sidecar-proxy"', [A, B, C]],
  ["", [A, B, C]],
];

describe("compileFilter over CheckServiceNode rows", () => {
  for (const [expr, want] of CASES) {
    test(JSON.stringify(expr), () => {
      const filter = compileFilter(expr, CHECK_SERVICE_NODE_SCHEMA);
      expect(filterList(ALL, filter).map((n) => n.Service.ID)).toEqual([...want]);
    });
  }
});

describe("filterList and filterRecord", () => {
  test("keep order, copy the input, and pass everything without a filter", () => {
    const f = compileFilter("Service.Service == web", CHECK_SERVICE_NODE_SCHEMA);
    expect(filterList(ALL, f)).toEqual([WEB1, WEB2]);
    const all = filterList(ALL, undefined);
    expect(all).toEqual([...ALL]);
    expect(all).not.toBe(ALL);
  });

  test("filterRecord filters a map by value, as /v1/agent/services does", () => {
    const services = { "web-1": WEB1.Service, "web-2": WEB2.Service, proxy: SIDECAR.Service };
    const f = compileFilter("Meta.version == `1.2.3` or Kind == \"connect-proxy\"", NODE_SERVICE_SCHEMA);
    expect(Object.keys(filterRecord(services, f))).toEqual(["web-1", "proxy"]);
  });

  test("a ServiceNode row: flattened names", () => {
    const row = {
      ID: "n1", Node: "node-1", Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: {}, NodeMeta: { os: "linux" },
      ServiceKind: "", ServiceID: "api-1", ServiceName: "api", ServiceTags: ["tag"], ServiceAddress: "", ServiceWeights: { Passing: 1, Warning: 1 },
      ServiceMeta: { environment: "qa" }, ServicePort: 9090, ServiceEnableTagOverride: false, ServiceProxy: { MeshGateway: {}, Expose: {} },
      ServiceConnect: {}, CreateIndex: 1, ModifyIndex: 1,
    };
    expect(compileFilter("NodeMeta.os == linux and ServicePort == 9090 and tag in ServiceTags", SERVICE_NODE_SCHEMA).matches(row)).toBe(true);
    expect(compileFilter("ServiceMeta.environment == production", SERVICE_NODE_SCHEMA).matches(row)).toBe(false);
  });

  test("values that do not fit the schema read as Go zero values, never throw", () => {
    const f = compileFilter('Service.Port == 0 and Service.Service == "" and Checks is empty and Service.Tags is empty', CHECK_SERVICE_NODE_SCHEMA);
    for (const v of [{}, null, undefined, 42, "x", [], { Service: "nope", Checks: {} }, { Service: { Port: "80", Tags: "a" } }]) {
      expect(f.matches(v)).toBe(true);
    }
  });
});
