/**
 * GET|POST /v1/discovery-chain/:service[?compile-dc=] (Consul 1.8 agent/discovery_chain_endpoint.go and
 * agent/consul/discovery_chain_endpoint.go): the service's compiled discovery chain as `{"Chain": {...}}`.
 *
 * The read blocks on the config entries (X-Consul-Index is theirs); the trust domain comes from the CA
 * roots, read once the entries are in. Before the CA exists Consul's DiscoveryChain.Get fails with
 * "no cluster ca config setup", answered 500 like every RPC error, and so does this route. A chain that
 * does not compile is answered with the compiler's message: 400 when a POST's overrides are part of it
 * (the request is at fault), else 500 (the stored entries are), as Consul answers Compile's error.
 */
import type { Context, Hono } from "hono";
import { compileDiscoveryChain, type MeshGatewayMode } from "../connect/index.ts";
import { GoError, isJsonObject, jsonKind, parseGoDuration, parseGoJson, unmarshalTypeError, type JsonObject, type JsonValue } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { readBodyText } from "./body.ts";
import { datacenterNameError } from "./datacenter.ts";
import { serveRead } from "./read_route.ts";
import { errorResponse, jsonResponse, safeErrorMessage, textError } from "./respond.ts";
import { query } from "./request.ts";
import { badPath, otherMethodsNotAllowed, pathTail } from "./route_params.ts";

const PREFIX = "/v1/discovery-chain/";

/** What a POST body may override (Consul's discoveryChainReadRequest). */
export interface ChainOverrides {
  readonly protocol?: string;
  /** Nanoseconds, as Go's time.Duration. */
  readonly connectTimeoutNs?: number;
  readonly meshGatewayMode?: string;
}

/** A decode failure: answered 400 "Request decoding failed: <message>". */
class OverrideDecodeError extends Error {}

/** mapstructure's error list for one field (go-multierror under "N error(s) decoding:"). */
function fieldError(message: string): never {
  throw new OverrideDecodeError(`1 error(s) decoding:\n\n* ${message}`);
}

function goTypeName(v: JsonValue): string {
  if (Array.isArray(v)) return "[]interface {}";
  if (v === null) return "<nil>";
  return typeof v === "object" ? "map[string]interface {}" : typeof v === "number" ? "float64" : typeof v === "boolean" ? "bool" : "string";
}

/**
 * The value of `camel` (or its snake_case alias) in `raw`, matched case-insensitively as lib.TranslateKeys
 * and mapstructure do; the camelCase key wins when both are present.
 */
function field(raw: JsonObject, camel: string, snake: string): JsonValue | undefined {
  const keys = Object.keys(raw);
  const key = keys.find((k) => k.toLowerCase() === camel.toLowerCase()) ?? keys.find((k) => k.toLowerCase() === snake);
  return key === undefined ? undefined : raw[key];
}

/** mapstructure's WeaklyTypedInput conversion to a string. */
function weakString(v: JsonValue, name: string): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return v ? "1" : "0";
  return fieldError(`'${name}' expected type 'string', got unconvertible type '${goTypeName(v)}'`);
}

/**
 * Decodes a POST body (decodeDiscoveryChainReadRequest): camelCase or snake_case keys, weakly typed,
 * OverrideConnectTimeout as a Go duration string or a number of nanoseconds. Throws GoError for bad JSON
 * and OverrideDecodeError for a value mapstructure would refuse.
 */
