import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../test/harness/cli_http_fake.ts";
import { createReloadCommand } from "./reload.ts";

let agent: RecordingAgent;
let reload: ReturnType<typeof createReloadCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  reload = createReloadCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

describe("causeway reload", () => {
  test("asks the agent to reload and says so", async () => {
    agent.reset({ "PUT /v1/agent/reload": { body: "" } });
    expect(await run(reload, [])).toEqual({ code: 0, out: "Configuration reload triggered\n", err: "" });
    expect(agent.lines()).toEqual(["PUT /v1/agent/reload"]);
  });

  test("a failed reload is exit 1 with the agent's reason", async () => {
    agent.reset({ "PUT /v1/agent/reload": { status: 500, body: "Failed to reload configs: c.json: invalid config key colour" } });
    expect(await run(reload, [])).toEqual({
      code: 1, out: "", err: "Error reloading: Unexpected response code: 500 (Failed to reload configs: c.json: invalid config key colour)\n",
    });
  });
});
