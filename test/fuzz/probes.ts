/**
 * What the fuzz suite sends (pure, seeded): mutated bodies for every write endpoint, random paths and
 * query strings over the read and write routes, and damaged snapshot archives.
 */
import type { Rng } from "../../src/platform/index.ts";
import { CI_LIMITS, mutateBody, type MutationLimits } from "./mutate.ts";

export interface Probe {
  readonly method: "GET" | "PUT" | "POST" | "DELETE";
  /** Path and query string. */
  readonly path: string;
  readonly body?: Uint8Array;
  /** What was mutated, for a finding's report. */
  readonly what: string;
}

const UUID = "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c";
const check = { Name: "mem", TTL: "30s", Notes: "n", Status: "passing", DeregisterCriticalServiceAfter: "90m" };
const service = {
  ID: "web-1", Name: "web", Tags: ["v1", "primary"], Address: "10.0.0.1", Port: 8080, Meta: { version: "1" },
  EnableTagOverride: false, Weights: { Passing: 10, Warning: 1 }, Check: { HTTP: "http://127.0.0.1:1/h", Interval: "10s", Timeout: "1s" },
  Connect: { SidecarService: { Port: 21000 } },
};

/** Write endpoints with a valid body each; the fuzzer mutates the body. */
export const WRITE_ENDPOINTS: readonly { method: Probe["method"]; path: string; body: unknown }[] = [
  { method: "PUT", path: "/v1/catalog/register", body: { Node: "n1", Address: "10.0.0.1", Datacenter: "dc1", NodeMeta: { rack: "a" }, TaggedAddresses: { lan: "10.0.0.1" }, Service: service, Check: { Node: "n1", CheckID: "c1", Name: "c", Status: "passing", ServiceID: "web-1" }, Checks: [{ CheckID: "c2", Name: "c2", Status: "warning" }] } },
  { method: "PUT", path: "/v1/catalog/deregister", body: { Node: "n1", ServiceID: "web-1", Datacenter: "dc1" } },
  { method: "PUT", path: "/v1/agent/service/register", body: service },
  { method: "PUT", path: "/v1/agent/check/register", body: check },
  { method: "PUT", path: "/v1/session/create", body: { Name: "s", TTL: "15s", LockDelay: "15s", Behavior: "release", Checks: ["serfHealth"], NodeChecks: [], ServiceChecks: [{ ID: "c", Namespace: "" }] } },
  { method: "PUT", path: "/v1/txn", body: [{ KV: { Verb: "set", Key: "fuzz/t", Value: "aGVsbG8=", Flags: 7 } }, { KV: { Verb: "cas", Key: "fuzz/t", Value: "", Index: 3 } }, { KV: { Verb: "get", Key: "fuzz/t" } }] },
  { method: "PUT", path: "/v1/config", body: { Kind: "service-resolver", Name: "web", DefaultSubset: "v1", Subsets: { v1: { Filter: "Service.Meta.version == 1" } }, ConnectTimeout: "5s", Failover: { "*": { Datacenters: ["dc2"] } } } },
  { method: "PUT", path: "/v1/config", body: { Kind: "service-defaults", Name: "web", Protocol: "http", MeshGateway: { Mode: "local" } } },
  { method: "PUT", path: "/v1/config", body: { Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { PathPrefix: "/a", Header: [{ Name: "x", Exact: "y" }] } }, Destination: { Service: "web", NumRetries: 3 } }] } },
  { method: "PUT", path: "/v1/config", body: { Kind: "service-splitter", Name: "web", Splits: [{ Weight: 50, ServiceSubset: "v1" }, { Weight: 50 }] } },
  { method: "PUT", path: "/v1/config", body: { Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } } },
  { method: "POST", path: "/v1/connect/intentions", body: { SourceName: "web", DestinationName: "db", Action: "allow", Description: "d", Meta: { a: "b" } } },
  { method: "POST", path: "/v1/agent/connect/authorize", body: { Target: "db", ClientCertURI: "spiffe://11111111-2222-3333-4444-555555555555.consul/ns/default/dc/dc1/svc/web" } },
  { method: "POST", path: "/v1/discovery-chain/web", body: { OverrideConnectTimeout: "5s", OverrideProtocol: "http", OverrideMeshGateway: { Mode: "remote" } } },
  { method: "PUT", path: "/v1/connect/ca/configuration", body: { Provider: "consul", Config: { LeafCertTTL: "72h", RotationPeriod: "2160h" } } },
  { method: "PUT", path: "/v1/kv/fuzz/k?flags=42", body: "value" },
  { method: "PUT", path: "/v1/event/fire/deploy?node=.*", body: "payload" },
  { method: "PUT", path: "/v1/operator/keyring", body: { Key: "pUqJrVyVRj5jsiYEkM/tFQYfWyJIv4s3XkvDwy7Cu5s=" } },
  { method: "POST", path: "/v1/query", body: { Name: "geo-web", Service: { Service: "web", Tags: ["v1", "!old"], OnlyPassing: true, Near: "_agent", Failover: { NearestN: 2, Datacenters: ["dc2"] }, NodeMeta: { rack: "a" } }, DNS: { TTL: "10s" } } },
  { method: "POST", path: "/v1/query", body: { Name: "", Template: { Type: "name_prefix_match", Regexp: "^geo-(.*?)-(x+)$", RemoveEmptyTags: true }, Service: { Service: "${match(1)}", Tags: ["${match(2)}", "${name.suffix}"] } } },
  { method: "PUT", path: "/v1/operator/autopilot/configuration?cas=0", body: { CleanupDeadServers: true, LastContactThreshold: "200ms", MaxTrailingLogs: 250, MinQuorum: 0, ServerStabilizationTime: "10s" } },
  { method: "PUT", path: "/v1/coordinate/update", body: { Node: "n1", Segment: "", Coord: { Vec: [0.1, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 1e-5 } } },
  { method: "PUT", path: "/v1/txn", body: [{ Node: { Verb: "set", Node: { Node: "n2", Address: "10.0.0.2" } } }, { Service: { Verb: "set", Node: "n2", Service: { ID: "s1", Service: "s", Port: 80 } } }, { Check: { Verb: "cas", Check: { Node: "n2", CheckID: "c", Name: "c", Status: "passing", ModifyIndex: 0 } } }, { KV: { Verb: "get", Key: "fuzz/t" } }] },
];

