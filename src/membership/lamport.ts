/**
 * Lamport clock (hashicorp/serf serf/lamport.go). Starts at 1 like serf's, so the zero time of a
 * message that never carried one is always older than anything stamped.
 *
 * Times travel as u32 on our wire (codec.ts), where serf's are uint64: the clock saturates at the u32
 * maximum instead of passing it. At one intent per second the limit is 136 years away; only a peer
 * sending a time near it (a bug, or a hostile key holder) gets there, and then every later time is the
 * same instead of every push/pull failing to encode.
 */
export const MAX_LAMPORT_TIME = 0xffff_ffff;

export class Lamport {
  time = 1;

  /** Returns the current time and moves past it (serf: `Time()` then `Increment()`); stays at the maximum once there. */
  increment(): number {
    return this.time < MAX_LAMPORT_TIME ? this.time++ : MAX_LAMPORT_TIME;
  }

  /** Observes a remote time: afterwards `time > t`, or `time` is the maximum. */
  witness(t: number): void {
    if (t >= this.time) this.time = Math.min(t + 1, MAX_LAMPORT_TIME);
  }
}
