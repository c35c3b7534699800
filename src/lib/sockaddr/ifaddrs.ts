/**
 * go-sockaddr's IfAddrs operations (ifaddrs.go, ifaddr.go, ifattr.go in hashicorp/go-sockaddr) over a
 * SockaddrHost: the Get* sources, include/exclude, sort, unique, limit, offset, attr, join and math, with
 * go-sockaddr's results and error texts, quirks included (a `|` list in "network", "rfc" or "type"
 * collects matches once per alternative; flags mixing interface bits and address traits match on either).
 * Every function throws SockaddrError where go-sockaddr returns an error.
 */
import { FLAG_ORDER, type HostInterface, type InterfaceFlag, type SockaddrHost } from "./host.ts";
import { broadcastOf, containsNetwork, formatAddr, ipAttr, ipPredicates, maskOf, networkOf, parseSockIp, sockIpString, widthOf, type SockIp } from "./ip.ts";
import { FORWARDING_BLACKLIST, isRfc, rfcNetworks } from "./rfc.ts";

export class SockaddrError extends Error {}

/** One address of one interface (go-sockaddr's IfAddr). */
export interface IfAddr {
  readonly ip: SockIp;
  readonly iface: HostInterface;
}
export type IfAddrs = readonly IfAddr[];

const fail = (message: string): never => {
  throw new SockaddrError(message);
};

const FLAG_BITS: Readonly<Record<InterfaceFlag, number>> = { up: 1, broadcast: 2, loopback: 4, pointtopoint: 8, multicast: 16, running: 32 };
const flagBits = (iface: HostInterface) => iface.flags.reduce((bits, f) => bits | FLAG_BITS[f], 0);

/** Go's net.Flags.String(): the set flags joined by "|", "0" for none. */
export function flagsString(iface: HostInterface): string {
  const names = FLAG_ORDER.filter((f) => iface.flags.includes(f));
  return names.length ? names.join("|") : "0";
}

/** go-sockaddr's IfAddr.String(): `<sockaddr> {index mtu name mac flags}` (Go's %v of net.Interface). */
export function ifAddrString(a: IfAddr): string {
  return `${sockIpString(a.ip)} {${a.iface.index} ${a.iface.mtu ?? 0} ${a.iface.name} ${a.iface.mac ?? ""} ${flagsString(a.iface)}}`;
}

/** GetAllInterfaces: every address of every interface, in the host's order. */
export function allInterfaces(host: SockaddrHost): IfAddr[] {
  return host.interfaces.flatMap((iface) =>
    iface.addresses.map((text) => ({ ip: parseSockIp(text) ?? fail(`unable to create an IP address from ${JSON.stringify(text)}`), iface })),
  );
}

/** GetDefaultInterfaces: the addresses of the interface with the default route; an error when there is none. */
export function defaultInterfaces(host: SockaddrHost): IfAddr[] {
  if (host.defaultInterface === undefined) fail("no default interface found");
  return allInterfaces(host).filter((a) => a.iface.name === host.defaultInterface);
}

type Cmp = (p: IfAddr, q: IfAddr) => number;

/** Go's sort.Sort over go-sockaddr's multi-key Less; for up to 12 items Go's pdqsort is this insertion sort. */
function sortBy(list: IfAddrs, cmps: readonly Cmp[]): IfAddr[] {
  const out = [...list];
  const less = (p: IfAddr, q: IfAddr) => {
    for (let k = 0; k < cmps.length - 1; k++) {
      const x = cmps[k]!(p, q);
      if (x !== 0) return x < 0;
    }
    return cmps[cmps.length - 1]!(p, q) < 0;
  };
  for (let i = 1; i < out.length; i++) {
    for (let j = i; j > 0 && less(out[j]!, out[j - 1]!); j--) [out[j], out[j - 1]] = [out[j - 1]!, out[j]!];
  }
  return out;
}

const sign = (a: bigint | number, b: bigint | number) => (a < b ? -1 : a > b ? 1 : 0);
const typeRank = (a: IfAddr) => (a.ip.family === 4 ? 2 : 4);
const inRfc6890 = (a: IfAddr) => isRfc(6890, a.ip);

