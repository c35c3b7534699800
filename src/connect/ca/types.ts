/**
 * Connect CA values in Consul 1.8's JSON wire shape (`agent/structs/connect_ca.go`, `/v1/connect/ca/*`,
 * `/v1/agent/connect/ca/leaf/:service`). PascalCase fields, times as RFC 3339 strings (Go's
 * `time.Time` JSON, e.g. "2018-05-25T21:39:23Z"), raft indexes as numbers. The stored values (CARoot,
 * CAConfiguration and its provider config, IndexedCARoots) live in src/model/ca.ts so the state store can
 * hold them, and are re-exported here unchanged.
 */
import type { CAConfiguration } from "../../model/index.ts";

export type { CAConfiguration, CARoot, ConsulCAProviderConfig, IndexedCARoots } from "../../model/index.ts";

/** A signed leaf (`structs.IssuedCert`), as /v1/agent/connect/ca/leaf/:service returns it. */
export interface IssuedCert {
  /** The leaf's serial number, lower-case colon hex of its big-endian bytes (`connect.EncodeSerialNumber`). */
  readonly SerialNumber: string;
  /** The leaf followed by the signing root's IntermediateCerts (Consul's `ConnectCA.Sign`). */
  readonly CertPEM: string;
  /** The leaf's private key, SEC1 "EC PRIVATE KEY" PEM like Consul; "" when signed from a CSR (Consul omits it). */
  readonly PrivateKeyPEM: string;
  /** Service name (not ID). */
  readonly Service: string;
  /** The SPIFFE ID in the leaf's URI SAN. */
  readonly ServiceURI: string;
  /** notBefore and notAfter, RFC 3339. */
  readonly ValidAfter: string;
  readonly ValidBefore: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** Consul 1.8's defaults for the built-in provider (`structs.DefaultConsulCAProviderConfig` and `connect.Default*`). */
export const DEFAULT_LEAF_CERT_TTL = "72h";
export const DEFAULT_ROTATION_PERIOD = "2160h";
export const DEFAULT_INTERMEDIATE_CERT_TTL = "8760h";
/** Root validity: 10 calendar years from generation (provider_consul.go `generateCA`). */
export const ROOT_VALIDITY_YEARS = 10;
/** Leaves, intermediates and cross-signed roots start one minute in the past to absorb clock drift. */
export const CERT_CLOCK_SKEW_MS = 60_000;
/** A cross-signed root lives 7 days: long enough for leaves of the old root (72h TTL) to be replaced. */
export const CROSS_SIGN_VALIDITY_MS = 7 * 86_400_000;

/** The CA configuration Consul stores on first leadership when the agent config sets none. */
export function defaultCaConfiguration(clusterId: string): CAConfiguration {
  return {
    ClusterID: clusterId,
    Provider: "consul",
    Config: { LeafCertTTL: DEFAULT_LEAF_CERT_TTL, RotationPeriod: DEFAULT_ROTATION_PERIOD, IntermediateCertTTL: DEFAULT_INTERMEDIATE_CERT_TTL },
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** Go's `time.Time` JSON form for an epoch-ms instant: RFC 3339 in UTC, fractional seconds only when non-zero. */
export function formatRfc3339(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.replace(/\.(\d*?)0*Z$/, (_m, frac: string) => (frac ? `.${frac}Z` : "Z"));
}

/** Bytes (or lower-case hex) as lower-case colon-separated hex, Consul's `connect.HexString`. */
export function colonHex(bytes: Uint8Array | string): string {
  const hex = typeof bytes === "string" ? bytes : Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return (hex.match(/../g) ?? []).join(":");
}
