/**
 * The datacenters a server knows through the WAN pool, nearest first (Consul's
 * `sortDatacentersByDistance`): the local datacenter first, then the others by the median round-trip
 * time to their alive servers; datacenters without a measurement go last; ties by name.
 */
export interface WanServer {
  readonly datacenter: string;
  readonly status: string;
  readonly rttMs?: number;
}

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