/** Read and write routes for random path and query probes. */
const ROUTES = [
  "/v1/kv/", "/v1/catalog/nodes", "/v1/catalog/services", "/v1/catalog/service/", "/v1/catalog/node/", "/v1/catalog/connect/",
  "/v1/health/node/", "/v1/health/checks/", "/v1/health/service/", "/v1/health/state/", "/v1/health/connect/",
  "/v1/session/info/", "/v1/session/node/", "/v1/session/list", "/v1/agent/self", "/v1/agent/members", "/v1/agent/services",
  "/v1/agent/service/", "/v1/agent/checks", "/v1/agent/health/service/name/", "/v1/agent/health/service/id/", "/v1/event/list",
  "/v1/status/leader", "/v1/status/peers", "/v1/config/", "/v1/discovery-chain/", "/v1/connect/intentions", "/v1/connect/intentions/match",
  "/v1/connect/intentions/check", "/v1/connect/ca/roots", "/v1/agent/connect/ca/leaf/", "/v1/operator/raft/configuration",
  "/v1/catalog/datacenters", "/v1/txn", "/v1/agent/maintenance", "/v1/agent/service/maintenance/", "/v1/agent/check/pass/",
  "/v1/session/renew/", "/v1/session/destroy/", "/v1/agent/force-leave/", "/v1/operator/raft/peer", "/v1/nope", "/", "/v1/",
  "/v1/query", "/v1/query/", "/v1/operator/autopilot/configuration", "/v1/operator/autopilot/health", "/v1/coordinate/datacenters",
  "/v1/coordinate/nodes", "/v1/coordinate/node/",
];
const PARAMS = ["index", "wait", "dc", "filter", "stale", "consistent", "cas", "flags", "acquire", "release", "recurse", "keys", "separator", "raw", "tag", "node-meta", "passing", "near", "pretty", "source", "destination", "by", "name", "compile-dc", "note", "enable", "reason", "prune", "wan", "id", "address", "kind", "token"];
const VALUES = [
  "", "0", "1", "-1", "1.5", "1e3", "18446744073709551615", "18446744073709551616", "9007199254740993", "5s", "10m", "99999999999h", "-1s",
  "dc1", "DC1", "dc2", "dc-%00", "..", "a".repeat(300), "%ZZ", "%", "%25", "%2F", "true", "false", "yes",
  'Node == "n1"', "Service.Tags contains v1", 'Node matches "(a+)+$"', "((((((((((", `${"(Node == 1) or ".repeat(200)}x`, "Meta.x is empty", UUID,
  "web", "web:v1", "a:b:c", "db", "GET", "source", "*/*",
];

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)]!;

