/** The Operator service's token checks (Consul's Operator endpoints: operator:read, write for changes), in process. */
import { describe, expect, test } from "bun:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { Operator } from "../gen/causeway/status/v1/status_pb.ts";
import type { ConsensusStatus } from "../consensus/index.ts";
import type { RpcContext } from "./forward.ts";
import { registerStatusServices } from "./status_service.ts";
import { TOKEN_HEADER } from "./state_service.ts";

function operatorWith(allowed: Record<string, "read" | "write">) {
  const asked: string[] = [];
  const ctx: RpcContext = {
    datacenter: "dc1", node: "s1",
    raft: { status: () => ({ role: "Leader", leader: "s1", commit: 5, config: { voters: ["s1"], learners: [] } }) as unknown as ConsensusStatus, changeMembership: () => Promise.reject(new Error("unused")) },
    servers: { lookup: () => ({ node: "s1", address: "127.0.0.1:8300" }) },
    pool: { transport: () => { throw new Error("unused"); }, connections: () => 0, retire: () => 0, targets: () => 0, close: () => {} },
    requireOperator: async (token, access) => {
      asked.push(`${token || "<none>"} ${access}`);
      const has = allowed[token];
      if (has === undefined) throw new ConnectError("ACL not found", Code.PermissionDenied);
      if (access === "write" && has !== "write") throw new ConnectError("Permission denied", Code.PermissionDenied);
    },
  } as RpcContext;
  const client = createClient(Operator, createRouterTransport((r) => registerStatusServices(r, ctx)));
  const as = (token?: string) => (token === undefined ? {} : { headers: { [TOKEN_HEADER]: token } });
  return { client, asked, as };
}

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
    return "allowed";
  } catch (err) {
    return (err as ConnectError).rawMessage;
  }
};

describe("Operator calls with ACLs", () => {
  test("reading the Raft configuration needs operator:read; removing a peer operator:write; no token is the anonymous one", async () => {
    const { client, asked, as } = operatorWith({ reader: "read", admin: "write" });
    expect((await client.raftGetConfiguration({}, as("reader"))).servers.map((s) => s.id)).toEqual(["s1"]);
    expect(await refusal(client.raftGetConfiguration({}, as()))).toBe("ACL not found");
    expect(await refusal(client.raftRemovePeer({ id: "s1" }, as("reader")))).toBe("Permission denied");
    expect(await refusal(client.raftRemovePeer({ id: "nope" }, as("admin")))).toBe('id "nope" was not found in the Raft configuration');
    expect(await refusal(client.autopilotServerHealth({}, as("reader")))).toBe("autopilot is not running on this server");
    expect(asked).toEqual(["reader read", "<none> read", "reader write", "admin write", "reader read"]);
  });
});
