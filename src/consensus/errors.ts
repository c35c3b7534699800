/** Errors a consensus node's callers can tell apart. */

/** The proposal never entered the log (no leader, transfer in progress): it will not be applied. Safe to retry. */
export class ProposalDroppedError extends Error {
  constructor(reason: string) {
    super(`proposal dropped: ${reason}`);
    this.name = "ProposalDroppedError";
  }
}

/**
 * The proposal's Raft entry (the command in its proposal envelope) is larger than the limit of the node
 * that refused it: the proposer's own, or the leader's (reported back by a MsgPropTooLarge). Definite:
 * it was not and will not be appended. The message is for the end user (an HTTP 413 body).
 */
export class ProposalTooLargeError extends ProposalDroppedError {
  constructor(readonly size: number, readonly limit: number) {
    super("too large");
    this.name = "ProposalTooLargeError";
    this.message = `Request too large: the encoded Raft entry is ${size} bytes, more than the ${limit}-byte limit`;
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

/**
 * This server's Raft log could not be written (a full disk): the server takes no part in
 * the cluster until it can write again, and retries by itself. Proposals pending when it failed have an
 * unknown outcome (the leader may have committed them); new ones were not proposed.
 */
export class StorageFailedError extends Error {
  constructor(readonly failure: Error) {
    super(`this server cannot write its Raft log (${failure.message}); it retries until it can`);
    this.name = "StorageFailedError";
  }
}
