/**
 * Cluster IDs, trust domains and SPIFFE IDs as Consul 1.8 forms and reads them
 * (`agent/connect/uri.go`, `uri_service.go`, `uri_signing.go`; DESIGN.md section 5).
 */
import type { RandomBytes } from "../../lib/index.ts";

/** The default Consul domain that trust domains end in. */
export const TRUST_DOMAIN_SUFFIX = "consul";

/**
 * A new cluster ID: 16 random bytes formatted 8-4-4-4-12 in lower-case hex, like hashicorp/go-uuid's
 * `GenerateUUID` (which sets no version or variant bits).
 */
export function newClusterId(rng: RandomBytes): string {
  const b = rng.bytes(16);
  if (b.length !== 16) throw new Error("rng returned the wrong number of bytes");
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `<cluster-id>.consul` (`SpiffeIDSigning.Host()`). */
export function trustDomain(clusterId: string): string {
  if (clusterId === "") throw new Error("cluster ID is empty");
  return `${clusterId}.${TRUST_DOMAIN_SUFFIX}`;
}

/** `spiffe://<trust-domain>`: the URI SAN of a CA certificate (`SpiffeIDSigning.URI()`). */
export function spiffeSigningId(td: string): string {
  return `spiffe://${td}`;
}

/** The parts of a service identity. */
export interface SpiffeServiceParts {
  readonly trustDomain: string;
  /** Default "default". */
  readonly namespace?: string;
  readonly datacenter: string;
  readonly service: string;
}

/**
 * `spiffe://<td>/ns/<ns>/dc/<dc>/svc/<svc>`. Each segment is escaped like Go's `url.URL.String()` path
 * escaping (letters, digits, `-._~` and `$&+,;=:@` stay as they are), except that `/` is escaped
 * too so that the result always parses back. Throws on an empty datacenter or service.
 */
export function spiffeServiceId(p: SpiffeServiceParts): string {
  if (!p.datacenter || !p.service) throw new Error("a service SPIFFE ID needs a datacenter and a service");
  const ns = p.namespace || "default";
  return `spiffe://${p.trustDomain}/ns/${escapeSegment(ns)}/dc/${escapeSegment(p.datacenter)}/svc/${escapeSegment(p.service)}`;
}

/** A parsed SPIFFE ID: a service identity or a CA's signing identity. */
export type SpiffeId =
  | { readonly kind: "service"; readonly host: string; readonly namespace: string; readonly datacenter: string; readonly service: string }
  | { readonly kind: "signing"; readonly host: string; readonly clusterId: string; readonly domain: string };

const URI_RE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?[^#]*)?(?:#.*)?$/;
const SERVICE_PATH_RE = /^\/ns\/([^/]+)\/dc\/([^/]+)\/svc\/([^/]+)$/;

/**
 * Parses a certificate URI like `connect.ParseCertURIFromString`: scheme must be `spiffe`; a path
 * `/ns/<ns>/dc/<dc>/svc/<svc>` is a service (segments percent-decoded); an empty path with a host
 * `<cluster>.<domain>` is a signing ID. Throws an Error with Consul's messages otherwise.
 */
export function parseSpiffeId(uri: string): SpiffeId {
  const m = URI_RE.exec(uri);
  if (!m) throw new Error("SPIFFE ID is not in the expected format");
  if (m[1]!.toLowerCase() !== "spiffe") throw new Error("SPIFFE ID must have 'spiffe' scheme");
  const host = m[2]!;
  const path = m[3]!;
  const svc = SERVICE_PATH_RE.exec(path);
  if (svc) {
    return {
      kind: "service",
      host,
      namespace: unescapeSegment(svc[1]!, "namespace"),
      datacenter: unescapeSegment(svc[2]!, "datacenter"),
      service: unescapeSegment(svc[3]!, "service"),
    };
  }
  const dot = host.indexOf(".");
  if (path === "" && dot > 0) return { kind: "signing", host, clusterId: host.slice(0, dot), domain: host.slice(dot + 1) };
  throw new Error("SPIFFE ID is not in the expected format");
}

/**
 * Whether a CA with trust domain `td` may sign `id` (`SpiffeIDSigning.CanSign`): a service ID or a
 * signing ID in the same trust domain (host compared case-insensitively).
 */
export function canSign(td: string, id: SpiffeId): boolean {
  return id.host.toLowerCase() === td.toLowerCase();
}

function escapeSegment(s: string): string {
  return encodeURIComponent(s)
    .replace(/%(24|26|2B|2C|3B|3D|3A|40)/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function unescapeSegment(s: string, what: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new Error(`Invalid ${what}: invalid URL escape in "${s}"`);
  }
}
