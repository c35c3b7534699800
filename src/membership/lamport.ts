/**
 * Lamport clock (hashicorp/serf serf/lamport.go). Starts at 1 like serf's, so the zero time of a
 * message that never carried one is always older than anything stamped.
 */
export class Lamport {
  time = 1;

  /** Returns the current time and moves past it (serf: `Time()` then `Increment()`). */
  increment(): number {
    return this.time++;
  }

  /** Observes a remote time: afterwards `time > t`. */
  witness(t: number): void {
    if (t >= this.time) this.time = t + 1;
  }
}
