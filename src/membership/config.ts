/**
 * Memberlist configuration and Consul's named timing profiles. Durations are milliseconds.
 * Defaults follow hashicorp/memberlist DefaultLANConfig / DefaultWANConfig / DefaultLocalConfig
 * (config.go); LAN and WAN timings are Consul's `gossip_lan` / `gossip_wan` defaults.
 */

/** Timing and fan-out knobs; everything except identity. */
export interface Timing {
  /** Interval between probes of one member (scaled by local health awareness). */
  readonly probeIntervalMs: number;
  /** Wait for a direct ack before trying indirect probes (scaled by awareness). */
  readonly probeTimeoutMs: number;
  /** Interval between piggyback-free gossip rounds. */
  readonly gossipIntervalMs: number;
  /** Members gossiped to per round. */
  readonly gossipNodes: number;
  /** Members asked to probe indirectly when the direct probe times out. */
  readonly indirectChecks: number;
  /** Broadcast retransmits = retransmitMult * ceil(log10(n + 1)). */
  readonly retransmitMult: number;
  /** Suspicion minimum = suspicionMult * max(1, log10(max(1, n))) * probeInterval. */
  readonly suspicionMult: number;
  /** Suspicion maximum = suspicionMaxTimeoutMult * minimum (Lifeguard). */
  readonly suspicionMaxTimeoutMult: number;
  /** Interval between full state syncs with a random member (scaled up above 32 members); 0 disables. */
  readonly pushPullIntervalMs: number;
  /** Dead members keep receiving gossip, then are reaped, after this long. */
  readonly gossipToTheDeadTimeMs: number;
  /** Lifeguard awareness: probe interval/timeout are multiplied by at most this. */
  readonly awarenessMaxMultiplier: number;
  /** Largest packet the core builds (UDP payload budget). */
  readonly packetSizeLimit: number;
  /** How long `leave` waits for its dead-by-self broadcast to be transmitted before giving up. */
  readonly leavePropagateMs: number;
  /**
   * memberlist DisableTcpPings: no stream ping when a probe's packets got no ack by its timeout (the
   * stream ping is on by default, as in memberlist; simulations of packet loss alone turn it off).
   */
  readonly disableTcpPings?: boolean;
}

export interface MemberlistConfig extends Timing {
  /** Unique node name (WAN pool: `<node>.<dc>`). */
  readonly name: string;
  /** Address other members reach this node at; opaque to the core. */
  readonly addr: string;
  /** Initial metadata (serf tags), at most `MAX_META_BYTES`. */
  readonly meta: Uint8Array;
}

/** memberlist's MetaMaxSize. */
export const MAX_META_BYTES = 512;

const common = {
  gossipNodes: 3,
  indirectChecks: 3,
  retransmitMult: 4,
  suspicionMaxTimeoutMult: 6,
  awarenessMaxMultiplier: 8,
  packetSizeLimit: 1400,
} as const;

/** Consul LAN pool: probe 1 s, timeout 500 ms, gossip 200 ms to 3, suspicion x4, push-pull 30 s. */
export const LAN_PROFILE: Timing = Object.freeze({
  ...common,
  probeIntervalMs: 1000,
  probeTimeoutMs: 500,
  gossipIntervalMs: 200,
  suspicionMult: 4,
  pushPullIntervalMs: 30_000,
  gossipToTheDeadTimeMs: 30_000,
  leavePropagateMs: 5000,
});

/** Consul WAN pool: probe 5 s, timeout 3 s, gossip 500 ms to 4, suspicion x6, push-pull 60 s. */
export const WAN_PROFILE: Timing = Object.freeze({
  ...common,
  gossipNodes: 4,
  probeIntervalMs: 5000,
  probeTimeoutMs: 3000,
  gossipIntervalMs: 500,
  suspicionMult: 6,
  pushPullIntervalMs: 60_000,
  gossipToTheDeadTimeMs: 60_000,
  leavePropagateMs: 5000,
});

