/**
 * Lifeguard local health awareness (memberlist awareness.go): a score in [0, max-1] that rises when this
 * node seems to be the slow one (missed nacks, having to refute) and falls on successful probes.
 * Probe interval and timeout are multiplied by score + 1.
 */
export class Awareness {
  private score = 0;

  /** `max` is the awareness max multiplier (>= 1). */
  constructor(private readonly max: number) {}

  /** Adds `delta` and clamps to [0, max - 1]. */
  applyDelta(delta: number): void {
    this.score = Math.min(this.max - 1, Math.max(0, this.score + delta));
  }

  getHealthScore(): number {
    return this.score;
  }

  /** `timeoutMs * (score + 1)`. */
  scale(timeoutMs: number): number {
    return timeoutMs * (this.score + 1);
  }
}
