/**
 * Lifeguard suspicion timer (memberlist suspicion.go), with explicit time instead of a timer: the
 * deadline starts at `max` after the suspicion began and moves towards `min` as independent
 * confirmations arrive: timeout = max - log(n+1)/log(k+1) * (max - min), never below min.
 */
export class Suspicion {
  private n = 0;
  private readonly confirmations = new Set<string>();
  private deadlineMs: number;

  /**
   * `from` (the first accuser) does not count as a confirmation; `k` confirmations drive the timeout
   * to `minMs`. `startMs` is when the node became suspect.
   */
  constructor(from: string, private readonly k: number, private readonly minMs: number, private readonly maxMs: number, private readonly startMs: number) {
    this.confirmations.add(from);
    this.deadlineMs = startMs + (k < 1 ? minMs : maxMs);
  }

  /** The time at which the suspect should be declared dead. */
  get deadline(): number {
    return this.deadlineMs;
  }

  get confirmationCount(): number {
    return this.n;
  }

  /**
   * Records a confirmation from `from`. Returns true if it was new (the caller re-gossips the suspicion),
   * false for duplicates or once k confirmations were reached.
   */
  confirm(from: string): boolean {
    if (this.n >= this.k || this.confirmations.has(from)) return false;
    this.confirmations.add(from);
    this.n++;
    this.deadlineMs = this.startMs + remainingSuspicionTime(this.n, this.k, this.minMs, this.maxMs);
    return true;
  }
}

/** Total suspicion time after `n` of `k` confirmations (memberlist remainingSuspicionTime + elapsed). */
export function remainingSuspicionTime(n: number, k: number, minMs: number, maxMs: number): number {
  if (k < 1) return minMs;
  const frac = Math.log(n + 1) / Math.log(k + 1);
  const raw = Math.floor(maxMs - frac * (maxMs - minMs));
  return Math.max(minMs, raw);
}
