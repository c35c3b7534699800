/**
 * The Connect CA endpoints (Consul 1.8's agent/connect_ca_endpoint.go and agent/agent_endpoint.go):
 * GET /v1/connect/ca/roots, GET and PUT /v1/connect/ca/configuration, GET /v1/agent/connect/ca/roots
 * and GET /v1/agent/connect/ca/leaf/:service (the agent's cached leaf, blocking on `?index=`).
 */
import type { Context, Hono } from "hono";
import {
  DEFAULT_INTERMEDIATE_CERT_TTL, DEFAULT_LEAF_CERT_TTL, DEFAULT_ROTATION_PERIOD, type CAConfiguration, type CARoot,
} from "../connect/index.ts";
import { parseDuration, parseGoJson, type JsonValue } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { BadRequestError, parseReadOptions, setQueryMeta } from "./query_options.ts";
import type { ReadValue } from "../model/index.ts";
import { messageOf, serveRead } from "./read_route.ts";
import { jsonResponse, textError } from "./respond.ts";
import { badPath, otherMethodsNotAllowed, pathTail } from "./route_params.ts";
import { query } from "./request.ts";

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

/** The configuration as GET answers it: the private key never leaves the servers. */
function redacted(config: CAConfiguration | null): unknown {
  if (!config) return null;
  const { PrivateKey: _key, ...rest } = config.Config;
  return { ...config, Config: rest };
}

const str = (v: JsonValue | undefined, field: string): string | undefined => {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new BadRequestError(`Request decode failed: ${field} must be a string`);
  return v;
};

/**
 * Decodes a PUT /v1/connect/ca/configuration body into a CAConfiguration over Consul's defaults;
 * throws BadRequestError with Consul's wording for a bad body, duration or TTL.
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
  const provider = str(o.Provider, "Provider") || "consul";
  if (provider !== "consul") throw new BadRequestError(`Unsupported CA provider "${provider}": only "consul" is available`);
  const cfgRaw = o.Config ?? {};
  if (cfgRaw === null || typeof cfgRaw !== "object" || Array.isArray(cfgRaw)) throw new BadRequestError("Request decode failed: Config must be an object");
  const c = cfgRaw as Record<string, JsonValue>;
  const duration = (field: string, fallback: string): string => {
    const v = c[field];
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
  if (leafMs < 3_600_000) throw new BadRequestError("leaf cert TTL must be greater than 1h");
  if (leafMs > 365 * 24 * 3_600_000) throw new BadRequestError("leaf cert TTL must be less than 1 year");
  const privateKey = str(c.PrivateKey, "Config.PrivateKey");
  const rootCert = str(c.RootCert, "Config.RootCert");
  return {
    ClusterID: str(o.ClusterID, "ClusterID") ?? "",
    Provider: "consul",
    Config: {
      LeafCertTTL: leafTtl,
      RotationPeriod: duration("RotationPeriod", DEFAULT_ROTATION_PERIOD),
      IntermediateCertTTL: duration("IntermediateCertTTL", DEFAULT_INTERMEDIATE_CERT_TTL),
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
      config = parseCaConfigurationBody(await c.req.text());
    } catch (err) {
      if (err instanceof BadRequestError) return textError(c, 400, err.message);
      throw err;
    }
    if (!deps.connectCa) return textError(c, 500, "Connect CA is not available on this agent");
    try {
      await deps.connectCa.setConfiguration(config, query(c, "dc") || undefined);
    } catch (err) {
      return textError(c, 500, messageOf(err));
    }
    return c.body(null, 200);
  });

  app.get(`${LEAF_PREFIX}*`, async (c) => {
    const service = pathTail(c, LEAF_PREFIX);
    if (service === undefined) return badPath(c);
    if (service === "") return textError(c, 400, "Missing service name");
    let options;
    try {
      options = parseReadOptions(c, deps.random ?? (() => 0.5));
    } catch (err) {
      if (err instanceof BadRequestError) return textError(c, 400, err.message);
      throw err;
    }
    if (!deps.connectCa) return textError(c, 500, "Connect CA is not available on this agent");
    let out;
    try {
      out = await deps.connectCa.leaf(service, { minIndex: options.minIndex, maxWaitMs: options.maxWaitMs });
    } catch (err) {
      return textError(c, 500, messageOf(err));
    }
    setQueryMeta(c, { index: out.index, knownLeader: true, lastContactMs: 0 });
    return jsonResponse(c, out.cert);
  });
  otherMethodsNotAllowed(app, `${LEAF_PREFIX}*`);
}
