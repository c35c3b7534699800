/**
 * A full disk under a running node. What the log holds in memory may not be what reached the disk, so
 * the node stops taking part (no ticks, votes or acks; requests refused with StorageFailedError) and
 * retries, with backoff, to reopen the log and start again from what is durable: like a restart, but
 * the process and its listeners stay up. Any other log failure stops the node (see isDiskFull).
 */
import type { Clock, Logger } from "../platform/index.ts";
import { StorageFailedError } from "./errors.ts";
import type { LogStore } from "./ports.ts";
import type { Replica } from "./replica.ts";
import type { SnapshotTaker } from "./snapshot_taker.ts";

/** The longest wait between attempts to reopen a failed log. */
const STORAGE_RETRY_MAX_MS = 30_000;

/**
 * Whether a log failure is a full disk (or quota): the write that failed left at most a torn tail, which
 * recovery cuts off, so the node can reopen the log in place. Any other failure (EIO from an fsync
 * above all) stops the node: after a failed fsync the page cache may hold bytes the disk lost, and
 * only an operator can tell.
 */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** The wait before reopen attempt `attempt` (0 first): `baseMs` doubling, at most 30 s. */
export function reopenDelayMs(baseMs: number, attempt: number): number {
  return Math.min(STORAGE_RETRY_MAX_MS, baseMs * 2 ** attempt);
}

export interface StorageOutageOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Opens the same durable log again; absent, no failure is waited out. */
  readonly reopenLog: (() => LogStore) | undefined;
  /** The first wait before reopening; doubles on each failed attempt. */
  readonly retryMs: number;
  readonly stopped: () => boolean;
  /**
   * Leaves the cluster: drops the Raft core, the ticker and the queued events, fails every pending
   * request with `refuse()` and reports that no leader is known.
   */
  readonly detach: (refuse: () => Error) => void;
  /** Takes part again: a new Raft core over the reloaded replica, and the ticker. */
  readonly resume: () => void;
}

export class StorageOutage {
  private current: Error | undefined;
  private cancelRetry: (() => void) | undefined;

  constructor(
    private readonly replica: Replica,
    private readonly snapshots: Pick<SnapshotTaker, "inFlight" | "logReplaced" | "restarted">,
    private readonly o: StorageOutageOptions,
  ) {}

  /** Why the log failed, while the node waits to reopen it (requests are refused meanwhile); else undefined. */
  get failure(): Error | undefined {
    return this.current;
  }

  /**
   * The loop failed with `err`. A full disk on a running node that can reopen its log starts an outage
   * (detach, close the log, retry reopening) and returns true; anything else returns false and the
   * caller stops the node.
   */
  begin(err: unknown): boolean {
    if (!this.o.reopenLog || this.o.stopped() || !isDiskFull(err)) return false;
    this.current = asError(err);
    this.o.detach(() => new StorageFailedError(this.current!));
    closeQuietly(this.replica.log);
    this.schedule(0);
    return true;
  }

  /** No more attempts (the node stopped). */
  cancel(): void {
    this.cancelRetry?.();
  }

  private schedule(attempt: number): void {
    const delay = reopenDelayMs(this.o.retryMs, attempt);
    this.o.logger.error("raft log failed: this server takes no part in the cluster and refuses requests until it can write again", {
      error: this.current!.message, retryInMs: delay,
    });
    this.cancelRetry = this.o.clock.setTimer(delay, () => void this.reopen(attempt));
  }

  /** Reopens the log and starts again from what is durable (snapshot, then the committed entries after it). */
  private async reopen(attempt: number): Promise<void> {
    this.cancelRetry = undefined;
    const { stopped } = this.o;
    if (stopped()) return;
    // A snapshot still being written belongs to the failed log: let it end, then drop its outcome.
    if (this.snapshots.inFlight) await this.snapshots.inFlight;
    this.snapshots.logReplaced();
    if (stopped()) return;
    const r = this.replica;
    try {
      r.log = this.o.reopenLog!();
      const rec = r.log.recover();
      if (rec.snapshot.index === 0 && r.applied > 0) throw new Error("the durable log has no snapshot to rebuild the applied state from");
      r.reset();
      this.snapshots.restarted();
      r.load(rec);
      await r.log.sync();
      if (stopped()) return;
      this.current = undefined;
      this.o.resume();
      this.o.logger.info("raft log writable again: rejoined from the durable log", { snapshot: rec.snapshot.index, entries: rec.entries.length, term: rec.hardState.term });
    } catch (err) {
      closeQuietly(r.log);
      this.current = asError(err);
      this.schedule(attempt + 1);
    }
  }
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** Closes a log that failed, or may be closed already: the reopened log reads what reached the disk. */
function closeQuietly(log: LogStore): void {
  try {
    log.close();
  } catch {
    // nothing more to release
  }
}
