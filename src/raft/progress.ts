import { Inflights } from "./inflights.ts";

/**
 * Replication state of one follower as seen by the leader (etcd tracker.StateType):
 * - Probe: one MsgApp at a time until the match point is found (after rejects, on election).
 * - Replicate: optimistic pipelining up to the inflight window.
 * - Snapshot: a snapshot is being streamed; no appends until it completes or fails.
 */
export type ProgressState = "Probe" | "Replicate" | "Snapshot";

/** Leader-side view of one peer (etcd tracker.Progress). Mutable; owned by the core. */
export class Progress {
  /** Highest index known to be replicated on the peer. */
  match = 0;
  /** Next index to send. */
  next: number;
  state: ProgressState = "Probe";
  /** In Snapshot state: index of the snapshot being sent. */
  pendingSnapshot = 0;
  /** Heard from the peer since the last CheckQuorum. */
  recentActive = false;
  /** In Probe state: a probe is outstanding, so sending is paused until a response or heartbeat. */
  probeSent = false;
  readonly inflights: Inflights;

  constructor(next: number, maxInflight: number, public isLearner: boolean, recentActive = false) {
    this.next = next;
    this.inflights = new Inflights(maxInflight);
    this.recentActive = recentActive;
  }

  private resetState(state: ProgressState): void {
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  /** After a snapshot, probing resumes after the snapshot index (it was sent or at least attempted). */
  becomeProbe(): void {
    if (this.state === "Snapshot") {
      const pending = this.pendingSnapshot;
      this.resetState("Probe");
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState("Probe");
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState("Replicate");
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.resetState("Snapshot");
    this.pendingSnapshot = snapshotIndex;
  }

  /** Acknowledgement up to n. Returns true if match advanced. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.probeSent = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /** Pipelining: assume entries up to n will be accepted. */
  optimisticUpdate(n: number): void {
    this.next = n + 1;
  }

  /**
   * Handles a rejection of the MsgApp at index `rejected`, `matchHint` being the follower's conflict
   * hint. Returns false if the rejection is stale (out of order) and must be ignored.
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === "Replicate") {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1);
    this.probeSent = false;
    return true;
  }

  /** Whether sending appends to this peer is currently throttled. */
  isPaused(): boolean {
    switch (this.state) {
      case "Probe": return this.probeSent;
      case "Replicate": return this.inflights.full();
      case "Snapshot": return true;
    }
  }

  clone(): Progress {
    const p = new Progress(this.next, this.inflights.size, this.isLearner, this.recentActive);
    p.match = this.match;
    p.state = this.state;
    p.pendingSnapshot = this.pendingSnapshot;
    p.probeSent = this.probeSent;
    (p as { inflights: Inflights }).inflights = this.inflights.clone();
    return p;
  }

  toString(): string {
    let s = `${this.state} match=${this.match} next=${this.next}`;
    if (this.isLearner) s += " learner";
    if (this.state === "Snapshot") s += ` pendingSnap=${this.pendingSnapshot}`;
    if (this.probeSent) s += " paused";
    if (this.inflights.count() > 0) s += ` inflight=${this.inflights.count()}${this.inflights.full() ? "[full]" : ""}`;
    if (!this.recentActive) s += " inactive";
    return s;
  }
}
