/**
 * validateConfigEntry: the rules each entry must meet on its own (Consul 1.8 Entry.Validate in
 * agent/structs/config_entry.go and config_entry_discoverychain.go), with Consul's messages. Rules that need
 * other entries (protocols, cycles, unknown subsets of other services) live in the discovery chain's
 * validateEntryInGraph. Marked "Causeway:" below are checks Consul 1.8 lacks.
 */
import { CHECK_SERVICE_NODE_SCHEMA, compileFilter } from "../bexpr/index.ts";
import { parseDuration } from "../../lib/index.ts";
import { scaleSplitWeight } from "./decode.ts";
import { ConfigEntryError } from "./errors.ts";
import {
  KNOWN_PROTOCOLS,
  PROXY_CONFIG_GLOBAL,
  type ConfigEntry,
  type ExposeConfig,
  type MeshGatewayConfig,
  type ProxyConfigEntry,
  type ServiceConfigEntry,
  type ServiceResolverConfigEntry,
  type ServiceRouterConfigEntry,
  type ServiceSplitterConfigEntry,
} from "./types.ts";

const META_MAX_KEY_PAIRS = 64;
const META_KEY_MAX_LENGTH = 128;
const META_VALUE_MAX_LENGTH = 512;
const VALID_SUBSET = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const HTTP_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"]);

function fail(message: string): never {
  throw new ConfigEntryError("validate", message);
}

/** Throws ConfigEntryError("validate") naming the first rule `entry` breaks. Expects a normalized entry. */
export function validateConfigEntry(entry: ConfigEntry): void {
  if (entry.Name === "") fail("Name is required");
  switch (entry.Kind) {
    case "service-defaults":
      validateServiceDefaults(entry);
      break;
    case "proxy-defaults":
      validateProxyDefaults(entry);
      break;
    case "service-router":
      validateRouter(entry);
      break;
    case "service-splitter":
      validateSplitter(entry);
      break;
    case "service-resolver":
      validateResolver(entry);
      break;
  }
  validateMeta(entry.Meta);
}

/** validateConfigEntryMeta: all violations, joined as Consul's multierror would list them. */
function validateMeta(meta: Readonly<Record<string, string>> | undefined): void {
  if (meta === undefined) return;
  const errs: string[] = [];
  if (Object.keys(meta).length > META_MAX_KEY_PAIRS) errs.push(`Meta exceeds maximum element count ${META_MAX_KEY_PAIRS}`);
  for (const [k, v] of Object.entries(meta)) {
    if (k.length > META_KEY_MAX_LENGTH) errs.push(`Meta key ${JSON.stringify(k)} exceeds maximum length ${META_KEY_MAX_LENGTH}`);
    if (v.length > META_VALUE_MAX_LENGTH) errs.push(`Meta value for key ${JSON.stringify(k)} exceeds maximum length ${META_VALUE_MAX_LENGTH}`);
  }
  if (errs.length === 1) fail(errs[0]!);
  if (errs.length > 1) fail(`${errs.length} errors occurred:\n\t* ${errs.join("\n\t* ")}\n\n`);
}

/** Causeway: Consul 1.8 stores any protocol string; an unknown one only surfaces later in xDS. */
function validateProtocol(protocol: string, field: string): void {
  if (protocol !== "" && !KNOWN_PROTOCOLS.includes(protocol)) {
    fail(`invalid ${field} ${JSON.stringify(protocol)}: must be one of ${KNOWN_PROTOCOLS.join(", ")}`);
  }
}

/** structs.ValidateMeshGatewayMode. */
function validateMeshGateway(mg: MeshGatewayConfig): void {
  const mode = mg.Mode ?? "";
  if (!["", "none", "local", "remote"].includes(mode)) fail(`Invalid Mesh Gateway Mode: ${JSON.stringify(mode)}`);
}

/** Causeway: expose paths as the agent would accept them on a sidecar registration. */
function validateExpose(expose: ExposeConfig): void {
  for (const [i, p] of (expose.Paths ?? []).entries()) {
    if (p.Path !== undefined && !p.Path.startsWith("/")) fail(`Expose.Paths[${i}].Path must start with '/': ${JSON.stringify(p.Path)}`);
    if (p.Protocol !== undefined && p.Protocol !== "http" && p.Protocol !== "http2") {
      fail(`Expose.Paths[${i}].Protocol ${JSON.stringify(p.Protocol)} is not supported: use http or http2`);
    }
  }
}

