/**
 * The HTTP API's way to the replicated state (its StateAccess dependency) over a StateCaller: the
 * server's own (serve here or forward) or a client agent's (ask a server). Reads and results travel
 * in the wire encoding of src/rpc/state_wire.ts, commands in the state store's codec.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { StateAccess } from "../http/index.ts";
import type { Session } from "../model/index.ts";
import { decodeWire, encodeWire, type StateCaller } from "../rpc/index.ts";
import { encodeCommand, type StateResult } from "../state/index.ts";

/** A refusal of the request itself, with the HTTP status the HTTP layer answers it with (its `statusCode`). */
export class StateRequestError extends Error {
  override readonly name = "StateRequestError";
  constructor(message: string, readonly statusCode: number) {
    super(message);
  }
}

/**
 * The server's refusals that are the request's fault: too large for a Raft entry (ResourceExhausted)
 * answers 413, an invalid request such as a snapshot that fails its checks (InvalidArgument) 400.
 */
const CLIENT_STATUS: ReadonlyMap<Code, number> = new Map([[Code.ResourceExhausted, 413], [Code.InvalidArgument, 400]]);

/**
 * An RPC failure as the HTTP client should read it: the server's own words, without gRPC's code prefix;
 * a refusal of the request itself is a StateRequestError carrying its HTTP status.
 */
function plain(err: unknown): Error {
  if (err instanceof ConnectError) {
    const status = CLIENT_STATUS.get(err.code);
    return status === undefined ? new Error(err.rawMessage) : new StateRequestError(err.rawMessage, status);
  }
  return err instanceof Error ? err : new Error(String(err));
}

export function createStateAccess(caller: StateCaller): StateAccess & { renewSession(id: string, dc: string | undefined): Promise<readonly Session[]> } {
  return {
    async read(query, options) {
      try {
        const out = await caller.query(encodeWire(query), {
          datacenter: options.datacenter,
          consistency: options.consistency,
          minIndex: options.minIndex,
          maxWaitMs: options.maxWaitMs,
        });
        return { value: decodeWire(out.result), meta: { index: out.index, knownLeader: out.knownLeader, lastContactMs: out.lastContactMs } };
      } catch (err) {
        throw plain(err);
      }
    },
    async write(command, datacenter) {
      try {
        return decodeWire<StateResult>(await caller.apply(encodeCommand(command), datacenter));
      } catch (err) {
        throw plain(err);
      }
    },
    async renewSession(id, datacenter) {
      try {
        return decodeWire<Session[]>(await caller.renewSession(id, datacenter));
      } catch (err) {
        throw plain(err);
      }
    },
  };
}
