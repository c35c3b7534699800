/**
 * The Connect CA endpoints (Consul 1.8's agent/connect_ca_endpoint.go and agent/agent_endpoint.go):
 * GET /v1/connect/ca/roots, GET and PUT /v1/connect/ca/configuration, GET /v1/agent/connect/ca/roots
 * and GET /v1/agent/connect/ca/leaf/:service (the agent's cached leaf, blocking on `?index=`).
 */
import type { Context, Hono } from "hono";
import {
  DEFAULT_INTERMEDIATE_CERT_TTL, DEFAULT_LEAF_CERT_TTL, DEFAULT_ROTATION_PERIOD, keySettings, type CAConfiguration, type CARoot,
} from "../connect/index.ts";
import { parseDuration, parseGoJson, type JsonValue } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { BadRequestError, parseReadOptions, setQueryMeta } from "./query_options.ts";
import type { ReadValue } from "../model/index.ts";
import { readBodyText } from "./body.ts";
import { tooLong } from "./field_limits.ts";
import { messageOf, serveRead } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { badPath, otherMethodsNotAllowed, pathTail } from "./route_params.ts";
import { query, requestToken } from "./request.ts";

/** The IndexedCARoots body: `IntermediateCerts` null when empty, as Go marshals a nil slice. */
export function indexedRoots(v: ReadValue<{ type: "ca-roots" }>): unknown {
  return {
    ActiveRootID: v.activeRootId,
    TrustDomain: v.trustDomain,
    Roots: v.roots.map((r: CARoot) => {
      const { IntermediateCerts, ...rest } = r as CARoot & { PrivateKey?: unknown; SigningKey?: unknown };
      delete (rest as { PrivateKey?: unknown }).PrivateKey;
      delete (rest as { SigningKey?: unknown }).SigningKey;
      return { ...rest, IntermediateCerts: IntermediateCerts?.length ? IntermediateCerts : null };
    }),
  };
}

/**
 * The configuration as GET answers it: the private key never leaves the servers, and a secondary's
 * IntermediateCert (the CA's own state, which Consul keeps in its provider, not in the configuration; it
 * is served in /v1/connect/ca/roots' IntermediateCerts) is not shown as if an operator had set it.
 */
function redacted(config: CAConfiguration | null): unknown {
  if (!config) return null;
  const { PrivateKey: _key, IntermediateCert: _intermediate, ...rest } = config.Config;
  return { ...config, Config: rest };
}

const str = (v: JsonValue | undefined, field: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new BadRequestError(`Request decode failed: ${field} must be a string`);
  return v;
};

/** How the server's CA words a configuration it cannot use (Consul's "error configuring provider: ..."). */
const PROVIDER_REFUSAL = "error configuring provider:";

/** A field of a decoded object by name, exact first, then in any letter case (as mapstructure matches Consul's CA config). */
function fieldOf(o: Readonly<Record<string, JsonValue>>, name: string): JsonValue | undefined {
  if (Object.hasOwn(o, name)) return o[name];
  const key = Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : o[key];
}

/**
 * Config.PrivateKeyType / PrivateKeyBits as given (absent or null: undefined, meaning the defaults). The
 * bits may be a number or a numeric string (Consul decodes them weakly); an integer is required. Their
 * values are checked afterwards, as Consul's `CommonCAProviderConfig.Validate` does.
 */
function keyFields(c: Readonly<Record<string, JsonValue>>): { type?: string; bits?: number } {
  const type = str(fieldOf(c, "PrivateKeyType"), "Config.PrivateKeyType");
  const raw = fieldOf(c, "PrivateKeyBits");
  if (raw === undefined || raw === null) return { type };
  const bits = typeof raw === "number" ? raw : typeof raw === "string" && /^\d{1,9}$/.test(raw) ? Number(raw) : raw === "" ? 0 : undefined;
  if (bits === undefined || !Number.isSafeInteger(bits)) throw new BadRequestError("Request decode failed: Config.PrivateKeyBits must be an integer");
  return { type, bits };
}

/**
 * Decodes a PUT /v1/connect/ca/configuration body into a CAConfiguration over Consul's defaults;
 * throws BadRequestError with Consul's wording for a bad body, duration or TTL. An empty body, or one
 * that names no Provider, is refused (Consul: `unknown CA provider ""`) rather than read as "rotate to
 * a default configuration". PrivateKeyType/PrivateKeyBits are checked like Consul's
 * `CommonCAProviderConfig.Validate` (see `keySettings`); the refusals of that check carry Consul's
 * "error configuring provider: " prefix, answered 400 here where Consul answers 500.
 */