/**
 * Loopback / test profile (memberlist DefaultLocalConfig, except that it keeps 3 indirect checks so
 * Lifeguard nacks are exercised): probe 1 s, timeout 200 ms, gossip 100 ms, suspicion x3, push-pull 15 s.
 */
export const LOCAL_PROFILE: Timing = Object.freeze({
  ...common,
  retransmitMult: 2,
  probeIntervalMs: 1000,
  probeTimeoutMs: 200,
  gossipIntervalMs: 100,
  suspicionMult: 3,
  pushPullIntervalMs: 15_000,
  gossipToTheDeadTimeMs: 15_000,
  leavePropagateMs: 1000,
});

export type ProfileName = "lan" | "wan" | "local";
export const PROFILES: Readonly<Record<ProfileName, Timing>> = Object.freeze({ lan: LAN_PROFILE, wan: WAN_PROFILE, local: LOCAL_PROFILE });

/** Builds a config from a profile plus identity, with optional overrides. Validates; throws RangeError. */
export function memberlistConfig(
  profile: Timing | ProfileName,
  identity: { name: string; addr: string; meta?: Uint8Array },
  overrides: Partial<Timing> = {},
): MemberlistConfig {
  const base = typeof profile === "string" ? PROFILES[profile] : profile;
  const cfg: MemberlistConfig = { ...base, ...overrides, name: identity.name, addr: identity.addr, meta: identity.meta ?? new Uint8Array(0) };
  validateConfig(cfg);
  return cfg;
}

/** Throws RangeError naming the first bad field. */
export function validateConfig(c: MemberlistConfig): void {
  const bad = (field: string, why: string) => { throw new RangeError(`memberlist config: ${field} ${why}`); };
  if (!c.name) bad("name", "must not be empty");
  if (!c.addr) bad("addr", "must not be empty");
  if (c.meta.length > MAX_META_BYTES) bad("meta", `exceeds ${MAX_META_BYTES} bytes`);
  type NumericTiming = Exclude<keyof Timing, "disableTcpPings">;
  const positive: NumericTiming[] = ["probeIntervalMs", "probeTimeoutMs", "gossipIntervalMs", "retransmitMult", "suspicionMult", "suspicionMaxTimeoutMult", "awarenessMaxMultiplier", "leavePropagateMs"];
  for (const f of positive) if (!(c[f] > 0)) bad(f, "must be > 0");
  const nonNeg: NumericTiming[] = ["gossipNodes", "indirectChecks", "pushPullIntervalMs", "gossipToTheDeadTimeMs"];
  for (const f of nonNeg) if (!(c[f] >= 0)) bad(f, "must be >= 0");
  if (c.probeTimeoutMs >= c.probeIntervalMs) bad("probeTimeoutMs", "must be below probeIntervalMs");
  if (c.packetSizeLimit < 512) bad("packetSizeLimit", "must be >= 512");
}

/** memberlist suspicionTimeout: suspicionMult * max(1, log10(max(1, n))) * interval, floored to ms. */
export function suspicionTimeoutMs(suspicionMult: number, n: number, intervalMs: number): number {
  const nodeScale = Math.max(1, Math.log10(Math.max(1, n)));
  return Math.floor(suspicionMult * nodeScale * intervalMs);
}

/** memberlist retransmitLimit: retransmitMult * ceil(log10(n + 1)). */
export function retransmitLimit(retransmitMult: number, n: number): number {
  return retransmitMult * Math.ceil(Math.log10(n + 1));
}

/** memberlist pushPullScale: the interval grows by one multiple per doubling above 32 members. */
export function pushPullScaleMs(intervalMs: number, n: number): number {
  if (n <= 32) return intervalMs;
  const mult = Math.ceil(Math.log2(n) - Math.log2(32)) + 1;
  return intervalMs * mult;
}
