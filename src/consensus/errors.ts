/** Errors a consensus node's callers can tell apart. */

/** The proposal never entered the log (no leader, transfer in progress): it will not be applied. Safe to retry. */
export class ProposalDroppedError extends Error {
  constructor(reason: string) {
    super(`proposal dropped: ${reason}`);
    this.name = "ProposalDroppedError";
  }
}

/**
 * No result arrived in time. The outcome is UNKNOWN: the command may still be applied later.
 * Retrying a non-idempotent command may apply it twice.
 */
export class ProposalTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`proposal timed out after ${timeoutMs} ms; its outcome is unknown`);
    this.name = "ProposalTimeoutError";
  }
}

/** A linearizable read could not be confirmed in time (no leader, or no quorum). */
export class ReadTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`linearizable read not confirmed within ${timeoutMs} ms (no leader or no quorum)`);
    this.name = "ReadTimeoutError";
  }
}

/** The node was stopped while the request was pending; proposals have an unknown outcome. */
export class NodeStoppedError extends Error {
  constructor() {
    super("consensus node stopped");
    this.name = "NodeStoppedError";
  }
}
