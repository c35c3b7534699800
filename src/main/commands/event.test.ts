import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../test/harness/cli_http_fake.ts";
import { createEventCommand } from "./event.ts";

let agent: RecordingAgent;
let event: ReturnType<typeof createEventCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  event = createEventCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

const ROUTES = {
  "GET /v1/agent/self": { body: { Config: { NodeName: "n1" } } },
  "PUT /v1/event/fire/deploy": { body: { ID: "b54fe110-7af5-cafc-d1fb-afc8ba432b1c", Name: "deploy" } },
};

describe("causeway event", () => {
  test("fires the event with its filters and payload and prints its ID", async () => {
    agent.reset(ROUTES);
    expect(await run(event, ["-name", "deploy", "-node", "^web", "-service", "api", "-tag", "v2", "v1.2.3"]))
      .toEqual({ code: 0, out: "Event ID: b54fe110-7af5-cafc-d1fb-afc8ba432b1c\n", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/agent/self", "PUT /v1/event/fire/deploy?node=%5Eweb&service=api&tag=v2"]);
    expect(agent.requests.at(-1)!.text).toBe("v1.2.3");
  });

  test("filters are Go regexps, as the agent reads them: (?i) and named groups pass", async () => {
    agent.reset(ROUTES);
    expect((await run(event, ["-name", "deploy", "-node", "(?i)web", "-service", "(?P<svc>api)"])).code).toBe(0);
  });

  test("without a payload the body is empty", async () => {
    agent.reset(ROUTES);
    expect((await run(event, ["-name", "deploy"])).code).toBe(0);
    expect(agent.requests.at(-1)!.body.length).toBe(0);
  });

  test.each([
    [[], "Event name must be specified\n"],
    [["-name", "deploy", "-node", "("], "Failed to compile node filter regexp: "],
    [["-name", "deploy", "-node", "a(?=b)"], "Failed to compile node filter regexp: "],
    [["-name", "deploy", "-tag", "v2"], "Cannot provide tag filter without service filter.\n"],
    [["-name", "deploy", "a", "b"], "Too many command line arguments.\n"],
  ])("%p is refused before any request", async (args: string[], err: string) => {
    agent.reset({});
    const r = await run(event, args);
    expect([r.code, r.out]).toEqual([1, ""]);
    expect(r.err).toStartWith(err);
    expect(agent.lines()).toEqual([]);
  });

  test("a refused event is exit 1 in Consul's words", async () => {
    agent.reset({ ...ROUTES, "PUT /v1/event/fire/deploy": { status: 403, body: "Permission denied" } });
    const { code, err } = await run(event, ["-name", "deploy"]);
    expect(code).toBe(1);
    expect(err).toBe("Error firing event: Unexpected response code: 403 (Permission denied)\n");
  });
});
