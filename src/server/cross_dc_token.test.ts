import { describe, expect, test } from "bun:test";
import type { StateCaller } from "../rpc/index.ts";
import { crossDcToken } from "./server.ts";

describe("the replication token on a server's own calls to other datacenters", () => {
  test("added to calls to another datacenter that carry no token; calls here stay the server's own", async () => {
    const seen: (string | undefined)[] = [];
    const base = {
      apply: async (_c: Uint8Array, _dc?: string, token?: string) => (seen.push(token), new Uint8Array()),
      query: async (_q: Uint8Array, o: { token?: string } = {}) => (seen.push(o.token), { result: new Uint8Array(), index: 1, knownLeader: true, lastContactMs: 0 }),
    } as unknown as StateCaller;
    const c = crossDcToken(base, "dc2", () => "repl");
    await c.apply(new Uint8Array(), "dc1");
    await c.apply(new Uint8Array(), "dc2");
    await c.apply(new Uint8Array(), undefined);
    await c.apply(new Uint8Array(), "dc1", "own");
    await c.query(new Uint8Array(), { datacenter: "dc1" });
    await c.query(new Uint8Array(), {});
    expect(seen).toEqual(["repl", undefined, undefined, "own", "repl", undefined]);
  });
});
