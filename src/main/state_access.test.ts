import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import type { StateCaller } from "../rpc/index.ts";
import { createStateAccess } from "./state_access.ts";

/** A StateCaller whose every call fails with `err`. */
const failing = (err: unknown): StateCaller => {
  const fail = () => Promise.reject(err);
  return { apply: fail, query: fail, renewSession: fail, signLeaf: fail, setCAConfiguration: fail };
};

/** The error `p` rejects with. */
const thrown = (p: Promise<unknown>) => p.then(() => new Error("no error"), (e: Error) => e);

describe("state access errors", () => {
  test("a refusal for size answers 413 and one for an invalid request 400, with the server's words (the HTTP contract: an own statusCode)", async () => {
    const tooLarge = new ConnectError("Request too large: the encoded Raft entry is 20971600 bytes, more than the 15728640-byte limit", Code.ResourceExhausted);
    const e = await thrown(createStateAccess(failing(tooLarge)).write({ type: "register", req: { Node: "n", Address: "a" } }, undefined));
    expect([e.message, Object.hasOwn(e, "statusCode"), (e as { statusCode?: number }).statusCode]).toEqual([tooLarge.rawMessage, true, 413]);
    const invalid = new ConnectError("invalid snapshot: lastIndex must be a non-negative integer", Code.InvalidArgument);
    const r = await thrown(createStateAccess(failing(invalid)).read({ type: "kv-get", key: "k" } as never, { minIndex: 0, maxWaitMs: 0 } as never));
    expect([r.message, (r as { statusCode?: number }).statusCode]).toEqual([invalid.rawMessage, 400]);
  });

  test("other failures keep no status (the HTTP layer answers 500)", async () => {
    const e = await thrown(createStateAccess(failing(new ConnectError("No cluster leader", Code.Unavailable))).write({ type: "register", req: { Node: "n", Address: "a" } }, undefined));
    expect([e.message, Object.hasOwn(e, "statusCode")]).toEqual(["No cluster leader", false]);
  });
});
