/**
 * Table tests of validateConfigEntry: one row per rule, with Consul 1.8's message where Consul has the rule
 * (config_entry.go, config_entry_discoverychain.go Validate methods).
 */
import { describe, expect, test } from "bun:test";
import { ConfigEntryError, decodeConfigEntry, validateConfigEntry } from "./index.ts";

const router = (routes: unknown[]) => ({ Kind: "service-router", Name: "web", Routes: routes });
const http = (match: Record<string, unknown>, destination?: Record<string, unknown>) => ({ Match: { HTTP: match }, ...(destination ? { Destination: destination } : {}) });
const resolver = (fields: Record<string, unknown>) => ({ Kind: "service-resolver", Name: "web", ...fields });
const splitter = (splits: unknown[]) => ({ Kind: "service-splitter", Name: "web", Splits: splits });

const INVALID: [string, unknown, string][] = [
  ["name required", { Kind: "service-defaults", Name: "" }, "Name is required"],
  ["unknown protocol", { Kind: "service-defaults", Name: "web", Protocol: "udp" }, 'invalid Protocol "udp": must be one of tcp, http, http2, grpc'],
  ["bad mesh gateway mode", { Kind: "service-defaults", Name: "web", MeshGateway: { Mode: "nearby" } }, 'Invalid Mesh Gateway Mode: "nearby"'],
  ["expose path without slash", { Kind: "service-defaults", Name: "web", Expose: { Paths: [{ Path: "health" }] } }, `Expose.Paths[0].Path must start with '/': "health"`],
  ["expose path protocol", { Kind: "service-defaults", Name: "web", Expose: { Paths: [{ Path: "/h", Protocol: "tcp" }] } }, 'Expose.Paths[0].Protocol "tcp" is not supported: use http or http2'],
  ["proxy-defaults name", { Kind: "proxy-defaults", Name: "local" }, 'invalid name ("local"), only "global" is supported'],
  ["proxy-defaults protocol", { Kind: "proxy-defaults", Name: "global", Config: { protocol: "thrift" } }, 'invalid Config["protocol"] "thrift": must be one of tcp, http, http2, grpc'],
  ["proxy-defaults protocol type", { Kind: "proxy-defaults", Name: "global", Config: { protocol: 7 } }, 'invalid Config["protocol"]: must be a string'],
  ["meta count", { Kind: "service-defaults", Name: "web", Meta: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"])) }, "Meta exceeds maximum element count 64"],
  ["meta key length", { Kind: "service-defaults", Name: "web", Meta: { ["k".repeat(129)]: "v" } }, `Meta key "${"k".repeat(129)}" exceeds maximum length 128`],
  ["meta value length", { Kind: "service-resolver", Name: "web", Meta: { k: "v".repeat(513) } }, 'Meta value for key "k" exceeds maximum length 512'],
  ["two path matches", router([http({ PathExact: "/a", PathPrefix: "/b" })]), "Route[0] should only contain at most one of PathExact, PathPrefix, or PathRegex"],
  ["path exact slash", router([http({ PathExact: "a" })]), `Route[0] PathExact doesn't start with '/': "a"`],
  ["path prefix slash", router([http({}), http({ PathPrefix: "b" })]), `Route[1] PathPrefix doesn't start with '/': "b"`],
  ["header name", router([http({ Header: [{ Exact: "x" }] })]), "Route[0] Header[0] missing required Name field"],
  ["header two matches", router([http({ Header: [{ Name: "a", Exact: "x", Prefix: "y" }] })]), "Route[0] Header[0] should only contain one of Present, Exact, Prefix, Suffix, or Regex"],
  ["header no match", router([http({ Header: [{ Name: "a" }] })]), "Route[0] Header[0] should only contain one of Present, Exact, Prefix, Suffix, or Regex"],
  ["query name", router([http({ QueryParam: [{ Exact: "x" }] })]), "Route[0] QueryParam[0] missing required Name field"],
  ["query two matches", router([http({ QueryParam: [{ Name: "q", Present: true, Regex: "y" }] })]), "Route[0] QueryParam[0] should only contain one of Present, Exact, or Regex"],
  ["bad method", router([http({ Methods: ["FETCH"] })]), 'Route[0] Methods contains an invalid method "FETCH"'],
  ["duplicate method", router([http({ Methods: ["get", "GET"] })]), 'Route[0] Methods contains "GET" more than once'],
  ["prefix rewrite needs a path", router([http({ PathRegex: "/x.*" }, { PrefixRewrite: "/" })]), "Route[0] cannot make use of PrefixRewrite without configuring either PathExact or PathPrefix"],
  ["prefix rewrite without match", router([{ Destination: { PrefixRewrite: "/" } }]), "Route[0] cannot make use of PrefixRewrite without configuring either PathExact or PathPrefix"],
  ["negative request timeout", router([http({ PathPrefix: "/" }, { RequestTimeout: "-1s" })]), "Route[0] RequestTimeout '-1s' must be >= 0"],
  ["no splits", splitter([]), "no splits configured"],
  ["sum not 100", splitter([{ Weight: 90 }, { Weight: 9, Service: "b" }]), "the sum of all split weights must be 100, not 99.000000"],
  ["sum over 100 after rounding", splitter([{ Weight: 50.004 }, { Weight: 50.005, Service: "b" }]), "the sum of all split weights must be 100, not 100.010000"],
  ["negative weight", splitter([{ Weight: 110 }, { Weight: -10, Service: "b" }]), "split weight 110 must be between 0 and 100"],
  ["duplicate split", splitter([{ Weight: 50 }, { Weight: 50, Service: "web" }]), 'split destination occurs more than once: service="web", subset="", namespace=""'],
  ["empty subset name", resolver({ Subsets: { "": {} } }), "Subset defined with empty name"],
  ["bad subset name", resolver({ Subsets: { V1: {} } }), `Subset "V1" is invalid: must be 63 characters or less, begin or end with lower case alphanumeric characters, and contain lower case alphanumeric characters or '-' in between`],
  ["long subset name", resolver({ Subsets: { ["a".repeat(64)]: {} } }), `Subset "${"a".repeat(64)}" is invalid: must be 63 characters`],
  ["bad subset filter", resolver({ Subsets: { v1: { Filter: "Service.Meta.version ==" } } }), 'Filter for subset "v1" is not a valid expression: '],
  ["unknown selector in filter", resolver({ Subsets: { v1: { Filter: "Bogus == 1" } } }), 'Filter for subset "v1" is not a valid expression: Selector "Bogus" is not valid'],
  ["default subset unknown", resolver({ DefaultSubset: "v1" }), 'DefaultSubset "v1" is not a valid subset'],
  ["redirect and failover", resolver({ Redirect: { Service: "b" }, Failover: { "*": { Service: "c" } } }), "Redirect and Failover cannot both be set"],
  ["redirect empty", resolver({ Redirect: {} }), "Redirect is empty"],
  ["redirect subset without service", resolver({ Redirect: { ServiceSubset: "v1" } }), "Redirect.ServiceSubset defined without Redirect.Service"],
  ["redirect namespace without service", resolver({ Redirect: { Namespace: "ns" } }), "Redirect.Namespace defined without Redirect.Service"],
  ["redirect to unknown own subset", resolver({ Redirect: { Service: "web", ServiceSubset: "v9" } }), 'Redirect.ServiceSubset "v9" is not a valid subset of "web"'],
  ["failover for unknown subset", resolver({ Failover: { v1: { Service: "b" } } }), 'Bad Failover["v1"]: not a valid subset'],
  ["failover empty", resolver({ Failover: { "*": {} } }), 'Bad Failover["*"] one of Service, ServiceSubset, Namespace, or Datacenters is required'],
  ["failover to unknown own subset", resolver({ Failover: { "*": { ServiceSubset: "v9" } } }), 'Bad Failover["*"].ServiceSubset "v9" is not a valid subset of ""'],
  ["failover empty datacenter", resolver({ Failover: { "*": { Datacenters: ["dc2", ""] } } }), 'Bad Failover["*"].Datacenters: found empty datacenter'],
  ["negative connect timeout", resolver({ ConnectTimeout: "-5s" }), "Bad ConnectTimeout '-5s', must be >= 0"],
];

describe("validateConfigEntry rejects", () => {
  for (const [name, raw, message] of INVALID) {
    test(name, () => {
      const entry = decodeConfigEntry(raw);
      let caught: unknown;
      try {
        validateConfigEntry(entry);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ConfigEntryError);
      expect((caught as ConfigEntryError).reason).toBe("validate");
      expect((caught as ConfigEntryError).statusCode).toBe(400);
      expect((caught as Error).message).toStartWith(message);
    });
  }
});

const VALID: [string, unknown][] = [
  ["service-defaults with every field", { Kind: "service-defaults", Name: "web", Protocol: "GRPC", MeshGateway: { Mode: "default" }, ExternalSNI: "x.example.com", Expose: { Checks: true, Paths: [{ Path: "/h", ListenerPort: 21500, LocalPathPort: 8080, Protocol: "http2" }] }, Meta: { a: "b" } }],
  ["proxy-defaults with opaque config", { Kind: "proxy-defaults", Name: "global", Config: { protocol: "http", local_connect_timeout_ms: 100 }, MeshGateway: { Mode: "local" } }],
  ["router with every match", router([http({ PathPrefix: "/a", Header: [{ Name: "h", Suffix: "x", Invert: true }], QueryParam: [{ Name: "q", Present: true }], Methods: ["get", "post"] }, { Service: "b", PrefixRewrite: "/", RequestTimeout: "1s", NumRetries: 2, RetryOnConnectFailure: true, RetryOnStatusCodes: [503] })])],
  ["router without routes", { Kind: "service-router", Name: "web" }],
  ["splitter with two-decimal weights", splitter([{ Weight: 33.33 }, { Weight: 33.33, Service: "b" }, { Weight: 33.34, Service: "c" }])],
  ["splitter whose weights round to 100", splitter([{ Weight: 33.331 }, { Weight: 33.332, Service: "b" }, { Weight: 33.337, Service: "c" }])],
  ["resolver with everything but redirect", resolver({ DefaultSubset: "v1", Subsets: { v1: { Filter: "Service.Meta.version == 1", OnlyPassing: true }, "v-2": {} }, Failover: { v1: { ServiceSubset: "v-2" }, "*": { Service: "b", ServiceSubset: "any", Datacenters: ["dc2"] } }, ConnectTimeout: "0s" })],
  ["resolver with redirect to another service's subset", resolver({ Redirect: { Service: "b", ServiceSubset: "v9", Datacenter: "dc2" } })],
  ["resolver redirecting datacenter only", resolver({ Redirect: { Datacenter: "dc2" } })],
];

describe("validateConfigEntry accepts", () => {
  for (const [name, raw] of VALID) test(name, () => validateConfigEntry(decodeConfigEntry(raw)));
});
