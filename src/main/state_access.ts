/**
 * The HTTP API's way to the replicated state (its StateAccess dependency) over a StateCaller: the
 * server's own (serve here or forward) or a client agent's (ask a server). Reads and results travel
 * in the wire encoding of src/rpc/state_wire.ts, commands in the state store's codec.
 */
import type { StateAccess } from "../http/index.ts";
import type { Session } from "../model/index.ts";
import { decodeWire, encodeWire, plainRpcError as plain, type StateCaller } from "../rpc/index.ts";
import { encodeCommand, type StateResult } from "../state/index.ts";

/**
 * `defaultToken()` (the agent's default token now, "" for the anonymous token) stands in for a request
 * that carries no token, so every call made through this access carries one: a call without a token
 * is one of the server's own duties, which only the server itself may make.
 */
export function createStateAccess(caller: StateCaller, defaultToken: () => string = () => ""): StateAccess & { renewSession(id: string, dc: string | undefined, token?: string): Promise<readonly Session[]> } {
  return {
    async read(query, options) {
      try {
        const out = await caller.query(encodeWire(query), {
          datacenter: options.datacenter,
          consistency: options.consistency,
          minIndex: options.minIndex,
          maxWaitMs: options.maxWaitMs,
          signal: options.signal,
          token: options.token ?? defaultToken(),
        });
        return { value: decodeWire(out.result), meta: { index: out.index, knownLeader: out.knownLeader, lastContactMs: out.lastContactMs } };
      } catch (err) {
        throw plain(err);
      }
    },
    async write(command, datacenter, token) {
      try {
        return decodeWire<StateResult>(await caller.apply(encodeCommand(command), datacenter, token ?? defaultToken()));
      } catch (err) {
        throw plain(err);
      }
    },
    async renewSession(id, datacenter, token) {
      try {
        return decodeWire<Session[]>(await caller.renewSession(id, datacenter, token ?? defaultToken()));
      } catch (err) {
        throw plain(err);
      }
    },
  };
}
