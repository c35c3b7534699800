/**
 * The anti-entropy scheduler (Consul's agent/ae StateSyncer): a full sync at start and then every
 * interval + random stagger (both scaled by cluster size), a coalesced partial sync soon after each
 * local change, and on failure a back-off before the next full sync instead of a hot loop.
 *
 * Differences from Consul, on purpose: a failed partial sync also enters back-off (Consul only logs,
 * so a steady stream of changes retried against a failing server at the rate of the changes), and
 * the retry delay doubles per consecutive failure from retryFailMs up to retryMaxMs (Consul: a flat
 * 15 s + stagger). Changes made while backing off are picked up by the retry's full sync.
 */
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";
import type { LocalState } from "./local_state.ts";
import type { CatalogPort } from "./ports.ts";
import { syncChanges, syncFull } from "./sync.ts";

export interface AntiEntropyOptions {
  readonly state: LocalState;
  readonly catalog: CatalogPort;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /** Full sync period before stagger (Consul's ae_interval, 1 minute). */
  readonly intervalMs?: number;
  /** Number of nodes in the LAN pool; above 128 the periods stretch (Consul's aeScale). Default: 1. */
  readonly clusterSize?: () => number;
  /** First retry delay after a failure (Consul's retryFailIntv, 15 s). */
  readonly retryFailMs?: number;
  /** Longest retry delay before stagger. Default: intervalMs. */
  readonly retryMaxMs?: number;
  /** Upper bound of the stagger before a full sync asked for by triggerFullSync (Consul's serverUpIntv, 3 s). */
  readonly serverUpMs?: number;
}

export interface AntiEntropyStats {
  readonly fullSyncs: number;
  readonly partialSyncs: number;
  readonly failures: number;
  /** Consecutive failures; > 0 while backing off. */
  readonly consecutiveFailures: number;
}

export interface AntiEntropy {
  /** Runs the first full sync now and keeps syncing until stop(). Also installs itself as the state's sync trigger. */
  start(): void;
  /** Cancels timers; an RPC in flight completes but nothing further runs. Pending syncChanges() promises resolve. */
  stop(): void;
  /** Asks for a partial sync soon; calls made in the same tick coalesce into one. No-op while paused or backing off. */
  triggerSyncChanges(): void;
  /** Asks for a full sync after a random stagger of up to serverUpMs (Consul does this when a server joins). */
  triggerFullSync(): void;
  /**
   * Runs a partial sync now (after any sync in flight) and resolves when it is done, as Consul's agent
   * endpoints do after a write. Never rejects: a failure is logged and handled by back-off. Resolves at
   * once while paused, stopped or backing off.
   */
  syncChanges(): Promise<void>;
  /** Suspends syncs (nested); resume() of the last pause triggers a partial sync. */
  pause(): void;
  resume(): void;
  stats(): AntiEntropyStats;
}

/** Consul's ae.scaleFactor: 1 up to 128 nodes, then +1 per doubling. */
export function aeScaleFactor(nodes: number): number {
  const threshold = 128;
  if (nodes <= threshold) return 1;
  return Math.ceil(Math.log2(nodes) - Math.log2(threshold)) + 1;
}

