/**
 * The host's network interfaces and default route, as go-sockaddr templates see them (Go's
 * net.Interfaces() and go-sockaddr's route_info_linux.go). Interfaces and addresses come from node:os
 * networkInterfaces() (Bun, Deno and Node); on Linux, each interface's index and flags from
 * /sys/class/net/<name>/{ifindex,flags,operstate,mtu} and the default route from /proc/net/route (and
 * /proc/net/ipv6_route on a host with no IPv4 default route, where go-sockaddr, which asks `ip route`
 * for IPv4 only, would find none). Elsewhere flags are inferred: up, and loopback for internal
 * interfaces, broadcast and multicast for the others; no default route is known.
 *
 * Limits, from networkInterfaces(): only interfaces that are up and running, with an address, are
 * listed (Go also lists down interfaces), and IPv6 addresses carry no zone.
 */
import { readFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import type { HostInterface, InterfaceFlag, SockaddrHost } from "../lib/index.ts";

/** One address as node:os reports it (older runtimes give the family as a number). */
export interface OsInterfaceAddress {
  readonly address: string;
  readonly netmask: string;
  readonly family: string | number;
  readonly mac?: string;
  readonly internal: boolean;
  readonly cidr?: string | null;
}

/** Where readHostNetwork reads from; tests pass their own. */
export interface HostNetworkSources {
  readonly interfaces: () => Readonly<Record<string, readonly OsInterfaceAddress[] | undefined>>;
  /** A file's text, or undefined when it cannot be read (another OS, no permission). */
  readonly readText: (path: string) => string | undefined;
}

const systemSources: HostNetworkSources = {
  interfaces: () => networkInterfaces() as Record<string, OsInterfaceAddress[]>,
  readText: (path) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
};

/** Linux's IFF_* bits (include/uapi/linux/if.h) that Go's net.Flags carry. */
const IFF: readonly [number, InterfaceFlag][] = [[0x1, "up"], [0x2, "broadcast"], [0x8, "loopback"], [0x10, "pointtopoint"], [0x1000, "multicast"]];

/** Go's net.Flags from /sys/class/net/<if>/flags ("0x1003") and operstate ("up", "unknown" count as running). */
export function linuxFlags(flagsText: string, operstate: string | undefined): InterfaceFlag[] {
  const bits = Number.parseInt(flagsText.trim(), 16);
  const flags = IFF.filter(([bit]) => (bits & bit) !== 0).map(([, f]) => f);
  const state = operstate?.trim();
  if ((bits & 0x1) !== 0 && (state === "up" || state === "unknown")) flags.push("running");
  return flags;
}

const RTF_UP_GATEWAY = 0x3;

/**
 * The interface of the default route: /proc/net/route's up gateway route to 0.0.0.0/0 with the lowest
 * metric, else /proc/net/ipv6_route's to ::/0 (not on lo, where the kernel parks unreachable routes).
 */
export function defaultRouteInterface(route: string | undefined, ipv6Route: string | undefined): string | undefined {
  let best: { name: string; metric: number } | undefined;
  for (const line of (route ?? "").split("\n").slice(1)) {
    const [name, dest, , flags, , , metric, mask] = line.trim().split(/\s+/);
    if (!name || dest !== "00000000" || mask !== "00000000" || (Number.parseInt(flags!, 16) & RTF_UP_GATEWAY) !== RTF_UP_GATEWAY) continue;
    const m = Number(metric);
    if (!best || m < best.metric) best = { name, metric: m };
  }
  if (best) return best.name;
  for (const line of (ipv6Route ?? "").split("\n")) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !/^0{32}$/.test(f[0]!) || f[1] !== "00" || f[9] === "lo" || (Number.parseInt(f[8]!, 16) & RTF_UP_GATEWAY) !== RTF_UP_GATEWAY) continue;
    const m = Number.parseInt(f[5]!, 16);
    if (!best || m < best.metric) best = { name: f[9]!, metric: m };
  }
  return best?.name;
}

/** Prefix length of a dotted or colon netmask. */
function prefixOf(netmask: string): number {
  const groups = netmask.includes(":") ? netmask.split(":").map((g) => Number.parseInt(g || "0", 16)) : netmask.split(".").map(Number);
  const width = netmask.includes(":") ? 16 : 8;
  let bits = 0;
  for (const g of groups) bits += g.toString(2).padStart(width, "0").replace(/0+$/, "").length;
  return bits;
}

function addressText(a: OsInterfaceAddress): string {
  if (a.cidr) return a.cidr;
  return `${a.address.replace(/%.*$/, "")}/${prefixOf(a.netmask)}`;
}

const isV4 = (a: OsInterfaceAddress) => a.family === "IPv4" || a.family === 4;

/**
 * Reads the host's interfaces and default route. Throws when the runtime refuses to list interfaces
 * (Deno without --allow-sys): callers name the setting that needed them.
 */
export function readHostNetwork(sources: HostNetworkSources = systemSources): SockaddrHost {
  const listed = Object.entries(sources.interfaces()).filter(([, addrs]) => addrs && addrs.length > 0);
  const interfaces: HostInterface[] = listed.map(([name, addrs], position) => {
    const sys = (file: string) => sources.readText(`/sys/class/net/${name}/${file}`);
    const flagsText = sys("flags");
    const internal = addrs!.some((a) => a.internal);
    const ordered = [...addrs!.filter(isV4), ...addrs!.filter((a) => !isV4(a))];
    const mac = addrs!.find((a) => a.mac)?.mac ?? "";
    const index = Number(sys("ifindex")?.trim());
    const mtu = Number(sys("mtu")?.trim());
    return {
      name,
      index: Number.isInteger(index) && index > 0 ? index : position + 1,
      flags: flagsText !== undefined ? linuxFlags(flagsText, sys("operstate")) : internal ? ["up", "loopback", "running"] : ["up", "broadcast", "multicast", "running"],
      addresses: ordered.map(addressText),
      mac: mac === "00:00:00:00:00:00" ? "" : mac,
      ...(Number.isInteger(mtu) && mtu > 0 ? { mtu } : {}),
    };
  });
  interfaces.sort((a, b) => a.index - b.index);
  const defaultInterface = defaultRouteInterface(sources.readText("/proc/net/route"), sources.readText("/proc/net/ipv6_route"));
  return { interfaces, ...(defaultInterface !== undefined ? { defaultInterface } : {}) };
}
