/**
 * What a server tells of the datacenters it knows through the WAN pool (Consul 1.8 agent/router
 * GetDatacentersByDistance and GetDatacenterMaps, agent/consul/coordinate_endpoint.go ListDatacenters).
 * `datacentersByCoordinates` and `datacenterMaps` are pure; `wanCoordinates` reads a WAN pool for them.
 */
import { parseServer, type PoolMember } from "../membership/index.ts";
import { AREA_WAN, type DatacenterMap, type NetworkCoordinate } from "../model/index.ts";
import { computeDistanceMs } from "./near.ts";

/** One server of the WAN pool: its member name (`<node>.<dc>`), datacenter, status and cached coordinate. */
export interface WanServerCoordinate {
  readonly name: string;
  readonly datacenter: string;
  readonly status: string;
  readonly coordinate?: NetworkCoordinate;
}

/**
 * Consul's GetDatacentersByDistance: each datacenter's distance is the median (the upper one of an even
 * count, `rtts[len/2]`) of this server's estimated round-trip times to its servers; every server of the
 * local datacenter counts as 0, a server without a coordinate (or when `self` has none) as Infinity.
 * Sorted by name, then stably by distance. Servers that left are skipped; the local datacenter is always listed.
 */
export function datacentersByCoordinates(local: string, self: NetworkCoordinate | undefined, servers: readonly WanServerCoordinate[]): string[] {
  const rtts = new Map<string, number[]>([[local, []]]);
  for (const s of servers) {
    if (s.status === "left") continue;
    const xs = rtts.get(s.datacenter) ?? [];
    xs.push(s.datacenter === local ? 0 : computeDistanceMs(self, s.coordinate));
    rtts.set(s.datacenter, xs);
  }
  const median = (xs: number[]) => {
    if (xs.length === 0) return 0; // the local datacenter when this server is not (yet) in the pool
    const sorted = [...xs].sort((a, b) => a - b);
    return sorted[sorted.length >> 1]!;
  };
  const distance = new Map([...rtts].map(([dc, xs]) => [dc, median(xs)]));
  const byName = [...distance.keys()].sort();
  return byName
    .map((dc, i) => ({ dc, i, d: distance.get(dc)! }))
    .sort((a, b) => (a.d === b.d ? a.i - b.i : a.d < b.d ? -1 : 1))
    .map((x) => x.dc);
}

/**
 * Consul's ListDatacenters: per datacenter (by name), the servers that have a cached coordinate, by
 * node name with the `.<dc>` suffix stripped, in the "wan" area; a datacenter none of whose servers has
 * a coordinate is absent. Servers that left are skipped.
 */
export function datacenterMaps(servers: readonly WanServerCoordinate[]): DatacenterMap[] {
  const byDc = new Map<string, { Node: string; Segment: string; Coord: NetworkCoordinate }[]>();
  for (const s of servers) {
    if (s.status === "left" || !s.coordinate) continue;
    const suffix = `.${s.datacenter}`;
    const node = s.name.endsWith(suffix) ? s.name.slice(0, -suffix.length) : s.name;
    const list = byDc.get(s.datacenter) ?? [];
    list.push({ Node: node, Segment: "", Coord: s.coordinate });
    byDc.set(s.datacenter, list);
  }
  return [...byDc.keys()].sort().map((dc) => ({
    Datacenter: dc,
    AreaID: AREA_WAN,
    Coordinates: byDc.get(dc)!.sort((a, b) => (a.Node < b.Node ? -1 : a.Node > b.Node ? 1 : 0)),
  }));
}

/** What `wanCoordinates` reads of the WAN pool (src/membership's GossipPool has it). */
export interface WanPoolView {
  members(): readonly PoolMember[];
  /** This server's WAN coordinate; undefined when coordinates are disabled. */
  coordinate(): NetworkCoordinate | undefined;
  cachedCoordinate(name: string): NetworkCoordinate | undefined;
}

/** The servers of a WAN pool with their cached coordinates (members that are not Consul servers are skipped). */
export function wanServerCoordinates(wan: WanPoolView): WanServerCoordinate[] {
  return wan.members().flatMap((m) => {
    const s = parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status });
    return s ? [{ name: m.name, datacenter: s.datacenter, status: m.status, coordinate: wan.cachedCoordinate(m.name) }] : [];
  });
}

/** A server's datacenter list and WAN coordinate maps, read from its WAN pool at each call. */
export function wanCoordinates(local: string, wan: WanPoolView): { datacenters(): string[]; datacenterMaps(): DatacenterMap[] } {
  return {
    datacenters: () => datacentersByCoordinates(local, wan.coordinate(), wanServerCoordinates(wan)),
    datacenterMaps: () => datacenterMaps(wanServerCoordinates(wan)),
  };
}

/** One WAN server as `datacentersByDistance` takes it. */
export interface WanServer {
  readonly datacenter: string;
  readonly status: string;
  readonly rttMs?: number;
}

/**
 * @deprecated The probe-RTT ordering src/main used before coordinates were stored; superseded by
 * `wanCoordinates(...).datacenters()` (Consul's coordinate-based order). Remove once src/main uses that.
 */
export function datacentersByDistance(local: string, servers: readonly WanServer[]): string[] {
  const rtts = new Map<string, number[]>();
  for (const s of servers) {
    if (!rtts.has(s.datacenter)) rtts.set(s.datacenter, []);
    if (s.status === "alive" && s.rttMs !== undefined) rtts.get(s.datacenter)!.push(s.rttMs);
  }
  rtts.set(local, [0]);
  const distance = (dc: string) => {
    const xs = [...rtts.get(dc)!].sort((a, b) => a - b);
    if (xs.length === 0) return Infinity;
    const mid = xs.length >> 1;
    return xs.length % 2 ? xs[mid]! : (xs[mid - 1]! + xs[mid]!) / 2;
  };
  return [...rtts.keys()].sort((a, b) => (a === local ? -1 : b === local ? 1 : distance(a) - distance(b) || (a < b ? -1 : a > b ? 1 : 0)));
}
