/**
 * The federation map's model, computed purely from what the agent's API says about every
 * datacenter: its leader, its servers in the WAN pool (alive of total), its mesh gateways and their
 * health (read in that datacenter), its federation state as the primary holds it (age, and whether
 * it still matches the datacenter's own gateways), the median round-trip time from this datacenter,
 * and ACL replication. Every problem is a sentence, so the map and table never rely on colour.
 */
import { distanceMs, type Coordinate } from "../membership/index.ts";
import type { CheckServiceNode } from "../model/index.ts";

/** Consul's federation-state anti-entropy waits at least this long between syncs. */
export const FEDERATION_SYNC_INTERVAL_MS = 5_000;
/**
 * A primary's copy older than this that disagrees with the datacenter's own gateways is stale: anti-
 * entropy rewrites it within about one sync interval of a change, so an old copy that differs means
 * either a change newer than that or a sync that is not happening (the state does not say which, so
 * a fresh change can show as stale for up to one interval).
 */
export const STALE_AFTER_MS = 3 * FEDERATION_SYNC_INTERVAL_MS;

export interface WanMember {
  readonly Name: string;
  readonly Status: number;
  readonly Tags: Readonly<Record<string, string>>;
}

export interface DcCoordinates {
  readonly Datacenter: string;
  readonly Coordinates: readonly { readonly Node: string; readonly Coord: Coordinate | null }[];
}

export interface FederationStateRecord {
  readonly Datacenter: string;
  readonly MeshGateways?: readonly CheckServiceNode[] | null;
  readonly UpdatedAt: string;
}

export interface AclReplicationStatus {
  readonly Enabled: boolean;
  readonly Running: boolean;
  readonly SourceDatacenter?: string;
  readonly ReplicationType?: string;
  readonly LastSuccess?: string;
  readonly LastError?: string;
  readonly LastErrorMessage?: string;
}

/** What was read for one datacenter; a failed read is its error text. */
export interface DcReads {
  readonly leader: string | { readonly error: string };
  /** That datacenter's own mesh-gateway instances with their checks. */
  readonly gateways: readonly CheckServiceNode[] | { readonly error: string };
  readonly aclReplication: AclReplicationStatus | { readonly error: string };
}

export interface FederationInput {
  readonly localDc: string;
  readonly primaryDc: string;
  readonly datacenters: readonly string[];
  readonly members: readonly WanMember[];
  readonly coordinates: readonly DcCoordinates[];
  readonly states: readonly FederationStateRecord[];
  readonly reads: Readonly<Record<string, DcReads>>;
  /** Now, in ms since the epoch (for ages). */
  readonly now: number;
}

export interface GatewayChip {
  readonly id: string;
  readonly node: string;
  readonly healthy: boolean;
}

export interface DcView {
  readonly name: string;
  readonly primary: boolean;
  readonly local: boolean;
  readonly leader: string;
  readonly serversAlive: number;
  readonly serversTotal: number;
  readonly gateways: readonly GatewayChip[];
  readonly gatewaysHealthy: number;
  /** Age of the primary's copy of this datacenter's federation state in ms, or undefined when it has none. */
  readonly stateAgeMs: number | undefined;
  /** Median RTT from the local datacenter's servers in ms (undefined: no coordinates; 0 for itself). */
  readonly rttMs: number | undefined;
  /** "not replicating", "running (tokens) from dc1, last success 3 s ago", "failing since ...", or the read error. */
  readonly aclReplication: string;
  /** Every problem in words; empty when the link is healthy. */
  readonly problems: readonly string[];
  /** "healthy", "degraded" (some problem) or "unreachable" (its servers did not answer). */
  readonly link: "healthy" | "degraded" | "unreachable";
}

const isError = (v: unknown): v is { readonly error: string } => typeof v === "object" && v !== null && "error" in v && !Array.isArray(v);

