/**
 * decodeConfigEntry: a /v1/config PUT body (or a config file entry) -> a normalized ConfigEntry, as Consul
 * 1.8's structs.DecodeConfigEntry followed by Entry.Normalize (config_entry.go, config_entry_discoverychain.go).
 */
import { ConfigEntryError } from "./errors.ts";
import { decodeValue, foldKey, formatDecodeErrors, type FieldDef, type Spec, type StructSpec } from "./decode_schema.ts";
import {
  CONFIG_ENTRY_KINDS,
  PROXY_DEFAULTS,
  SERVICE_DEFAULTS,
  SERVICE_RESOLVER,
  SERVICE_ROUTER,
  SERVICE_SPLITTER,
  type ConfigEntry,
  type ConfigEntryKind,
} from "./types.ts";

const S: FieldDef = { spec: "string" };
const OS: FieldDef = { spec: "string", omit: true };
const OB: FieldDef = { spec: "bool", omit: true };
const OU: FieldDef = { spec: "uint", omit: true };
const OD: FieldDef = { spec: "duration", omit: true };
const struct = (fields: Record<string, FieldDef>): StructSpec => ({ fields });
const list = (spec: Spec, omit = true): FieldDef => ({ spec: { list: spec }, omit });
const map = (spec: Spec): FieldDef => ({ spec: { map: spec }, omit: true });
const ptr = (spec: StructSpec): FieldDef => ({ spec, omit: true, ptr: true });

const common: Record<string, FieldDef> = { Kind: S, Name: S };
const tail: Record<string, FieldDef> = { Meta: map("string"), CreateIndex: { spec: "uint" }, ModifyIndex: { spec: "uint" } };
const meshGateway: FieldDef = { spec: struct({ Mode: OS }) };
const expose: FieldDef = {
  spec: struct({ Checks: OB, Paths: list(struct({ ListenerPort: OU, Path: OS, LocalPathPort: OU, Protocol: OS })) }),
};

const httpMatch = struct({
  PathExact: OS,
  PathPrefix: OS,
  PathRegex: OS,
  Header: list(struct({ Name: S, Present: OB, Exact: OS, Prefix: OS, Suffix: OS, Regex: OS, Invert: OB })),
  QueryParam: list(struct({ Name: S, Present: OB, Exact: OS, Regex: OS })),
  Methods: list("string"),
});
const destination = struct({
  Service: OS, ServiceSubset: OS, Namespace: OS, PrefixRewrite: OS, RequestTimeout: OD, NumRetries: OU,
  RetryOnConnectFailure: OB, RetryOnStatusCodes: list("uint"),
});

const SPECS: Readonly<Record<ConfigEntryKind, StructSpec>> = {
  [SERVICE_DEFAULTS]: struct({ ...common, Protocol: S, MeshGateway: meshGateway, Expose: expose, ExternalSNI: OS, ...tail }),
  [PROXY_DEFAULTS]: struct({ ...common, Config: { spec: "object", omit: true }, MeshGateway: meshGateway, Expose: expose, ...tail }),
  [SERVICE_ROUTER]: struct({
    ...common,
    Routes: list(struct({ Match: ptr(struct({ HTTP: ptr(httpMatch) })), Destination: ptr(destination) }), false),
    ...tail,
  }),
  [SERVICE_SPLITTER]: struct({
    ...common,
    Splits: list(struct({ Weight: { spec: "float" }, Service: OS, ServiceSubset: OS, Namespace: OS }), false),
    ...tail,
  }),
  [SERVICE_RESOLVER]: struct({
    ...common,
    DefaultSubset: OS,
    Subsets: map(struct({ Filter: OS, OnlyPassing: OB })),
    Redirect: ptr(struct({ Service: OS, ServiceSubset: OS, Namespace: OS, Datacenter: OS })),
    Failover: map(struct({ Service: OS, ServiceSubset: OS, Namespace: OS, Datacenters: list("string") })),
    ConnectTimeout: OD,
    ...tail,
  }),
};

