import type { MsgReadIndex } from "./types.ts";

/**
 * How ReadIndex requests are served:
 * - "Safe": the leader confirms it is still leader with a heartbeat round acknowledged by a quorum
 *   (Raft thesis §6.4).
 * - "LeaseBased": relies on the leader lease (CheckQuorum) and bounded clock drift (§6.4.1); no round.
 */
export type ReadOnlyOption = "Safe" | "LeaseBased";

/** A ReadIndex request awaiting heartbeat confirmation. */
export interface ReadIndexStatus {
  readonly req: MsgReadIndex;
  readonly index: number;
  readonly acks: Map<string, boolean>;
}

/** Queue of pending ReadIndex requests keyed by context (etcd readOnly). FIFO order is preserved. */
export class ReadOnly {
  private pending = new Map<string, ReadIndexStatus>();
  private queue: string[] = [];

  constructor(readonly option: ReadOnlyOption) {}

  /** Registers a request with the commit index at the time it arrived. Duplicate contexts are ignored. */
  addRequest(index: number, m: MsgReadIndex): void {
    if (this.pending.has(m.context)) return;
    this.pending.set(m.context, { req: m, index, acks: new Map() });
    this.queue.push(m.context);
  }

  /** Records a heartbeat ack for `context`; returns the ack set, or undefined for unknown contexts. */
  recvAck(id: string, context: string): ReadonlyMap<string, boolean> | undefined {
    const rs = this.pending.get(context);
    if (!rs) return undefined;
    rs.acks.set(id, true);
    return rs.acks;
  }

  /**
   * Dequeues the request with `context` and every request queued before it (an ack for a later request
   * confirms leadership for earlier ones too). Returns them in order; [] if `context` is unknown.
   */
  advance(context: string): ReadIndexStatus[] {
    const idx = this.queue.indexOf(context);
    if (idx < 0) return [];
    const done = this.queue.slice(0, idx + 1);
    this.queue = this.queue.slice(idx + 1);
    return done.map((ctx) => {
      const rs = this.pending.get(ctx)!;
      this.pending.delete(ctx);
      return rs;
    });
  }

  /** Context of the newest pending request ("" if none), piggybacked on heartbeats. */
  lastPendingRequestCtx(): string {
    return this.queue.length === 0 ? "" : this.queue[this.queue.length - 1]!;
  }

  pendingCount(): number {
    return this.queue.length;
  }
}
