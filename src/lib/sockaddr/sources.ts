/**
 * go-sockaddr's composite helpers (ifaddrs.go GetPrivateInterfaces/GetPublicInterfaces, ifaddr.go
 * GetPrivateIP(s), GetPublicIP(s), GetInterfaceIP(s) in hashicorp/go-sockaddr), step for step:
 *
 * - Get{Private,Public}Interfaces: IP addresses that are forwardable, on an interface that is up, sorted
 *   default-route interface first, then IPv4 before IPv6, then larger networks first; then those inside
 *   (private) or outside (public) RFC 6890. The default route only orders: a host without one still has
 *   private addresses.
 * - Get{Private,Public}IP: the first of those; "" when there is none.
 * - GetPrivateIPs: every RFC 6890 address that is forwardable, up or not, default route or not;
 *   GetPublicIPs: every address outside RFC 6890. Space-separated.
 * - GetInterfaceIP "re": the first forwardable address of the interfaces whose name matches the regexp
 *   (so never a loopback or link-local address: `GetInterfaceIP "lo"` gives ""); GetInterfaceIPs "re":
 *   all their addresses, forwardable or not.
 */
import type { SockaddrHost } from "./host.ts";
import { addressOf, allInterfaces, excludeIfs, includeIfs, sortIfBy, type IfAddr, type IfAddrs } from "./ifaddrs.ts";
import { FORWARDING_BLACKLIST } from "./rfc.ts";

function upForwardable(host: SockaddrHost): IfAddr[] {
  const up = includeIfs("flags", "up", includeIfs("flags", "forwardable", includeIfs("type", "ip", allInterfaces(host))));
  return sortIfBy(host, "default,type,size", up);
}

export const privateInterfaces = (host: SockaddrHost): IfAddr[] => includeIfs("rfc", "6890", upForwardable(host));
export const publicInterfaces = (host: SockaddrHost): IfAddr[] => excludeIfs("rfc", "6890", upForwardable(host));

const first = (list: IfAddrs): string => (list.length ? addressOf(list[0]!) : "");
const joined = (list: IfAddrs): string => list.map(addressOf).join(" ");

export const privateIp = (host: SockaddrHost): string => first(privateInterfaces(host));
export const publicIp = (host: SockaddrHost): string => first(publicInterfaces(host));

function byTypeAndSize(host: SockaddrHost): IfAddr[] {
  return sortIfBy(host, "type,size", includeIfs("type", "ip", allInterfaces(host)));
}

export function privateIps(host: SockaddrHost): string {
  return joined(excludeIfs("rfc", String(FORWARDING_BLACKLIST), includeIfs("rfc", "6890", byTypeAndSize(host))));
}

export const publicIps = (host: SockaddrHost): string => joined(excludeIfs("rfc", "6890", byTypeAndSize(host)));

export function interfaceIp(host: SockaddrHost, nameRe: string): string {
  const named = includeIfs("flags", "forwardable", includeIfs("name", nameRe, allInterfaces(host)));
  return first(sortIfBy(host, "+type,+size", named));
}

export const interfaceIps = (host: SockaddrHost, nameRe: string): string => joined(sortIfBy(host, "+type,+size", includeIfs("name", nameRe, allInterfaces(host))));
