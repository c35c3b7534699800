/**
 * When an agent replaces a cached leaf, after Consul's `agent/cache-types/connect_ca_leaf.go`
 * (`calculateSoftExpiry`, `activeRootHasKey`, `caChangeJitterWindow`). Pure: time and randomness injected.
 */

/** Below this lifetime a leaf is renewed at once (Consul's defensive 10-minute floor). */
export const MIN_RENEWABLE_LIFETIME_MS = 10 * 60_000;
/** After the active root changes, agents spread their re-signing over this window (30 s). */
export const CA_CHANGE_JITTER_WINDOW_MS = 30_000;

/** A source of uniform floats in [0, 1); `Rng` from src/platform satisfies it. */
export interface UnitRandom {
  next(): number;
}

/** The span in which a renewal should happen, epoch ms, `earliest <= latest`. */
export interface RenewalWindow {
  readonly earliest: number;
  readonly latest: number;
}

/**
 * Consul's `calculateSoftExpiry`: renewal is due between 60% and 90% of the leaf's lifetime
 * (`validAfter`..`validBefore`, epoch ms). Past 90% (or for a lifetime under 10 minutes) both bounds
 * are `now`; inside the 60-90% band the earliest bound is `now`.
 */
export function leafRenewalWindow(validAfter: number, validBefore: number, now: number): RenewalWindow {
  const lifetime = validBefore - validAfter;
  if (lifetime < MIN_RENEWABLE_LIFETIME_MS) return { earliest: now, latest: now };
  const soft = validAfter + Math.floor(lifetime * 0.6);
  const hard = validAfter + Math.floor(lifetime * 0.9);
  if (now > hard) return { earliest: now, latest: now };
  return { earliest: Math.max(soft, now), latest: hard };
}

/** What {@link shouldRotateLeaf} looks at. */
export interface LeafRotationInput {
  /** The leaf's validity, epoch ms (IssuedCert.ValidAfter / ValidBefore). */
  readonly validAfter: number;
  readonly validBefore: number;
  /** The leaf's authority key ID, colon hex (see `leafSigningKeyId`). */
  readonly signingKeyId: string;
  /** SigningKeyID of the currently active root ("" when unknown: no root comparison is made). */
  readonly activeSigningKeyId: string;
  readonly now: number;
  readonly rng: UnitRandom;
  /**
   * A renewal time chosen earlier for this leaf (a root-change deadline Consul keeps as `forceExpireAfter`);
   * the result is never later than it.
   */
  readonly forceRenewAt?: number;
}

/** When to renew and why; `rotate` is `renewAt <= now`. */
export interface LeafRotationDecision {
  readonly rotate: boolean;
  readonly renewAt: number;
  /** "expiry": the 60-90% jitter band (or past it); "root-changed": the leaf's CA is no longer the active root. */
  readonly reason: "expiry" | "root-changed";
}

/**
 * Decides when to replace a leaf like Consul's agent: a random point in {@link leafRenewalWindow}
 * (`min + RandomStagger(max - min)`), or, when the leaf was not signed by the active root's key, a
 * random point within 30 s from now ({@link CA_CHANGE_JITTER_WINDOW_MS}) if that comes sooner. Draws one
 * or two numbers from `rng`. Re-evaluate on every root change and at `renewAt`.
 */
export function shouldRotateLeaf(input: LeafRotationInput): LeafRotationDecision {
  const { now } = input;
  const w = leafRenewalWindow(input.validAfter, input.validBefore, now);
  let renewAt = w.earliest + stagger(w.latest - w.earliest, input.rng);
  let reason: LeafRotationDecision["reason"] = "expiry";
  if (input.forceRenewAt !== undefined && input.forceRenewAt < renewAt) {
    renewAt = input.forceRenewAt;
    reason = "root-changed";
  }
  const rootChanged = input.activeSigningKeyId !== "" && input.activeSigningKeyId.toLowerCase() !== input.signingKeyId.toLowerCase();
  if (rootChanged) {
    const jittered = now + stagger(CA_CHANGE_JITTER_WINDOW_MS, input.rng);
    if (jittered < renewAt) {
      renewAt = jittered;
      reason = "root-changed";
    }
  }
  return { rotate: renewAt <= now, renewAt, reason };
}

/** Go's `lib.RandomStagger(d)`: uniform in [0, d); 0 when d <= 0. */
function stagger(spanMs: number, rng: UnitRandom): number {
  return spanMs > 0 ? Math.floor(rng.next() * spanMs) : 0;
}