export function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The median of the estimated RTTs between every server of `from` and every server of `to` (Consul's `rtt -wan` uses the median). */
export function medianRttMs(coordinates: readonly DcCoordinates[], from: string, to: string): number | undefined {
  const of = (dc: string) => (coordinates.find((c) => c.Datacenter === dc)?.Coordinates ?? []).flatMap((c) => (c.Coord ? [c.Coord] : []));
  const a = of(from), b = of(to);
  const d: number[] = [];
  for (const x of a) for (const y of b) {
    try {
      d.push(distanceMs(x, y));
    } catch {
      // Coordinates of different dimensionality: not comparable.
    }
  }
  return median(d);
}

/** "850 ms", "3 s", "4 min", "2 h". */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

export function formatRtt(ms: number | undefined): string {
  if (ms === undefined) return "unknown";
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${Math.round(ms)} ms`;
}

function aclReplicationText(r: DcReads["aclReplication"] | undefined, now: number): string {
  if (r === undefined) return "unknown";
  if (isError(r)) return `unknown: ${r.error}`;
  if (!r.Enabled) return "not replicating";
  const lastSuccess = r.LastSuccess ? Date.parse(r.LastSuccess) : NaN;
  const lastError = r.LastError ? Date.parse(r.LastError) : NaN;
  if (Number.isFinite(lastError) && (!Number.isFinite(lastSuccess) || lastError > lastSuccess)) {
    return `failing since ${formatAge(now - lastError)} ago${r.LastErrorMessage ? `: ${r.LastErrorMessage}` : ""}`;
  }
  const what = `${r.Running ? "running" : "stopped"}${r.ReplicationType ? ` (${r.ReplicationType})` : ""}${r.SourceDatacenter ? ` from ${r.SourceDatacenter}` : ""}`;
  return Number.isFinite(lastSuccess) ? `${what}, last success ${formatAge(now - lastSuccess)} ago` : what;
}

/** A gateway instance is healthy when none of its checks (node's or its own) is critical. */
function chip(x: CheckServiceNode): GatewayChip {
  return { id: x.Service.ID, node: x.Node.Node, healthy: x.Checks.every((c) => c.Status !== "critical") };
}

/** The same gateways with the same health: what anti-entropy would leave alone. */
function sameGateways(a: readonly GatewayChip[], b: readonly GatewayChip[]): boolean {
  const key = (xs: readonly GatewayChip[]) => xs.map((g) => `${g.node}/${g.id}/${g.healthy}`).sort().join(",");
  return key(a) === key(b);
}

export function federationView(input: FederationInput): DcView[] {
  const { localDc, primaryDc, now } = input;
  const names = [...new Set([...input.datacenters, ...input.states.map((s) => s.Datacenter)])];
  return names.map((name): DcView => {
    const reads = input.reads[name];
    const servers = input.members.filter((m) => m.Tags["dc"] === name && m.Tags["role"] === "consul");
    const serversAlive = servers.filter((m) => m.Status === 1).length;
    const state = input.states.find((s) => s.Datacenter === name);
    const stateChips = (state?.MeshGateways ?? []).map(chip);
    const liveGateways = reads && !isError(reads.gateways) ? reads.gateways.map(chip) : undefined;
    const gateways = liveGateways ?? stateChips;
    const gatewaysHealthy = gateways.filter((g) => g.healthy).length;
    const updatedAt = state ? Date.parse(state.UpdatedAt) : NaN;
    const stateAgeMs = Number.isFinite(updatedAt) ? Math.max(0, now - updatedAt) : undefined;
    const leader = reads && !isError(reads.leader) ? reads.leader : "";
    const unreachable = !reads || isError(reads.leader);
    const problems: string[] = [];
    if (unreachable) problems.push(`its servers did not answer${reads && isError(reads.leader) ? `: ${reads.leader.error}` : ""}`);
    else if (leader === "") problems.push("no leader");
    if (servers.length > 0 && serversAlive < servers.length) problems.push(`${serversAlive}/${servers.length} servers alive`);
    if (gateways.length > 0 && gatewaysHealthy < gateways.length) problems.push(`${gatewaysHealthy}/${gateways.length} gateways healthy`);
    if (liveGateways === undefined && stateChips.length > 0) problems.push("gateway health from the primary's copy, not the datacenter itself");
    if (!state && name !== primaryDc) problems.push("no federation state in the primary");
    if (state && liveGateways && !sameGateways(stateChips, liveGateways) && stateAgeMs !== undefined && stateAgeMs > STALE_AFTER_MS) {
      problems.push(`federation state stale: the primary's copy (${formatAge(stateAgeMs)} old) differs from the datacenter's gateways`);
    }
    return {
      name, primary: name === primaryDc, local: name === localDc, leader,
      serversAlive, serversTotal: servers.length, gateways, gatewaysHealthy, stateAgeMs,
      rttMs: name === localDc ? 0 : medianRttMs(input.coordinates, localDc, name),
      aclReplication: aclReplicationText(reads?.aclReplication, now),
      problems,
      link: unreachable ? "unreachable" : problems.length > 0 ? "degraded" : "healthy",
    };
  });
}