/**
 * Decodes and normalizes one config entry. Accepts a parsed JSON value or JSON text. The kind comes from a
 * top-level `Kind`/`kind` key. A top-level `Namespace` of "" or "default" is accepted and dropped (Causeway,
 * like Consul OSS, has only the default namespace). Normalization (Entry.Normalize): Kind canonical, Protocol
 * and Config.protocol lower-cased, mesh gateway mode "default" -> "", router Methods upper-cased, split
 * weights rounded to two decimals. Throws ConfigEntryError("decode") with Consul's wording.
 */
export function decodeConfigEntry(json: unknown): ConfigEntry {
  let raw = json;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch (e) {
      throw new ConfigEntryError("decode", `invalid JSON: ${(e as Error).message}`);
    }
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigEntryError("decode", "Payload does not contain a kind/Kind key at the top level");
  }
  const body: Record<string, unknown> = {};
  let kind: unknown;
  for (const [key, value] of Object.entries(raw)) {
    const folded = foldKey(key);
    if (folded === "kind") kind = value;
    if (folded === "namespace") {
      if (value === "" || value === "default" || value === null) continue;
      throw new ConfigEntryError("decode", `Namespace ${JSON.stringify(value)} is not supported: only the "default" namespace exists`);
    }
    body[key] = value;
  }
  if (typeof kind !== "string" || kind === "") {
    throw new ConfigEntryError("decode", "Payload does not contain a kind/Kind key at the top level");
  }
  const canonicalKind = CONFIG_ENTRY_KINDS.find((k) => k === kind.toLowerCase());
  if (canonicalKind === undefined) throw new ConfigEntryError("decode", `invalid config entry kind: ${kind}`);
  const errors: string[] = [];
  const decoded = decodeValue(body, SPECS[canonicalKind], "", errors) as Record<string, unknown>;
  if (errors.length > 0) throw new ConfigEntryError("decode", formatDecodeErrors(errors));
  decoded.Kind = canonicalKind;
  return normalize(decoded as unknown as ConfigEntry);
}

/** Entry.Normalize for each kind; returns a new entry. */
export function normalize(entry: ConfigEntry): ConfigEntry {
  const mesh = (m: { readonly Mode?: string }) => (m.Mode === undefined || m.Mode === "" || m.Mode === "default" ? {} : { Mode: m.Mode });
  switch (entry.Kind) {
    case SERVICE_DEFAULTS:
      return { ...entry, Protocol: entry.Protocol.toLowerCase(), MeshGateway: mesh(entry.MeshGateway) } as ConfigEntry;
    case PROXY_DEFAULTS: {
      const cfg = entry.Config;
      const proto = cfg?.["protocol"];
      const Config = cfg && typeof proto === "string" ? { ...cfg, protocol: proto.toLowerCase() } : cfg;
      return { ...entry, ...(Config ? { Config } : {}), MeshGateway: mesh(entry.MeshGateway) } as ConfigEntry;
    }
    case SERVICE_ROUTER:
      return {
        ...entry,
        Routes: entry.Routes.map((r) =>
          r.Match?.HTTP?.Methods ? { ...r, Match: { ...r.Match, HTTP: { ...r.Match.HTTP, Methods: r.Match.HTTP.Methods.map((m) => m.toUpperCase()) } } } : r,
        ),
      };
    case SERVICE_SPLITTER:
      return { ...entry, Splits: entry.Splits.map((s) => ({ ...s, Weight: normalizeSplitWeight(s.Weight) })) };
    case SERVICE_RESOLVER:
      return entry;
  }
}

/** structs.NormalizeServiceSplitWeight: round to two decimals (float32 in Go; exact here). */
export function normalizeSplitWeight(weight: number): number {
  return Math.round(weight * 100) / 100;
}

/** Weight scaled to an integer number of hundredths (structs.scaleWeight). */
export function scaleSplitWeight(weight: number): number {
  return Math.round(weight * 100);
}
