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

describe("causeway operator raft transfer-leader", () => {
  const PATH = "/v1/operator/raft/transfer-leader";

  test("POSTs (with ?id= for -id, ?dc= for -datacenter) and prints Success", async () => {
    agent.reset({ [`POST ${PATH}`]: { body: { Success: true } } });
    expect(await run(operator, ["raft", "transfer-leader"])).toEqual({ code: 0, out: "Success\n", err: "" });
    expect(await run(operator, ["raft", "transfer-leader", "-id=9f6b2c1e-0000-4000-8000-000000000002", "-datacenter=dc2", "-token=secret"])).toEqual({ code: 0, out: "Success\n", err: "" });
    expect(agent.lines()).toEqual([`POST ${PATH}`, `POST ${PATH}?dc=dc2&id=9f6b2c1e-0000-4000-8000-000000000002`]);
    expect(agent.requests[1]!.headers.get("X-Consul-Token")).toBe("secret");
  });

  test("the server's refusal is exit 1 with Consul's wording", async () => {
    agent.reset({ [`POST ${PATH}`]: { status: 400, body: "Could not find address for server id nope" } });
    expect(await run(operator, ["raft", "transfer-leader", "-id=nope"])).toEqual({
      code: 1, out: "", err: "Error transfering leadership: Failed to transfer leadership Unexpected response code: 400 (Could not find address for server id nope)\n",
    });
    agent.reset({ [`POST ${PATH}`]: { status: 500, body: "cannot find peer" } });
    expect(await run(operator, ["raft", "transfer-leader"])).toEqual({ code: 1, out: "", err: "Error transfering leadership: Failed to transfer leadership Unexpected response code: 500 (cannot find peer)\n" });
    agent.reset({ [`POST ${PATH}`]: { body: { Success: false } } });
    expect(await run(operator, ["raft", "transfer-leader"])).toEqual({ code: 1, out: "", err: "Error transfering leadership: Failed to transfer leadership\n" });
  });

  test("arguments are refused before any request", async () => {
    agent.reset();
    expect(await run(operator, ["raft", "transfer-leader", "s2"])).toEqual({ code: 1, out: "", err: "Too many arguments (expected 0, got 1)\n" });
    expect(agent.requests).toEqual([]);
  });
});

describe("causeway operator", () => {
  test("nested help; unknown flags name the flag", async () => {
    expect((await run(operator, ["-h"])).out).toContain(
      "Subcommands:\n    autopilot    Provides tools for modifying Autopilot configuration\n    raft         Provides cluster-level tools for operators\n",
    );
    const raft = await run(operator, ["raft"]);
    expect(raft.code).toBe(1);
    expect(raft.err).toContain(
      "    list-peers         Display the current Raft peer configuration\n    remove-peer        Remove a server from the Raft configuration\n    transfer-leader    Transfer raft leadership to another node\n",
    );
    const bad = await run(operator, ["raft", "list-peers", "-bogus"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toStartWith("flag provided but not defined: -bogus\nUsage: causeway operator raft list-peers");
  });
});

const AP = {
  CleanupDeadServers: true, LastContactThreshold: "200ms", MaxTrailingLogs: 250, MinQuorum: 0, ServerStabilizationTime: "10s",
  RedundancyZoneTag: "", DisableUpgradeMigration: false, UpgradeVersionTag: "", CreateIndex: 5, ModifyIndex: 7,
};
const AP_PATH = "/v1/operator/autopilot/configuration";

describe("causeway operator autopilot get-config", () => {
  test("prints Consul 1.8's lines", async () => {
    agent.reset({ [`GET ${AP_PATH}`]: { body: { ...AP, RedundancyZoneTag: "zone" } } });
    expect(await run(operator, ["autopilot", "get-config", "-stale"])).toEqual({
      code: 0,
      err: "",
      out: [
        "CleanupDeadServers = true", "LastContactThreshold = 200ms", "MaxTrailingLogs = 250", "MinQuorum = 0", "ServerStabilizationTime = 10s",
        'RedundancyZoneTag = "zone"', "DisableUpgradeMigration = false", 'UpgradeVersionTag = ""', "",
      ].join("\n"),
    });
    expect(agent.lines()).toEqual([`GET ${AP_PATH}?stale=`]);
  });

  test("an agent error is exit 1", async () => {
    agent.reset({ [`GET ${AP_PATH}`]: { status: 500, body: "autopilot config not initialized yet" } });
    expect(await run(operator, ["autopilot", "get-config"])).toEqual({ code: 1, out: "", err: "Error querying Autopilot configuration: Unexpected response code: 500 (autopilot config not initialized yet)\n" });
  });
});

describe("causeway operator autopilot set-config", () => {
  test("changes only the given fields and writes with ?cas=<ModifyIndex>", async () => {
    agent.reset({ [`GET ${AP_PATH}`]: { body: AP }, [`PUT ${AP_PATH}`]: { body: true } });
    const r = await run(operator, ["autopilot", "set-config", "-cleanup-dead-servers=false", "-last-contact-threshold", "1500ms", "-min-quorum=3", "-datacenter=dc1"]);
    expect(r).toEqual({ code: 0, out: "Configuration updated!\n", err: "" });
    expect(agent.lines()).toEqual([`GET ${AP_PATH}?dc=dc1`, `PUT ${AP_PATH}?cas=7&dc=dc1`]);
    expect(JSON.parse(agent.requests[1]!.text)).toEqual({ ...AP, CleanupDeadServers: false, LastContactThreshold: "1.5s", MinQuorum: 3 });
  });

  test("a lost check-and-set is exit 1 with Consul's message", async () => {
    agent.reset({ [`GET ${AP_PATH}`]: { body: AP }, [`PUT ${AP_PATH}`]: { body: false } });
    expect(await run(operator, ["autopilot", "set-config", "-max-trailing-logs=10"])).toEqual({ code: 1, out: "Configuration could not be atomically updated, please try again\n", err: "" });
  });

  test("bad flag values are usage errors before any request", async () => {
    agent.reset();
    const dur = await run(operator, ["autopilot", "set-config", "-server-stabilization-time=soon"]);
    expect(dur.code).toBe(1);
    expect(dur.err).toStartWith('invalid value "soon" for flag -server-stabilization-time: time: invalid duration soon\nUsage: causeway operator autopilot set-config');
    const count = await run(operator, ["autopilot", "set-config", "-min-quorum=-1"]);
    expect(count.code).toBe(1);
    expect(count.err).toContain("-min-quorum");
    const bool = await run(operator, ["autopilot", "set-config", "-cleanup-dead-servers=maybe"]);
    expect(bool.code).toBe(1);
    expect(agent.requests).toEqual([]);
  });

  test("errors reading or writing the configuration are exit 1", async () => {
    agent.reset({ [`GET ${AP_PATH}`]: { status: 500, body: "No cluster leader" } });
    expect(await run(operator, ["autopilot", "set-config", "-min-quorum=1"])).toEqual({ code: 1, out: "", err: "Error querying Autopilot configuration: Unexpected response code: 500 (No cluster leader)\n" });
    agent.reset({ [`GET ${AP_PATH}`]: { body: AP }, [`PUT ${AP_PATH}`]: { status: 400, body: "Error parsing autopilot config: EOF" } });
    expect(await run(operator, ["autopilot", "set-config", "-min-quorum=1"])).toEqual({ code: 1, out: "", err: "Error setting Autopilot configuration: Unexpected response code: 400 (Error parsing autopilot config: EOF)\n" });
  });
});
