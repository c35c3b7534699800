/**
 * go-sockaddr's IPv4Addr and IPv6Addr (ipv4addr.go, ipv6addr.go, ipaddr.go in hashicorp/go-sockaddr): an
 * address with its prefix length, network containment, Go's net.IP predicates, and the attributes that
 * `attr` and `join` read. Addresses are bigints so one set of operations serves both families.
 */
import { formatIp, parseIp } from "../x509_der.ts";

/** An interface address: family, address bits, prefix length (go-sockaddr keeps the mask beside the address). */
export interface SockIp {
  readonly family: 4 | 6;
  readonly addr: bigint;
  readonly prefix: number;
}

export const widthOf = (family: 4 | 6): number => (family === 4 ? 32 : 128);
const allOnes = (family: 4 | 6): bigint => (1n << BigInt(widthOf(family))) - 1n;

export function maskOf(ip: SockIp): bigint {
  return allOnes(ip.family) ^ ((1n << BigInt(widthOf(ip.family) - ip.prefix)) - 1n);
}
export const networkOf = (ip: SockIp): bigint => ip.addr & maskOf(ip);
export const broadcastOf = (ip: SockIp): bigint => networkOf(ip) | (allOnes(ip.family) ^ maskOf(ip));

function bytesToBigint(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

function bigintToBytes(v: bigint, family: 4 | 6): Uint8Array {
  const out = new Uint8Array(family === 4 ? 4 : 16);
  for (let i = out.length - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `ipv6/n`; undefined when it is none of these. */
export function parseSockIp(text: string): SockIp | undefined {
  const slash = text.indexOf("/");
  const host = slash < 0 ? text : text.slice(0, slash);
  let bytes: Uint8Array;
  try {
    bytes = parseIp(host);
  } catch {
    return undefined;
  }
  const family = bytes.length === 4 ? 4 : 6;
  let prefix = widthOf(family);
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(p) || Number(p) > widthOf(family)) return undefined;
    prefix = Number(p);
  }
  return { family, addr: bytesToBigint(bytes), prefix };
}

/** The IPv4 address inside an IPv4 or IPv4-mapped IPv6 address (Go's net.IP.To4), else undefined. */
function to4(family: 4 | 6, addr: bigint): bigint | undefined {
  if (family === 4) return addr;
  return addr >> 32n === 0xffffn ? addr & 0xffffffffn : undefined;
}

/** Go's net.IP.String(): dotted IPv4 (IPv4-mapped IPv6 too), otherwise RFC 5952 IPv6. */
export function formatAddr(family: 4 | 6, addr: bigint): string {
  const v4 = to4(family, addr);
  return v4 !== undefined ? formatIp(bigintToBytes(v4, 4)) : formatIp(bigintToBytes(addr, 6));
}

/** go-sockaddr's String(): the address alone for a host prefix, else `address/prefix`. */
export function sockIpString(ip: SockIp): string {
  const a = formatAddr(ip.family, ip.addr);
  return ip.prefix === widthOf(ip.family) ? a : `${a}/${ip.prefix}`;
}

/** go-sockaddr's Contains: `inner`'s whole network (address and mask) lies inside `outer`'s; families must match. */
export function containsNetwork(outer: SockIp, inner: SockIp): boolean {
  return outer.family === inner.family && networkOf(outer) <= networkOf(inner) && broadcastOf(outer) >= broadcastOf(inner);
}

/** Go's net.IP predicates that IfByFlag asks about (net/ip.go). */
export function ipPredicates(ip: SockIp): {
  loopback: boolean; multicast: boolean; linkLocalUnicast: boolean; linkLocalMulticast: boolean; interfaceLocalMulticast: boolean; unspecified: boolean; globalUnicast: boolean;
} {
  const v4 = to4(ip.family, ip.addr);
  const top = (bits: number) => ip.addr >> BigInt(128 - bits);
  const loopback = v4 !== undefined ? v4 >> 24n === 127n : ip.addr === 1n;
  const multicast = v4 !== undefined ? v4 >> 28n === 0xen : top(8) === 0xffn;
  const linkLocalUnicast = v4 !== undefined ? v4 >> 16n === 0xa9fen : top(10) === 0x3fan;
  const linkLocalMulticast = v4 !== undefined ? v4 >> 8n === 0xe00000n : top(8) === 0xffn && (top(16) & 0x0fn) === 2n;
  const interfaceLocalMulticast = v4 === undefined && top(8) === 0xffn && (top(16) & 0x0fn) === 1n;
  const unspecified = v4 !== undefined ? v4 === 0n : ip.addr === 0n;
  const globalUnicast = !(v4 === 0xffffffffn) && !unspecified && !loopback && !multicast && !linkLocalUnicast;
  return { loopback, multicast, linkLocalUnicast, linkLocalMulticast, interfaceLocalMulticast, unspecified, globalUnicast };
}

const host = (family: 4 | 6, addr: bigint): SockIp => ({ family, addr, prefix: widthOf(family) });
const padded = (v: bigint, radix: number, width: number) => v.toString(radix).padStart(width, "0");

/**
 * The IP attributes of go-sockaddr's IPAddrAttr, IPv4AddrAttr and IPv6AddrAttr, and SockAddr's `string`
 * and `type`; undefined for a name none of them knows.
 */
export function ipAttr(ip: SockIp, name: string): string | undefined {
  const v4 = ip.family === 4;
  switch (name) {
    case "address":
      return formatAddr(ip.family, ip.addr);
    case "binary":
      return padded(ip.addr, 2, widthOf(ip.family));
    case "hex":
      return padded(ip.addr, 16, widthOf(ip.family) / 4);
    case "host":
      return sockIpString(host(ip.family, ip.addr));
    case "first_usable":
      return sockIpString(host(ip.family, networkOf(ip) + (v4 && ip.prefix < 31 ? 1n : 0n)));
    case "last_usable":
      return sockIpString(host(ip.family, broadcastOf(ip) - (v4 && ip.prefix < 31 ? 1n : 0n)));
    case "mask_bits":
      return String(ip.prefix);
    case "netmask":
      return formatAddr(ip.family, maskOf(ip));
    case "network":
      return formatAddr(ip.family, networkOf(ip));
    case "octets":
      return Array.from(bigintToBytes(ip.addr, ip.family)).join(" ");
    case "port":
      return "0";
    case "size":
      return String(1n << BigInt(widthOf(ip.family) - ip.prefix));
    case "broadcast":
      return v4 ? formatAddr(4, broadcastOf(ip)) : undefined;
    case "uint32":
      return v4 ? String(ip.addr) : undefined;
    case "uint128":
      return v4 ? undefined : String(ip.addr);
    case "string":
      return sockIpString(ip);
    case "type":
      return v4 ? "IPv4" : "IPv6";
  }
  return undefined;
}
