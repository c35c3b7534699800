/** Which ACL token the State service hands its backend: the caller's over the network, "" when it sent none; in process, the given one. */
import { describe, expect, test } from "bun:test";
import { createRouterTransport } from "@connectrpc/connect";
import type { ConsensusStatus } from "../consensus/index.ts";
import type { RpcContext } from "./forward.ts";
import { createRemoteStateCaller, createServerStateCaller, registerStateService, type StateBackend } from "./state_service.ts";

function setup() {
  const seen: (string | undefined)[] = [];
  const unused = () => Promise.reject(new Error("unused"));
  const backend: StateBackend = {
    linearizableRead: unused, renewSession: unused, signLeaf: unused, setCAConfiguration: unused, signIntermediate: unused,
    apply: async (_bytes, token) => (seen.push(token), new Uint8Array()),
    query: async (_bytes, options) => (seen.push(options.token), { result: new Uint8Array(), index: 1 }),
  };
  const ctx: RpcContext = {
    datacenter: "dc1", node: "s1", pool: { transport: () => { throw new Error("unused"); }, connections: () => 0, retire: () => 0, targets: () => 0, close: () => {} },
    raft: { status: () => ({ role: "Leader", leader: "s1" }) as unknown as ConsensusStatus, changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: () => undefined },
  };
  const server = createServerStateCaller(ctx, backend);
  const transport = createRouterTransport((r) => registerStateService(r, server));
  return { seen, server, remote: createRemoteStateCaller(() => transport) };
}

describe("the ACL token a State call carries", () => {
  test("over the network: the x-consul-token it sent, or \"\" (never trusted as the server's own)", async () => {
    const { seen, remote } = setup();
    await remote.apply(new Uint8Array([1]), undefined, "secret-1");
    await remote.apply(new Uint8Array([1]));
    await remote.query(new Uint8Array([1]), { token: "secret-2" });
    await remote.query(new Uint8Array([1]));
    expect(seen).toEqual(["secret-1", "", "secret-2", ""]);
  });

  test("in process: the given token, and undefined for the server's own duties", async () => {
    const { seen, server } = setup();
    await server.apply(new Uint8Array([1]), undefined, "t");
    await server.apply(new Uint8Array([1]));
    await server.query(new Uint8Array([1]), {});
    expect(seen).toEqual(["t", undefined, undefined]);
  });
});