function sortKeys(host: SockaddrHost): Readonly<Record<string, Cmp>> {
  const def = host.defaultInterface;
  return {
    address: (p, q) => (p.ip.family === q.ip.family ? sign(p.ip.addr, q.ip.addr) : 0),
    default: (p, q) => (def === undefined ? 0 : sign(p.iface.name === def ? 0 : 1, q.iface.name === def ? 0 : 1)),
    name: (p, q) => (p.iface.name < q.iface.name ? -1 : p.iface.name > q.iface.name ? 1 : 0),
    port: () => 0,
    // go-sockaddr's CmpRFC: against another family only the receiver's membership counts.
    private: (p, q) => (p.ip.family !== q.ip.family ? (inRfc6890(p) ? -1 : 0) : sign(inRfc6890(p) ? 0 : 1, inRfc6890(q) ? 0 : 1)),
    size: (p, q) => (p.ip.family === q.ip.family ? sign(p.ip.prefix, q.ip.prefix) : 0),
    type: (p, q) => sign(typeRank(p), typeRank(q)),
  };
}

/** `sort "<clauses>"`: comma-separated keys, each optionally `+` (ascending) or `-` (descending). */
export function sortIfBy(host: SockaddrHost, selector: string, list: IfAddrs): IfAddr[] {
  const keys = sortKeys(host);
  const cmps = selector.split(",").map((clause): Cmp => {
    const c = clause.trim().toLowerCase();
    const name = c.replace(/^[+-]/, "");
    const cmp = Object.hasOwn(keys, name) ? keys[name] : undefined;
    if (!cmp) return fail(`unknown sort type: ${JSON.stringify(clause)}`);
    return c.startsWith("-") ? (p, q) => -cmp(p, q) : cmp;
  });
  return sortBy(list, cmps);
}

type Split = [matched: IfAddr[], rest: IfAddr[]];

function partition(list: IfAddrs, test: (a: IfAddr) => boolean): Split {
  const out: Split = [[], []];
  for (const a of list) out[test(a) ? 0 : 1].push(a);
  return out;
}