function randomQuery(rng: Rng): string {
  const n = rng.int(4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = pick(rng, PARAMS);
    parts.push(rng.int(6) === 0 ? p : `${p}=${encodeURIComponent(pick(rng, VALUES)).replace(/%25(?=[0-9A-Z]{0,2})/g, rng.int(2) ? "%" : "%25")}`);
  }
  // A blocking read legitimately waits up to ?wait (5 minutes by default); the first wait given wins,
  // so a probe with an index waits at most 100 ms and a slow answer stays a finding.
  if (parts.some((p) => p.startsWith("index="))) parts.unshift("wait=100ms");
  return parts.length ? `?${parts.join("&")}` : "";
}

function randomSegment(rng: Rng): string {
  return pick(rng, ["web", "n1", "a/b/c", "%2e%2e/%2e%2e", "..", "x".repeat(1 + rng.int(5000)), UUID, "%00", "é", "%E9", "%C3%28", "", "a%2Fb", "*", "dc1"]);
}

/** The `i`th probe of a run: a mutated write body, a random path/query, or a damaged snapshot. */
export function nextProbe(rng: Rng, snapshotArchive: Uint8Array | undefined, lim: MutationLimits = CI_LIMITS): Probe {
  const kind = rng.int(10);
  if (kind < 6) {
    const ep = pick(rng, WRITE_ENDPOINTS);
    const seedBody = ep.body;
    if (typeof seedBody === "string") {
      return { method: ep.method, path: ep.path + (rng.int(2) ? randomQuery(rng).replace("?", "&") : ""), body: rng.bytes(rng.int(2048)), what: "random body bytes" };
    }
    const m = mutateBody(seedBody, rng, lim);
    return { method: ep.method, path: ep.path + (rng.int(4) === 0 ? randomQuery(rng) : ""), body: m.body, what: m.what };
  }
  if (kind < 9) {
    const route = pick(rng, ROUTES);
    const path = route.endsWith("/") && route !== "/" ? route + randomSegment(rng) : route;
    // Deleting KV is legitimate (and would take the suite's sentinel key with it): KV gets no DELETE here.
    const methods = route === "/v1/kv/" ? (["GET", "PUT"] as const) : (["GET", "GET", "GET", "PUT", "POST", "DELETE"] as const);
    return { method: pick(rng, methods), path: path + randomQuery(rng), what: "random path/query" };
  }
  return { method: "PUT", path: "/v1/snapshot", body: damagedArchive(rng, snapshotArchive), what: "damaged snapshot archive" };
}

/** A snapshot archive with flipped bytes, truncated, or random bytes. */
function damagedArchive(rng: Rng, archive: Uint8Array | undefined): Uint8Array {
  if (!archive || rng.int(4) === 0) return rng.bytes(rng.int(4096));
  const copy = archive.slice(0, rng.int(3) === 0 ? rng.int(archive.length) : archive.length);
  for (let flips = 1 + rng.int(8); flips > 0 && copy.length; flips--) copy[rng.int(copy.length)] ^= 1 << rng.int(8);
  return copy;
}
