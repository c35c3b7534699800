/**
 * Linearizable reads by ReadIndex, batched as etcd's linearizableReadLoop does: reads that arrive before
 * their ReadIndex request reaches the core share it (the request is made after all of them, so its
 * commit index is a valid read point for each), and one request is in flight at a time, so under load
 * a quorum round serves many reads. A read resolves once the state machine has applied its read point.
 */
import type { Clock } from "../platform/index.ts";
import { ReadTimeoutError } from "./errors.ts";
import { WaiterSet } from "./proposals.ts";

/** etcd's readIndexRetryTime. */
const READ_RETRY_MS = 500;

export interface ReadIndexOptions {
  readonly clock: Clock;
  readonly timeoutMs: number;
  /** Unique to this node and process: a late answer to an earlier incarnation's read must not resolve a new one. */
  readonly contextPrefix: string;
  /** Hands a ReadIndex request with `ctx` to the core (again, when no answer came). */
  readonly request: (ctx: string) => void;
  /** False once the node stopped or failed: no more requests or retries. */
  readonly active: () => boolean;
}

export class ReadIndexBatcher {
  private readonly waiters: WaiterSet<void>;
  /** Read points the core confirmed, waiting for the state machine to apply them. */
  private confirmed: { index: number; ctx: string }[] = [];
  /** The batch collecting reads; its request is made once the one in flight is answered. */
  private open: { readonly ctx: string; readonly promise: Promise<void> } | undefined;
  private inFlight = false;
  private seq = 0;

  constructor(private readonly o: ReadIndexOptions) {
    this.waiters = new WaiterSet<void>(o.clock.setTimer);
  }

  /** Resolves once a read point taken after this call is applied; ReadTimeoutError after timeoutMs. */
  read(): Promise<void> {
    if (this.open) return this.open.promise;
    const ctx = `${this.o.contextPrefix}/${++this.seq}`;
    const promise = this.waiters.add(ctx, this.o.timeoutMs, () => new ReadTimeoutError(this.o.timeoutMs));
    this.open = { ctx, promise };
    if (!this.inFlight) this.issue();
    return promise;
  }

  /** The core confirmed `ctx`'s read point `index` (a ReadState). */
  confirm(index: number, ctx: string): void {
    this.confirmed.push({ index, ctx });
  }

  /** Resolves the reads whose read point is at or below `applied`. */
  answer(applied: number): void {
    if (!this.confirmed.length) return;
    const waiting: typeof this.confirmed = [];
    for (const rs of this.confirmed) {
      if (rs.index <= applied) this.waiters.resolve(rs.ctx, undefined);
      else waiting.push(rs);
    }
    this.confirmed = waiting;
  }

  /** Fails every pending read with `err()` and forgets confirmed read points. */
  rejectAll(err: () => Error): void {
    this.confirmed = [];
    this.open = undefined;
    this.waiters.rejectAll(err);
  }

  /** Sends the open batch's request: every read in it arrived before, so its read point is valid for each. */
  private issue(): void {
    const batch = this.open;
    if (!batch || !this.o.active()) return;
    this.open = undefined;
    this.inFlight = true;
    // A ReadIndex request or its answer can be lost (dropped message, leader change): ask again with
    // the same context every READ_RETRY_MS until answered, as etcd's read loop does, instead of
    // holding the whole batch until its timeout. A late second answer resolves nothing twice.
    const retry = () => {
      if (!this.o.active()) return;
      this.o.request(batch.ctx);
      cancelRetry = this.o.clock.setTimer(READ_RETRY_MS, retry);
    };
    let cancelRetry = this.o.clock.setTimer(READ_RETRY_MS, retry);
    const next = () => {
      cancelRetry();
      this.inFlight = false;
      this.issue();
    };
    batch.promise.then(next, next);
    this.o.request(batch.ctx);
  }
}