function validateServiceDefaults(e: ServiceConfigEntry): void {
  validateProtocol(e.Protocol, "Protocol");
  validateMeshGateway(e.MeshGateway);
  validateExpose(e.Expose);
}

function validateProxyDefaults(e: ProxyConfigEntry): void {
  if (e.Name !== PROXY_CONFIG_GLOBAL) fail(`invalid name (${JSON.stringify(e.Name)}), only ${JSON.stringify(PROXY_CONFIG_GLOBAL)} is supported`);
  const protocol = e.Config?.["protocol"];
  if (protocol !== undefined) {
    if (typeof protocol !== "string") fail(`invalid Config["protocol"]: must be a string`);
    validateProtocol(protocol, `Config["protocol"]`);
  }
  validateMeshGateway(e.MeshGateway);
  validateExpose(e.Expose);
}

function durationMs(text: string | undefined): number {
  return text === undefined ? 0 : parseDuration(text);
}

function validateRouter(e: ServiceRouterConfigEntry): void {
  for (const [i, route] of e.Routes.entries()) {
    let eligibleForPrefixRewrite = false;
    const http = route.Match?.HTTP;
    if (http !== undefined) {
      let pathParts = 0;
      if (http.PathExact !== undefined) {
        eligibleForPrefixRewrite = true;
        pathParts++;
        if (!http.PathExact.startsWith("/")) fail(`Route[${i}] PathExact doesn't start with '/': ${JSON.stringify(http.PathExact)}`);
      }
      if (http.PathPrefix !== undefined) {
        eligibleForPrefixRewrite = true;
        pathParts++;
        if (!http.PathPrefix.startsWith("/")) fail(`Route[${i}] PathPrefix doesn't start with '/': ${JSON.stringify(http.PathPrefix)}`);
      }
      if (http.PathRegex !== undefined) pathParts++;
      if (pathParts > 1) fail(`Route[${i}] should only contain at most one of PathExact, PathPrefix, or PathRegex`);
      for (const [j, h] of (http.Header ?? []).entries()) {
        if (h.Name === "") fail(`Route[${i}] Header[${j}] missing required Name field`);
        const n = [h.Present, h.Exact, h.Prefix, h.Suffix, h.Regex].filter((x) => x !== undefined).length;
        if (n !== 1) fail(`Route[${i}] Header[${j}] should only contain one of Present, Exact, Prefix, Suffix, or Regex`);
      }
      for (const [j, q] of (http.QueryParam ?? []).entries()) {
        if (q.Name === "") fail(`Route[${i}] QueryParam[${j}] missing required Name field`);
        const n = [q.Present, q.Exact, q.Regex].filter((x) => x !== undefined).length;
        if (n !== 1) fail(`Route[${i}] QueryParam[${j}] should only contain one of Present, Exact, or Regex`);
      }
      const seen = new Set<string>();
      for (const m of http.Methods ?? []) {
        if (!HTTP_METHODS.has(m)) fail(`Route[${i}] Methods contains an invalid method ${JSON.stringify(m)}`);
        if (seen.has(m)) fail(`Route[${i}] Methods contains ${JSON.stringify(m)} more than once`);
        seen.add(m);
      }
    }
    const dest = route.Destination;
    if (dest !== undefined) {
      if (dest.PrefixRewrite !== undefined && !eligibleForPrefixRewrite) {
        fail(`Route[${i}] cannot make use of PrefixRewrite without configuring either PathExact or PathPrefix`);
      }
      // Causeway: a negative timeout would reach Envoy as an invalid duration.
      if (durationMs(dest.RequestTimeout) < 0) fail(`Route[${i}] RequestTimeout '${dest.RequestTimeout}' must be >= 0`);
    }
  }
}