export function decodeChainOverrides(text: string): ChainOverrides {
  const raw = parseGoJson(text);
  if (raw === null) return {};
  if (!isJsonObject(raw)) throw unmarshalTypeError(jsonKind(raw), "", "map[string]interface {}");
  const out: { protocol?: string; connectTimeoutNs?: number; meshGatewayMode?: string } = {};
  const protocol = field(raw, "OverrideProtocol", "override_protocol");
  if (protocol !== undefined && protocol !== null) out.protocol = weakString(protocol, "OverrideProtocol");
  const timeout = field(raw, "OverrideConnectTimeout", "override_connect_timeout");
  if (typeof timeout === "string") {
    try {
      out.connectTimeoutNs = parseGoDuration(timeout);
    } catch (err) {
      fieldError(`error decoding 'OverrideConnectTimeout': ${(err as Error).message}`);
    }
  } else if (typeof timeout === "number") {
    out.connectTimeoutNs = Math.trunc(timeout);
  } else if (timeout !== undefined && timeout !== null) {
    fieldError(`'OverrideConnectTimeout' expected type 'time.Duration', got unconvertible type '${goTypeName(timeout)}'`);
  }
  const mesh = field(raw, "OverrideMeshGateway", "override_mesh_gateway");
  if (isJsonObject(mesh)) {
    const mode = field(mesh, "Mode", "mode");
    if (mode !== undefined && mode !== null) out.meshGatewayMode = weakString(mode, "OverrideMeshGateway.Mode");
  } else if (mesh !== undefined && mesh !== null) {
    fieldError(`'OverrideMeshGateway' expected a map, got '${Array.isArray(mesh) ? "slice" : typeof mesh === "number" ? "float64" : typeof mesh}'`);
  }
  return out;
}

/** structs.ValidateMeshGatewayMode: "" (no opinion), none, local, remote -- "default" is not accepted here. */
const MESH_GATEWAY_MODES: ReadonlySet<string> = new Set(["", "none", "local", "remote"]);

export function mountDiscoveryChain(app: Hono, deps: HttpApiDeps): void {
  const handler = async (c: Context): Promise<Response> => {
    const name = pathTail(c, PREFIX);
    if (name === undefined) return badPath(c);
    if (name === "") return textError(c, 400, "Missing chain name");
    const compileDc = query(c, "compile-dc");
    const badDc = compileDc ? datacenterNameError(compileDc, "compile-dc datacenter") : undefined;
    if (badDc) return textError(c, 400, badDc);
    let overrides: ChainOverrides = {};
    if (c.req.method === "POST") {
      try {
        overrides = decodeChainOverrides(await readBodyText(c));
      } catch (err) {
        if (err instanceof GoError || err instanceof OverrideDecodeError) return textError(c, 400, `Request decoding failed: ${err.message}`);
        return errorResponse(c, err);
      }
      if (!MESH_GATEWAY_MODES.has(overrides.meshGatewayMode ?? "")) return textError(c, 400, "Invalid OverrideMeshGateway.Mode parameter");
    }
    return serveRead(c, deps, () => ({ type: "config-entry-list" }), async (entries, options) => {
      let trustDomain: string;
      try {
        const roots = await deps.state!.read({ type: "ca-roots" }, { ...options, minIndex: 0, maxWaitMs: 0 });
        trustDomain = roots.value.trustDomain;
      } catch (err) {
        return errorResponse(c, err);
      }
      if (trustDomain === "") return textError(c, 500, "no cluster ca config setup");
      // The serving server's datacenter: ours, or the one ?dc= forwarded the request to.
      const servingDc = options.datacenter ?? deps.agent.datacenter;
      try {
        const chain = compileDiscoveryChain({
          serviceName: name,
          evaluateInNamespace: "default",
          evaluateInDatacenter: query(c, "compile-dc") || servingDc,
          evaluateInTrustDomain: trustDomain,
          useInDatacenter: servingDc,
          ...(overrides.meshGatewayMode ? { overrideMeshGateway: { Mode: overrides.meshGatewayMode as MeshGatewayMode } } : {}),
          ...(overrides.protocol ? { overrideProtocol: overrides.protocol } : {}),
          ...(overrides.connectTimeoutNs ? { overrideConnectTimeoutMs: overrides.connectTimeoutNs / 1e6 } : {}),
          entries,
        });
        return jsonResponse(c, { Chain: chain });
      } catch (err) {
        return c.req.method === "POST" ? errorResponse(c, err) : textError(c, 500, safeErrorMessage(err));
      }
    });
  };
  app.get(`${PREFIX}*`, handler);
  app.post(`${PREFIX}*`, handler);
  otherMethodsNotAllowed(app, `${PREFIX}*`);
}
