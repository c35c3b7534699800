/**
 * How `causeway connect envoy` reads its addresses (Consul 1.8's templateArgs in
 * command/connect/envoy/envoy.go): the agent's gRPC address with its TLS decision, and the admin bind
 * address. Pure; the command resolves host names and reads files.
 */
import { isIP } from "node:net";
import { splitHostPort } from "../../../platform/index.ts";
import type { AgentGrpcTarget } from "./envoy_bootstrap.ts";

/** What decides the gRPC target and whether Envoy uses TLS to reach it. */
export interface GrpcAddressInput {
  /** `-grpc-addr`, else CONSUL_GRPC_ADDR, else `localhost:<port from /v1/agent/self>`. */
  readonly grpcAddr: string;
  /** A CA file was given (`-ca-file` / CONSUL_CACERT): a unix socket then speaks TLS. */
  readonly caFileGiven: boolean;
  /** CONSUL_HTTP_SSL, consulted for an address without a scheme. */
  readonly httpSslEnv?: string;
  /** The HTTP API address is https, consulted for an address without a scheme. */
  readonly httpAddrIsHttps: boolean;
}

/** Go's strconv.ParseBool; undefined when not a boolean. */
function parseGoBool(s: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return false;
  return undefined;
}

/** host:port with a usable port; throws Go's SplitHostPort text. */
function hostPort(addr: string): { host: string; port: number } {
  const hp = splitHostPort(addr);
  if (hp.port < 1 || hp.port > 65535) throw new Error(`address ${addr}: invalid port`);
  return hp;
}

/**
 * The gRPC target and its TLS decision. `unix:///path` is a unix socket, with TLS when a CA file is
 * given (as later Consul versions do). `https://` means TLS and `http://` plaintext; an address without
 * a scheme uses TLS when CONSUL_HTTP_SSL is true, or when it is unset and the HTTP address is https
 * (Consul 1.8; unlike 1.8, an explicit `http://` stays plaintext, as Consul fixed later). An empty host
 * and `localhost` become 127.0.0.1 (Consul resolves names itself because Envoy resolves `localhost` to
 * `::1`, which a dev agent does not listen on); another host name is left to Envoy (LOGICAL_DNS).
 * Throws `Invalid Consul HTTP address: ...` (Consul's text) without a port.
 */
export function parseGrpcAddress(input: GrpcAddressInput): { target: AgentGrpcTarget; tls: boolean } {
  const addr = input.grpcAddr;
  if (addr.startsWith("unix://")) return { target: { kind: "unix", path: addr.slice("unix://".length) }, tls: input.caFileGiven };
  const lower = addr.toLowerCase();
  let tls: boolean;
  let rest = addr;
  if (lower.startsWith("https://")) {
    tls = true;
    rest = addr.slice("https://".length);
  } else if (lower.startsWith("http://")) {
    tls = false;
    rest = addr.slice("http://".length);
  } else {
    const ssl = input.httpSslEnv ? parseGoBool(input.httpSslEnv) : undefined;
    tls = ssl ?? input.httpAddrIsHttps;
  }
  let hp: { host: string; port: number };
  try {
    hp = hostPort(rest.replace(/\/$/, ""));
  } catch (err) {
    throw new Error(`Invalid Consul HTTP address: ${(err as Error).message}`);
  }
  const host = hp.host === "" || hp.host.toLowerCase() === "localhost" ? "127.0.0.1" : hp.host;
  const target: AgentGrpcTarget = isIP(host) ? { kind: "ip", address: host, port: hp.port } : { kind: "dns", host, port: hp.port };
  return { target, tls };
}

/**
 * `-admin-bind` split into host and port. Envoy binds only IPs, so the command resolves a name; an
 * empty host and `localhost` are 127.0.0.1 here. Throws `Invalid Consul HTTP address: ...` (Consul's
 * text for this flag too) without a port.
 */
export function parseAdminBind(addr: string): { host: string; port: number; needsLookup: boolean } {
  let hp: { host: string; port: number };
  try {
    hp = hostPort(addr);
  } catch (err) {
    throw new Error(`Invalid Consul HTTP address: ${(err as Error).message}`);
  }
  const host = hp.host === "" || hp.host.toLowerCase() === "localhost" ? "127.0.0.1" : hp.host;
  return { host, port: hp.port, needsLookup: isIP(host) === 0 };
}

/**
 * Consul's LookupProxyIDForSidecar (command/connect/proxy): the one `connect-proxy` on the local agent
 * whose `Proxy.DestinationServiceID` equals `sidecarFor` (case-insensitively). `services` is the body of
 * GET /v1/agent/services. Throws Consul's errors for none and for several (IDs sorted, for a stable
 * message; Go lists them in map order).
 */
export function sidecarProxyId(services: unknown, sidecarFor: string): string {
  const ids: string[] = [];
  const all = typeof services === "object" && services !== null ? Object.values(services as Record<string, unknown>) : [];
  for (const svc of all) {
    const s = svc as { Kind?: unknown; ID?: unknown; Proxy?: { DestinationServiceID?: unknown } | null };
    if (s.Kind !== "connect-proxy" || !s.Proxy || typeof s.ID !== "string") continue;
    const dest = s.Proxy.DestinationServiceID;
    if (typeof dest === "string" && dest.toLowerCase() === sidecarFor.toLowerCase()) ids.push(s.ID);
  }
  ids.sort();
  if (ids.length === 0) throw new Error(`No sidecar proxy registered for ${sidecarFor}`);
  if (ids.length > 1) {
    throw new Error(`More than one sidecar proxy registered for ${sidecarFor}.\n    Start proxy with -proxy-id and one of the following IDs: ${ids.join(", ")}`);
  }
  return ids[0]!;
}
