/**
 * The addresses of `causeway connect envoy -gateway=mesh -register` (Consul 1.8's ServiceAddressValue and
 * ServiceAddressMapValue in command/connect/envoy/flags.go, and canBind in envoy.go): `ip:port` values
 * with Go's net.SplitHostPort and strconv.Atoi errors, the 8443 default, and whether an address belongs
 * to this host. Pure, except `localInterfaceIps` and the default host view of `parseServiceAddress`,
 * which read the host's interfaces.
 */
import { networkInterfaces } from "node:os";
import { emptyTemplateHint, evaluateSockaddrTemplate, formatIp, parseIp, type SockaddrHost } from "../../../lib/index.ts";
import { readHostNetwork } from "../../../platform/index.ts";

/** Consul's defaultGatewayPort: the port of a gateway registered without one. */
export const DEFAULT_GATEWAY_PORT = 8443;

/** An address and port as the agent API carries them (Consul's api.ServiceAddress). */
export interface ServiceAddress {
  readonly Address: string;
  readonly Port: number;
}

/** Go's net.SplitHostPort: host and port text (either may be empty); throws Go's AddrError text. */
export function goSplitHostPort(hostport: string): { host: string; port: string } {
  const fail = (why: string) => new Error(`address ${hostport}: ${why}`);
  const i = hostport.lastIndexOf(":");
  if (i < 0) throw fail("missing port in address");
  let host: string;
  let j = 0, k = 0;
  if (hostport.startsWith("[")) {
    const end = hostport.indexOf("]");
    if (end < 0) throw fail("missing ']' in address");
    if (end + 1 === hostport.length) throw fail("missing port in address");
    if (end + 1 !== i) throw fail(hostport[end + 1] === ":" ? "too many colons in address" : "missing port in address");
    host = hostport.slice(1, end);
    j = 1;
    k = end + 1;
  } else {
    host = hostport.slice(0, i);
    if (host.includes(":")) throw fail("too many colons in address");
  }
  if (hostport.slice(j).includes("[")) throw fail("unexpected '[' in address");
  if (hostport.slice(k).includes("]")) throw fail("unexpected ']' in address");
  return { host, port: hostport.slice(i + 1) };
}

/** Go's strconv.Atoi for a port; throws its error text. */
function atoi(text: string): number {
  if (!/^[+-]?\d+$/.test(text)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(text)}: value out of range`);
  return n;
}

/**
 * Parses an `-address`, `-wan-address` or `-bind-address` value: `<host>:<port>`, `[<ipv6>]:<port>`, or
 * `<host>:` for the default port 8443 (Go's SplitHostPort gives an empty port there). As Consul does, a
 * go-sockaddr template in the value (`{{ GetPrivateIP }}:8443`) is evaluated first, over `readHost`
 * (this host's interfaces by default), and the result split. Throws Consul's
 * `Error parsing address "<v>": <template or SplitHostPort error>` and `Error parsing port "<p>": <Atoi
 * error>`. Stricter than Consul: a template that gives no address (Consul would register the agent's)
 * or several, and a port outside 0-65535, which no listener can use (Go's Atoi takes any int).
 */
export function parseServiceAddress(raw: string, readHost: () => SockaddrHost = readHostNetwork): ServiceAddress {
  const template = raw.includes("{{");
  let text = raw;
  if (template) {
    let host: SockaddrHost;
    try {
      host = readHost();
    } catch (err) {
      throw new Error(`Error parsing address ${JSON.stringify(raw)}: reading the host's network interfaces failed: ${(err as Error).message}`);
    }
    try {
      text = evaluateSockaddrTemplate(raw, host);
    } catch (err) {
      throw new Error(`Error parsing address ${JSON.stringify(raw)}: ${(err as Error).message}`);
    }
  }
  let hp: { host: string; port: string };
  try {
    hp = goSplitHostPort(text);
  } catch (err) {
    throw new Error(`Error parsing address ${JSON.stringify(text)}: ${(err as Error).message}${template ? ` (from ${JSON.stringify(raw)})` : ""}`);
  }
  if (template && hp.host === "") throw new Error(`Error parsing address ${JSON.stringify(raw)}: the template gave no address${emptyTemplateHint(raw)}`);
  if (template && /\s/.test(hp.host)) throw new Error(`Error parsing address ${JSON.stringify(raw)}: the template gave several addresses (${hp.host}); give one`);
  let port = DEFAULT_GATEWAY_PORT;
  if (hp.port !== "") {
    try {
      port = atoi(hp.port);
    } catch (err) {
      throw new Error(`Error parsing port ${JSON.stringify(hp.port)}: ${(err as Error).message}`);
    }
    if (port < 0 || port > 65535) throw new Error(`Error parsing port ${JSON.stringify(hp.port)}: must be between 0 and 65535`);
  }
  return { Address: hp.host, Port: port };
}

/**
 * One `-bind-address <name>=<ip>:<port>` value (Consul's ServiceAddressMapValue.Set); throws
 * `Missing "=" in argument: <v>` or the address error.
 */
export function parseBindAddress(raw: string, readHost: () => SockaddrHost = readHostNetwork): { name: string; address: ServiceAddress } {
  const eq = raw.indexOf("=");
  if (eq < 0) throw new Error(`Missing "=" in argument: ${raw}`);
  return { name: raw.slice(0, eq), address: parseServiceAddress(raw.slice(eq + 1), readHost) };
}

/** An IP in Go's net.IP.String() form (IPv4-mapped IPv6 as dotted IPv4), or undefined if `text` is not an IP. */
function canonicalIp(text: string): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = parseIp(text);
  } catch {
    return undefined;
  }
  const mapped = bytes.length === 16 && bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return formatIp(mapped ? bytes.slice(12) : bytes);
}

/**
 * Consul's canBind: `address` is an IP literal that one of `hostIps` (the host's interface addresses)
 * equals. An empty address or a host name is never bindable.
 */
export function canBind(address: string, hostIps: readonly string[]): boolean {
  const ip = canonicalIp(address);
  if (ip === undefined) return false;
  return hostIps.some((h) => canonicalIp(h.replace(/%.*$/, "")) === ip);
}

/** The addresses of this host's network interfaces (Go's net.InterfaceAddrs), loopback included. */
export function localInterfaceIps(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

/** Go's net.JoinHostPort: brackets around an IPv6 host. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
