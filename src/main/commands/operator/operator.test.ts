import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createOperatorCommand } from "../operator.ts";

const CONFIG = {
  Servers: [
    { ID: "9f6b2c1e-0000-4000-8000-000000000001", Node: "server-1", Address: "10.0.0.1:8300", Leader: true, Voter: true, ProtocolVersion: "3" },
    { ID: "9f6b2c1e-0000-4000-8000-000000000002", Node: "server-22", Address: "10.0.0.22:8300", Leader: false, Voter: false, ProtocolVersion: "" },
  ],
  Index: 42,
};

let agent: RecordingAgent;
let operator: ReturnType<typeof createOperatorCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  operator = createOperatorCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

describe("causeway operator raft list-peers", () => {
  test("prints Consul 1.8's table", async () => {
    agent.reset({ "GET /v1/operator/raft/configuration": { body: CONFIG } });
    const { code, out, err } = await run(operator, ["raft", "list-peers"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "Node       ID                                    Address         State     Voter  RaftProtocol",
        "server-1   9f6b2c1e-0000-4000-8000-000000000001  10.0.0.1:8300   leader    true   3",
        "server-22  9f6b2c1e-0000-4000-8000-000000000002  10.0.0.22:8300  follower  false  <=1",
        "",
      ].join("\n"),
    );
    expect(agent.lines()).toEqual(["GET /v1/operator/raft/configuration"]);
  });

  test("-stale and -datacenter are sent", async () => {
    agent.reset({ "GET /v1/operator/raft/configuration": { body: CONFIG } });
    await run(operator, ["raft", "list-peers", "-stale", "-datacenter=dc2"]);
    expect(agent.lines()).toEqual(["GET /v1/operator/raft/configuration?dc=dc2&stale="]);
  });

  test("an agent error is exit 1", async () => {
    agent.reset({ "GET /v1/operator/raft/configuration": { status: 500, body: "No cluster leader" } });
    expect(await run(operator, ["raft", "list-peers"])).toEqual({ code: 1, out: "", err: "Error getting peers: Failed to retrieve raft configuration: Unexpected response code: 500 (No cluster leader)\n" });
  });
});

describe("causeway operator raft remove-peer", () => {
  test("DELETE /v1/operator/raft/peer?id= or ?address=", async () => {
    agent.reset({ "DELETE /v1/operator/raft/peer": { body: "" } });
    expect(await run(operator, ["raft", "remove-peer", "-id=abc-1"])).toEqual({ code: 0, out: 'Removed peer with id "abc-1"\n', err: "" });
    expect(await run(operator, ["raft", "remove-peer", "-address", "10.0.0.9:8300"])).toEqual({ code: 0, out: 'Removed peer with address "10.0.0.9:8300"\n', err: "" });
    expect(agent.lines()).toEqual(["DELETE /v1/operator/raft/peer?id=abc-1", "DELETE /v1/operator/raft/peer?address=10.0.0.9%3A8300"]);
  });

  test("exactly one of -id and -address", async () => {
    agent.reset();
    expect(await run(operator, ["raft", "remove-peer"])).toEqual({ code: 1, out: "", err: "Error removing peer: an address or id is required for the peer to remove\n" });
    expect(await run(operator, ["raft", "remove-peer", "-id=a", "-address=b"])).toEqual({ code: 1, out: "", err: "Error removing peer: cannot give both an address and id\n" });
    expect(agent.requests).toEqual([]);
  });

  test("an unknown peer is the server's error, exit 1", async () => {
    agent.reset({ "DELETE /v1/operator/raft/peer": { status: 500, body: 'id "x" was not found in the Raft configuration' } });
    expect(await run(operator, ["raft", "remove-peer", "-id=x"])).toEqual({ code: 1, out: "", err: "Error removing peer: Unexpected response code: 500 (id \"x\" was not found in the Raft configuration)\n" });
  });
});

describe("causeway operator", () => {
  test("nested help; unknown flags name the flag", async () => {
    expect((await run(operator, ["-h"])).out).toContain("Subcommands:\n    raft    Provides cluster-level tools for operators\n");
    const raft = await run(operator, ["raft"]);
    expect(raft.code).toBe(1);
    expect(raft.err).toContain("    list-peers     Display the current Raft peer configuration\n    remove-peer    Remove a server from the Raft configuration\n");
    const bad = await run(operator, ["raft", "list-peers", "-bogus"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toStartWith("flag provided but not defined: -bogus\nUsage: causeway operator raft list-peers");
  });
});
