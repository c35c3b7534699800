/**
 * RPC failures as an agent's API should report them: the server's own words without gRPC's code
 * prefix, and, for refusals of the request itself, the HTTP status to answer with.
 */
import { Code, ConnectError } from "@connectrpc/connect";

/** A refusal of the request itself, with the HTTP status the HTTP layer answers it with (its `statusCode`). */
export class StateRequestError extends Error {
  override readonly name = "StateRequestError";
  constructor(message: string, readonly statusCode: number) {
    super(message);
  }
}

/**
 * The server's refusals that are the request's fault: too large for a Raft entry (ResourceExhausted)
 * answers 413, an invalid request such as a snapshot that fails its checks (InvalidArgument) 400, and
 * an ACL refusal (PermissionDenied: "Permission denied", "ACL not found") 403, as Consul answers them.
 */
const CLIENT_STATUS: ReadonlyMap<Code, number> = new Map([[Code.ResourceExhausted, 413], [Code.InvalidArgument, 400], [Code.PermissionDenied, 403]]);

/**
 * An RPC failure as the HTTP client should read it: the server's own words, without gRPC's code prefix;
 * a refusal of the request itself is a StateRequestError carrying its HTTP status.
 */
export function plainRpcError(err: unknown): Error {
  if (err instanceof ConnectError) {
    const status = CLIENT_STATUS.get(err.code);
    return status === undefined ? new Error(err.rawMessage) : new StateRequestError(err.rawMessage, status);
  }
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * A dial that found no way to reach the datacenter at all (WAN federation without a usable mesh
 * gateway): nothing was dialled, so the pool fails the call with this message as it is, at once, and
 * does not back off (the next call asks again: a gateway may be usable by then). Issue #10139: say
 * why, do not hang.
 */
export class NoPathError extends Error {
  override readonly name = "NoPathError";
}
