import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../test/harness/cli_http_fake.ts";
import { createInfoCommand, formatStats } from "./info.ts";

let agent: RecordingAgent;
let info: ReturnType<typeof createInfoCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  info = createInfoCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

const STATS = {
  serf_lan: { members: "3", failed: "0", encrypted: "false" },
  agent: { services: "2", checks: "1" },
  raft: { state: "Leader", applied_index: "45", "Z": "last", "a": "first" },
};

describe("causeway info", () => {
  test("every Stats section and key, sorted as Go sorts strings, in Consul's layout", async () => {
    agent.reset({ "GET /v1/agent/self": { body: { Config: {}, Stats: STATS } } });
    const { code, out, err } = await run(info, []);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toBe([
      "agent:", "\tchecks = 1", "\tservices = 2",
      "raft:", "\tZ = last", "\ta = first", "\tapplied_index = 45", "\tstate = Leader",
      "serf_lan:", "\tencrypted = false", "\tfailed = 0", "\tmembers = 3", "",
    ].join("\n"));
    expect(agent.lines()).toEqual(["GET /v1/agent/self"]);
  });

  test("an agent that fails is exit 1 with Consul's words", async () => {
    agent.reset({ "GET /v1/agent/self": { status: 403, body: "Permission denied" } });
    const { code, out, err } = await run(info, []);
    expect({ code, out }).toEqual({ code: 1, out: "" });
    expect(err).toStartWith("Error querying agent: Unexpected response code: 403");
  });

  test("no Stats prints nothing", () => {
    expect(formatStats({})).toBe("");
  });
});