export function parseCaConfigurationBody(body: string): CAConfiguration {
  let raw: JsonValue;
  try {
    raw = parseGoJson(body);
  } catch (err) {
    throw new BadRequestError(`Request decode failed: ${messageOf(err)}`);
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new BadRequestError("Request decode failed: body must be a JSON object");
  const o = raw as Record<string, JsonValue>;
  const provider = str(fieldOf(o, "Provider"), "Provider");
  if (!provider) throw new BadRequestError(`Missing CA provider: the body must set Provider (only "consul" is available)`);
  if (provider !== "consul") throw new BadRequestError(`Unsupported CA provider "${provider}": only "consul" is available`);
  const cfgRaw = fieldOf(o, "Config") ?? {};
  if (cfgRaw === null || typeof cfgRaw !== "object" || Array.isArray(cfgRaw)) throw new BadRequestError("Request decode failed: Config must be an object");
  const c = cfgRaw as Record<string, JsonValue>;
  const duration = (field: string, fallback: string): string => {
    const v = fieldOf(c, field);
    if (v === undefined || v === null || v === "") return fallback;
    if (typeof v !== "string") throw new BadRequestError(`error parsing CA config: ${field} must be a duration string`);
    try {
      parseDuration(v);
    } catch {
      throw new BadRequestError(`error parsing CA config: ${field}: time: invalid duration "${v}"`);
    }
    return v;
  };
  const leafTtl = duration("LeafCertTTL", DEFAULT_LEAF_CERT_TTL);
  // CommonCAProviderConfig.Validate.
  const leafMs = parseDuration(leafTtl);
  if (leafMs < 3_600_000) throw new BadRequestError(`${PROVIDER_REFUSAL} leaf cert TTL must be greater than 1h`);
  if (leafMs > 365 * 24 * 3_600_000) throw new BadRequestError(`${PROVIDER_REFUSAL} leaf cert TTL must be less than 1 year`);
  const key = keyFields(c);
  try {
    keySettings(key.type, key.bits);
  } catch (err) {
    throw new BadRequestError(`${PROVIDER_REFUSAL} ${messageOf(err)}`);
  }
  const privateKey = str(fieldOf(c, "PrivateKey"), "Config.PrivateKey");
  const rootCert = str(fieldOf(c, "RootCert"), "Config.RootCert");
  return {
    ClusterID: str(fieldOf(o, "ClusterID"), "ClusterID") ?? "",
    Provider: "consul",
    Config: {
      LeafCertTTL: leafTtl,
      RotationPeriod: duration("RotationPeriod", DEFAULT_ROTATION_PERIOD),
      IntermediateCertTTL: duration("IntermediateCertTTL", DEFAULT_INTERMEDIATE_CERT_TTL),
      ...(key.type === undefined ? {} : { PrivateKeyType: key.type }),
      ...(key.bits === undefined ? {} : { PrivateKeyBits: key.bits }),
      ...(privateKey ? { PrivateKey: privateKey } : {}),
      ...(rootCert ? { RootCert: rootCert } : {}),
    },
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

const LEAF_PREFIX = "/v1/agent/connect/ca/leaf/";

export function mountConnectCa(app: Hono, deps: HttpApiDeps): void {
  const roots = (c: Context) => serveRead(c, deps, () => ({ type: "ca-roots" as const }), (v) => jsonResponse(c, indexedRoots(v)));
  app.get("/v1/connect/ca/roots", roots);
  app.get("/v1/agent/connect/ca/roots", roots);

  app.get("/v1/connect/ca/configuration", (c) =>
    serveRead(c, deps, () => ({ type: "ca-config" as const }), (v) => jsonResponse(c, redacted(v))));
  app.put("/v1/connect/ca/configuration", async (c) => {
    let config: CAConfiguration;
    try {
      config = parseCaConfigurationBody(await readBodyText(c));
    } catch (err) {
      return errorResponse(c, err);
    }
    if (!deps.connectCa) return textError(c, 500, "Connect CA is not available on this agent");
    try {
      await deps.connectCa.setConfiguration(config, query(c, "dc") || undefined, requestToken(c));
    } catch (err) {
      // The CA's refusals of the configuration itself (a bad key or certificate) are the request's fault.
      if (err instanceof Error && err.message.startsWith(PROVIDER_REFUSAL)) return textError(c, 400, err.message);
      return errorResponse(c, err);
    }
    return c.body(null, 200);
  });

  app.get(`${LEAF_PREFIX}*`, async (c) => {
    const service = pathTail(c, LEAF_PREFIX);
    if (service === undefined) return badPath(c);
    if (service === "") return textError(c, 400, "Missing service name");
    // Leaves are cached per service name: a name no service can have must not make a new one.
    const long = tooLong("Service name", service);
    if (long) return textError(c, 400, long);
    let options;
    try {
      options = parseReadOptions(c, deps.random ?? (() => 0.5));
    } catch (err) {
      return errorResponse(c, err);
    }
    if (!deps.connectCa) return textError(c, 500, "Connect CA is not available on this agent");
    let out;
    try {
      out = await deps.connectCa.leaf(service, { minIndex: options.minIndex, maxWaitMs: options.maxWaitMs, ...(requestToken(c) ? { token: requestToken(c) } : {}) });
    } catch (err) {
      return errorResponse(c, err);
    }
    setQueryMeta(c, { index: out.index, knownLeader: true, lastContactMs: 0 });
    return jsonResponse(c, out.cert);
  });
  otherMethodsNotAllowed(app, `${LEAF_PREFIX}*`);
}