function validateSplitter(e: ServiceSplitterConfigEntry): void {
  if (e.Splits.length === 0) fail("no splits configured");
  const seen = new Set<string>();
  for (const s of e.Splits) {
    const service = s.Service ?? e.Name, subset = s.ServiceSubset ?? "", ns = s.Namespace ?? "";
    const key = JSON.stringify([service, subset, ns]);
    if (seen.has(key)) {
      fail(`split destination occurs more than once: service=${JSON.stringify(service)}, subset=${JSON.stringify(subset)}, namespace=${JSON.stringify(ns)}`);
    }
    seen.add(key);
  }
  // Causeway: Consul 1.8 only checks the sum, which a negative weight can fake.
  for (const s of e.Splits) if (s.Weight < 0 || s.Weight > 100) fail(`split weight ${s.Weight} must be between 0 and 100`);
  const sumScaled = e.Splits.reduce((sum, s) => sum + scaleSplitWeight(s.Weight), 0);
  if (sumScaled !== 100 * 100) fail(`the sum of all split weights must be 100, not ${(sumScaled / 100).toFixed(6)}`);
}

/** validateServiceSubset (config_entry_discoverychain.go). */
export function validateSubsetName(name: string): string | undefined {
  if (name.length > 63 || !VALID_SUBSET.test(name)) {
    return "must be 63 characters or less, begin or end with lower case alphanumeric characters, and contain lower case alphanumeric characters or '-' in between";
  }
  return undefined;
}

function validateResolver(e: ServiceResolverConfigEntry): void {
  const subsets = e.Subsets ?? {};
  for (const [name, subset] of Object.entries(subsets)) {
    if (name === "") fail("Subset defined with empty name");
    const bad = validateSubsetName(name);
    if (bad !== undefined) fail(`Subset ${JSON.stringify(name)} is invalid: ${bad}`);
    if (subset.Filter !== undefined) {
      try {
        compileFilter(subset.Filter, CHECK_SERVICE_NODE_SCHEMA);
      } catch (err) {
        fail(`Filter for subset ${JSON.stringify(name)} is not a valid expression: ${(err as Error).message}`);
      }
    }
  }
  const isSubset = (s: string) => Object.hasOwn(subsets, s);
  if (e.DefaultSubset !== undefined && !isSubset(e.DefaultSubset)) fail(`DefaultSubset ${JSON.stringify(e.DefaultSubset)} is not a valid subset`);
  const r = e.Redirect;
  if (r !== undefined) {
    if (Object.keys(e.Failover ?? {}).length > 0) fail("Redirect and Failover cannot both be set");
    if (!r.Service && !r.ServiceSubset && !r.Namespace && !r.Datacenter) fail("Redirect is empty");
    if (!r.Service) {
      if (r.ServiceSubset) fail("Redirect.ServiceSubset defined without Redirect.Service");
      if (r.Namespace) fail("Redirect.Namespace defined without Redirect.Service");
    } else if (r.Service === e.Name && r.ServiceSubset && !isSubset(r.ServiceSubset)) {
      fail(`Redirect.ServiceSubset ${JSON.stringify(r.ServiceSubset)} is not a valid subset of ${JSON.stringify(r.Service)}`);
    }
  }
  for (const [subset, f] of Object.entries(e.Failover ?? {})) {
    const q = JSON.stringify(subset);
    if (subset !== "*" && !isSubset(subset)) fail(`Bad Failover[${q}]: not a valid subset`);
    if (!f.Service && !f.ServiceSubset && !f.Namespace && (f.Datacenters ?? []).length === 0) {
      fail(`Bad Failover[${q}] one of Service, ServiceSubset, Namespace, or Datacenters is required`);
    }
    if (f.ServiceSubset && (!f.Service || f.Service === e.Name) && !isSubset(f.ServiceSubset)) {
      fail(`Bad Failover[${q}].ServiceSubset ${JSON.stringify(f.ServiceSubset)} is not a valid subset of ${JSON.stringify(f.Service ?? "")}`);
    }
    for (const dc of f.Datacenters ?? []) if (dc === "") fail(`Bad Failover[${q}].Datacenters: found empty datacenter`);
  }
  if (durationMs(e.ConnectTimeout) < 0) fail(`Bad ConnectTimeout '${e.ConnectTimeout}', must be >= 0`);
}