/** Creates the syncer; nothing runs until start(). */
export function createAntiEntropy(opts: AntiEntropyOptions): AntiEntropy {
  const { state, catalog, clock, rng, logger } = opts;
  const intervalMs = opts.intervalMs ?? 60_000;
  const retryFailMs = opts.retryFailMs ?? 15_000;
  const retryMaxMs = Math.max(retryFailMs, opts.retryMaxMs ?? intervalMs);
  const serverUpMs = opts.serverUpMs ?? 3_000;
  const jitter = (ms: number) => rng.next() * aeScaleFactor(opts.clusterSize?.() ?? 1) * ms;

  let stopped = true;
  let paused = 0;
  let running = false;
  let pendingFull = false;
  let pendingPartial = false;
  let fullTimer: Cancel | undefined;
  let partialTimer: Cancel | undefined;
  let runsStarted = 0;
  let failuresInARow = 0;
  const counts = { fullSyncs: 0, partialSyncs: 0, failures: 0 };
  /** Callers of syncChanges(), each waiting for run number `minRun` to finish. */
  let waiters: { minRun: number; resolve: () => void }[] = [];

  /** Monotonic time the scheduled full sync is due (with fullTimer). */
  let fullDueAt = 0;
  /**
   * Schedules the next full sync in `ms`, unless one is already due sooner: a retry or the regular
   * interval set when a run ends must not postpone a full sync asked for meanwhile (triggerFullSync
   * while that run was in flight, e.g. once the leader wrote the ACL master token the run lacked).
   */
  const scheduleFull = (ms: number) => {
    const at = clock.monotonic() + ms;
    if (fullTimer && fullDueAt <= at) return;
    fullTimer?.();
    fullDueAt = at;
    fullTimer = clock.setTimer(ms, () => {
      fullTimer = undefined;
      request("full");
    });
  };

  const request = (kind: "full" | "partial") => {
    if (stopped) return;
    if (running) {
      if (kind === "full") pendingFull = true;
      else pendingPartial = true;
      return;
    }
    void run(kind);
  };

  const resolveWaiters = (all: boolean) => {
    const done = waiters.filter((w) => all || w.minRun <= runsStarted);
    waiters = waiters.filter((w) => !done.includes(w));
    for (const w of done) w.resolve();
  };

  const run = async (kind: "full" | "partial") => {
    running = true;
    runsStarted++;
    try {
      if (kind === "full") {
        if (paused > 0) {
          scheduleFull(retryFailMs + jitter(retryFailMs));
          return;
        }
        await syncFull(state, catalog, logger);
        counts.fullSyncs++;
        failuresInARow = 0;
        if (!stopped) scheduleFull(intervalMs + jitter(intervalMs));
      } else {
        if (paused > 0 || failuresInARow > 0) return;
        await syncChanges(state, catalog, logger);
        counts.partialSyncs++;
      }
    } catch (err) {
      counts.failures++;
      failuresInARow++;
      const delay = Math.min(retryFailMs * 2 ** (failuresInARow - 1), retryMaxMs) + jitter(retryFailMs);
      logger.error(kind === "full" ? "failed to sync remote state" : "failed to sync changes", {
        error: (err as Error)?.message ?? String(err),
        retry_in_ms: Math.round(delay),
      });
      if (!stopped) scheduleFull(delay);
    } finally {
      running = false;
    }
    resolveWaiters(stopped || failuresInARow > 0);
    if (stopped) return;
    if (pendingFull) {
      pendingFull = false;
      pendingPartial = false;
      void run("full");
    } else if (pendingPartial) {
      pendingPartial = false;
      if (failuresInARow === 0 && paused === 0) void run("partial");
      else resolveWaiters(true);
    }
  };

  const ae: AntiEntropy = {
    start() {
      if (!stopped) return;
      stopped = false;
      state.onSyncNeeded = () => ae.triggerSyncChanges();
      request("full");
    },
    stop() {
      stopped = true;
      fullTimer?.();
      partialTimer?.();
      fullTimer = partialTimer = undefined;
      state.onSyncNeeded = () => {};
      resolveWaiters(true);
    },
    triggerSyncChanges() {
      if (stopped || paused > 0 || failuresInARow > 0 || partialTimer) return;
      partialTimer = clock.setTimer(0, () => {
        partialTimer = undefined;
        request("partial");
      });
    },
    triggerFullSync() {
      if (!stopped) scheduleFull(jitter(serverUpMs));
    },
    syncChanges() {
      if (stopped || paused > 0 || failuresInARow > 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiters.push({ minRun: runsStarted + 1, resolve });
        partialTimer?.();
        partialTimer = undefined;
        request("partial");
      });
    },
    pause() {
      paused++;
    },
    resume() {
      if (paused === 0) throw new Error("anti-entropy: unbalanced pause/resume");
      paused--;
      if (paused === 0) ae.triggerSyncChanges();
    },
    stats: () => ({ ...counts, consecutiveFailures: failuresInARow }),
  };
  return ae;
}