/** Go's regexp syntax as far as JavaScript shares it; a leading `(?i)` becomes the i flag. */
function goRegexp(what: string, pattern: string): RegExp {
  const insensitive = pattern.startsWith("(?i)");
  try {
    return new RegExp(insensitive ? pattern.slice(4) : pattern, insensitive ? "i" : "");
  } catch (err) {
    return fail(`unable to compile ${what} regexp ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}

function byFlags(param: string, list: IfAddrs): Split {
  let mask = 0, checkFlags = false, checkAttrs = false;
  const want = new Set<string>();
  for (const name of param.toLowerCase().split("|")) {
    switch (name) {
      case "broadcast": case "point-to-point": case "up":
        checkFlags = true;
        mask |= name === "point-to-point" ? FLAG_BITS.pointtopoint : FLAG_BITS[name];
        break;
      case "down": // go-sockaddr clears the up bit of an empty mask: "down" matches every interface
        checkFlags = true;
        mask &= ~FLAG_BITS.up;
        break;
      case "loopback": case "multicast":
        checkFlags = checkAttrs = true;
        mask |= FLAG_BITS[name];
        want.add(name);
        break;
      case "forwardable": case "global unicast": case "interface-local multicast": case "link-local multicast": case "link-local unicast": case "unspecified":
        checkAttrs = true;
        want.add(name);
        break;
      default:
        fail(`unknown interface flag: ${JSON.stringify(name)}`);
    }
  }
  return partition(list, (a) => {
    if (checkFlags && (flagBits(a.iface) & mask) === mask) return true;
    if (!checkAttrs) return false;
    const p = ipPredicates(a.ip);
    return (want.has("global unicast") && p.globalUnicast) || (want.has("interface-local multicast") && p.interfaceLocalMulticast) ||
      (want.has("link-local multicast") && p.linkLocalMulticast) || (want.has("link-local unicast") && p.linkLocalUnicast) ||
      (want.has("loopback") && p.loopback) || (want.has("multicast") && p.multicast) || (want.has("unspecified") && p.unspecified) ||
      (want.has("forwardable") && !isRfc(FORWARDING_BLACKLIST, a.ip));
  });
}

/** Runs `one` for each `|`-separated alternative and concatenates the splits (go-sockaddr's IfByRFCs/IfByNetwork). */
function eachAlternative(param: string, list: IfAddrs, one: (alt: string, list: IfAddrs) => Split): Split {
  const out: Split = [[], []];
  for (const alt of param.split("|")) {
    const [m, r] = one(alt, list);
    out[0].push(...m);
    out[1].push(...r);
  }
  return out;
}

function byRfc(alt: string, list: IfAddrs): Split {
  if (!/^\d+$/.test(alt) || Number(alt) > 0xffffffff) fail(`unable to lookup RFC number ${JSON.stringify(alt)}: unable to parse RFC number ${JSON.stringify(alt)}`);
  if (!rfcNetworks(Number(alt))) fail(`unable to lookup RFC number ${JSON.stringify(alt)}: unsupported RFC ${Number(alt)}`);
  return partition(list, (a) => isRfc(Number(alt), a.ip));
}

function byType(param: string, list: IfAddrs): Split {
  const types = param.toLowerCase().split("|");
  for (const t of types) if (!["ip", "ipv4", "ipv6", "unix"].includes(t)) fail(`unsupported type ${JSON.stringify(t)} ${JSON.stringify(param)}`);
  const out: Split = [[], []];
  // go-sockaddr's IfByType sorts each address once per listed type.
  for (const a of list) for (const t of types) out[t === "ip" || t === `ipv${a.ip.family}` ? 0 : 1].push(a);
  return out;
}

function bySize(param: string, list: IfAddrs): Split {
  if (!/^\d+$/.test(param)) fail(`invalid exclude size argument (${JSON.stringify(param)}): strconv.ParseUint: parsing ${JSON.stringify(param)}: invalid syntax`);
  const size = Number(param);
  for (const a of list) if (size > widthOf(a.ip.family)) fail(`mask size out of bounds for IPv${a.ip.family} address: ${size}`);
  return partition(list, (a) => a.ip.prefix === size);
}

function select(selector: string, param: string, list: IfAddrs, verb: "include" | "exclude"): Split {
  switch (selector.toLowerCase()) {
    case "address": {
      const re = goRegexp("address", param);
      return partition(list, (a) => re.test(sockIpString(a.ip)));
    }
    case "flag": case "flags":
      return byFlags(param, list);
    case "name": {
      const re = goRegexp("name", param);
      return partition(list, (a) => re.test(a.iface.name));
    }
    case "network":
      return eachAlternative(param, list, (alt, l) => {
        const net = parseSockIp(alt) ?? fail(`unable to create an IP address from ${JSON.stringify(alt)}: invalid IPAddr ${alt}`);
        return partition(l, (a) => containsNetwork(net, a.ip));
      });
    case "port": {
      const re = goRegexp("port", param);
      return partition(list, () => re.test("0"));
    }
    case "rfc": case "rfcs":
      return eachAlternative(param, list, byRfc);
    case "size":
      return bySize(param, list);
    case "type":
      return byType(param, list);
  }
  return fail(`invalid ${verb} selector ${JSON.stringify(selector)}`);
}

export const includeIfs = (selector: string, param: string, list: IfAddrs): IfAddr[] => select(selector, param, list, "include")[0];
export const excludeIfs = (selector: string, param: string, list: IfAddrs): IfAddr[] => select(selector, param, list, "exclude")[1];

/** `unique "address"|"name"`: drops an entry equal to the one before it (the list is expected sorted). */
export function uniqueIfAddrsBy(selector: string, list: IfAddrs): IfAddr[] {
  const name = selector.toLowerCase();
  if (name !== "address" && name !== "name") fail(`unsupported unique constraint ${JSON.stringify(selector)}`);
  let last = "";
  return list.filter((a) => {
    const key = name === "address" ? sockIpString(a.ip) : a.iface.name;
    if (last !== "" && last === key) return false;
    last = key;
    return true;
  });
}

export const limitIfAddrs = (n: number, list: IfAddrs): IfAddr[] => list.slice(0, n);

/** `offset N`: skips N entries, or keeps the last -N; beyond the list's length is an error. */
export function offsetIfAddrs(off: number, list: IfAddrs): IfAddr[] {
  const n = Math.abs(off);
  if (n > list.length) fail(`unable to seek past the end of the interface array: offset (${off}) exceeds the number of interfaces (${list.length})`);
  return off < 0 ? list.slice(list.length - n) : list.slice(n);
}

/** One attribute of one address: the interface's `name` and `flags`, then the IP's (go-sockaddr's IfAddr.Attr). */
export function ifAttr(selector: string, a: IfAddr): string {
  const name = selector.toLowerCase();
  if (name === "name" && a.iface.name !== "") return a.iface.name;
  if (name === "flags") return flagsString(a.iface);
  return ipAttr(a.ip, name) ?? fail(`unsupported attribute name ${JSON.stringify(name)}`);
}

/** `attr`: the attribute of the first entry, "" for an empty list. */
export const ifAttrs = (selector: string, list: IfAddrs): string => (list.length ? ifAttr(selector, list[0]!) : "");

/** `join`: the attribute of every entry joined by `sep`. */
export const joinIfAddrs = (selector: string, sep: string, list: IfAddrs): string => list.map((a) => ifAttr(selector, a)).join(sep);

/**
 * `math "address"|"network"|"mask" "<value>"` on every entry (go-sockaddr's IfAddrMath): address moves the
 * address (wrapping at the family's width), network offsets inside the network (negative from its end),
 * mask applies a shorter prefix.
 */
export function ifAddrsMath(operation: string, value: string, list: IfAddrs): IfAddr[] {
  return list.map((a) => {
    try {
      return { ...a, ip: ipMath(operation.toLowerCase(), value, a.ip) };
    } catch (err) {
      return fail(`unable to perform an IPMath operation on ${ifAddrString(a)}: ${(err as Error).message}`);
    }
  });
}

function ipMath(op: string, value: string, ip: SockIp): SockIp {
  const width = BigInt(widthOf(ip.family));
  const all = (1n << width) - 1n;
  const signed = (): bigint => {
    if (!/^\s*[+-]/.test(value)) throw new Error(`sign (+/-) is required for operation ${JSON.stringify(op)}`);
    if (!/^[+-]\d+$/.test(value)) throw new Error(`unable to convert ${JSON.stringify(value)} to int for operation ${JSON.stringify(op)}`);
    return BigInt(value);
  };
  switch (op) {
    case "address":
      return { ...ip, addr: (ip.addr + signed()) & all };
    case "network": {
      const i = signed();
      const host = all ^ maskOf(ip);
      // Positive: from the network address up; negative: down from the network's last address.
      const addr = i >= 0n ? networkOf(ip) | (i & host) : broadcastOf(ip) - ((-i - 1n) & host);
      return { ...ip, addr: addr & all };
    }
    case "mask": {
      if (!/^\d+$/.test(value)) throw new Error(`unable to convert ${JSON.stringify(value)} to int for operation ${JSON.stringify(op)}`);
      const bits = Number(value);
      if (bits > widthOf(ip.family)) throw new Error(`parameter for operation "mask" on ipv${ip.family} addresses must be between 0 and ${ip.family === 4 ? 32 : 64}`);
      const masked = { ...ip, prefix: bits };
      return { family: ip.family, addr: networkOf(masked), prefix: Math.min(bits, ip.prefix) };
    }
  }
  throw new Error(`unsupported math operation: ${JSON.stringify(op)}`);
}

/** The address text of an entry (go-sockaddr: `ip.NetIP().String()`). */
export const addressOf = (a: IfAddr): string => formatAddr(a.ip.family, a.ip.addr);
