import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../test/harness/cli_http_fake.ts";
import { createMaintCommand } from "./maint.ts";

let agent: RecordingAgent;
let maint: ReturnType<typeof createMaintCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  maint = createMaintCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

const SELF = { "GET /v1/agent/self": { body: { Config: { NodeName: "n1" } } } };

describe("causeway maint", () => {
  test("without -enable or -disable lists the node's and the services' maintenance, in check ID order", async () => {
    agent.reset({
      ...SELF,
      "GET /v1/agent/checks": {
        body: {
          "_service_maintenance:web-2": { CheckID: "_service_maintenance:web-2", ServiceID: "web-2", Notes: "patching" },
          "service:web": { CheckID: "service:web", ServiceID: "web", Notes: "" },
          _node_maintenance: { CheckID: "_node_maintenance", ServiceID: "", Notes: "kernel upgrade" },
        },
      },
    });
    expect(await run(maint, [])).toEqual({
      code: 0,
      out: "Node:\n  Name:   n1\n  Reason: kernel upgrade\n\nService:\n  ID:     web-2\n  Reason: patching\n\n",
      err: "",
    });
    expect(agent.lines()).toEqual(["GET /v1/agent/self", "GET /v1/agent/checks"]);
  });

  test("nothing in maintenance prints nothing", async () => {
    agent.reset({ ...SELF, "GET /v1/agent/checks": { body: {} } });
    expect(await run(maint, [])).toEqual({ code: 0, out: "", err: "" });
  });

  test.each([
    [["-enable", "-reason", "kernel upgrade"], "PUT /v1/agent/maintenance?enable=true&reason=kernel+upgrade", "Node maintenance is now enabled\n"],
    [["-enable"], "PUT /v1/agent/maintenance?enable=true", "Node maintenance is now enabled\n"],
    [["-disable"], "PUT /v1/agent/maintenance?enable=false", "Node maintenance is now disabled\n"],
    [["-enable", "-service", "web 2"], "PUT /v1/agent/service/maintenance/web%202?enable=true", 'Service maintenance is now enabled for "web 2"\n'],
    [["-disable", "-service", "web"], "PUT /v1/agent/service/maintenance/web?enable=false", 'Service maintenance is now disabled for "web"\n'],
  ])("%p: %s", async (args: string[], line: string, out: string) => {
    agent.reset({ ...SELF, "PUT /v1/agent/maintenance": { body: "" }, "PUT /v1/agent/service/maintenance/web%202": { body: "" }, "PUT /v1/agent/service/maintenance/web": { body: "" } });
    expect(await run(maint, args)).toEqual({ code: 0, out, err: "" });
    expect(agent.lines()).toEqual(["GET /v1/agent/self", line]);
  });

  test.each([
    [["-enable", "-disable"], "Only one of -enable or -disable may be provided\n"],
    [["-disable", "-reason", "x"], "Reason may only be provided with -enable\n"],
    [["-service", "web"], "Service requires either -enable or -disable\n"],
  ])("%p is refused before any request: %s", async (args: string[], err: string) => {
    agent.reset({});
    expect(await run(maint, args)).toEqual({ code: 1, out: "", err });
    expect(agent.lines()).toEqual([]);
  });

  test("an unknown service is the agent's 404 in Consul's words", async () => {
    agent.reset({ ...SELF, "PUT /v1/agent/service/maintenance/nope": { status: 404, body: "Unknown service ID \"nope\"" } });
    const { code, err } = await run(maint, ["-enable", "-service", "nope"]);
    expect(code).toBe(1);
    expect(err).toBe('Error enabling service maintenance: Unexpected response code: 404 (Unknown service ID "nope")\n');
  });
});
