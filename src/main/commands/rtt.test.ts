import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../test/harness/cli_http_fake.ts";
import { createRttCommand } from "./rtt.ts";

/** A coordinate `ms` milliseconds from the origin along the first axis. */
const at = (ms: number, height = 0) => ({ Vec: [ms / 1000, 0, 0, 0, 0, 0, 0, 0], Error: 0.2, Adjustment: 0, Height: height });
const SELF = { Config: { NodeName: "agent-1", Datacenter: "dc1" } };
const NODES = [
  { Node: "agent-1", Segment: "", Coord: at(0) },
  { Node: "web", Segment: "", Coord: at(1.2345, 0.0000005) },
  { Node: "db", Segment: "", Coord: at(10) },
  { Node: "db", Segment: "seg", Coord: at(50) },
  { Node: "seg-only", Segment: "seg", Coord: at(40) },
];
const DCS = [
  { Datacenter: "dc1", AreaID: "wan", Coordinates: [{ Node: "agent-1", Segment: "", Coord: at(5) }, { Node: "s1", Segment: "", Coord: at(0) }] },
  { Datacenter: "dc2", AreaID: "wan", Coordinates: [{ Node: "s2", Segment: "", Coord: at(25.5) }] },
];

let agent: RecordingAgent;
let rtt: ReturnType<typeof createRttCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  rtt = createRttCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

const routes = { "GET /v1/agent/self": { body: SELF }, "GET /v1/coordinate/nodes": { body: NODES }, "GET /v1/coordinate/datacenters": { body: DCS } };

describe("causeway rtt", () => {
  test("LAN: two nodes, Consul's line (truncated to whole ns, 3 decimals); names case-insensitive", async () => {
    agent.reset(routes);
    expect(await run(rtt, ["web", "AGENT-1"])).toEqual({ code: 0, out: "Estimated web <-> AGENT-1 rtt: 1.235 ms (using LAN coordinates)\n", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/coordinate/nodes"]);
  });

  test("LAN: the second node defaults to the agent's; a single-segment node is compared in its segment", async () => {
    agent.reset(routes);
    expect((await run(rtt, ["db"])).out).toBe("Estimated db <-> agent-1 rtt: 10.000 ms (using LAN coordinates)\n");
    expect(agent.lines()).toEqual(["GET /v1/agent/self", "GET /v1/coordinate/nodes"]);
    expect((await run(rtt, ["seg-only", "db"])).out).toBe("Estimated seg-only <-> db rtt: 10.000 ms (using LAN coordinates)\n");
  });

  test("WAN: <node>.<dc> names, the second defaulting to the agent's", async () => {
    agent.reset(routes);
    expect(await run(rtt, ["-wan", "s2.dc2"])).toEqual({ code: 0, out: "Estimated s2.dc2 <-> agent-1.dc1 rtt: 20.500 ms (using WAN coordinates)\n", err: "" });
  });

  test("WAN: both given", async () => {
    agent.reset(routes);
    expect(await run(rtt, ["-wan", "s2.dc2", "s1.dc1"])).toEqual({ code: 0, out: "Estimated s2.dc2 <-> s1.dc1 rtt: 25.500 ms (using WAN coordinates)\n", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/coordinate/datacenters"]);
  });

  test.each([
    [["nobody", "web"], 'Could not find a coordinate for node "nobody"\n'],
    [["web", "ghost"], 'Could not find a coordinate for node "ghost"\n'],
    [["-wan", "s9.dc2", "s1.dc1"], 'Could not find a coordinate for node "s9.dc2"\n'],
    [["-wan", "s2", "s1.dc1"], "Node names must be specified as <node name>.<datacenter> with -wan\n"],
  ])("%j fails naming the problem", async (argv, err) => {
    agent.reset(routes);
    expect(await run(rtt, argv)).toEqual({ code: 1, out: "", err });
  });

  test("usage and request errors", async () => {
    agent.reset({ "GET /v1/coordinate/nodes": { status: 401, body: "Coordinate support disabled" }, "GET /v1/agent/self": { status: 500, body: "boom" } });
    const none = await run(rtt, []);
    expect([none.code, none.err.startsWith("One or two node names must be specified\n\nUsage: causeway rtt")]).toEqual([1, true]);
    expect((await run(rtt, ["a", "b", "c"])).code).toBe(1);
    expect(await run(rtt, ["a", "b"])).toEqual({ code: 1, out: "", err: "Error getting coordinates: Unexpected response code: 401 (Coordinate support disabled)\n" });
    expect(await run(rtt, ["a"])).toEqual({ code: 1, out: "", err: "Unable to look up agent info: Unexpected response code: 500 (boom)\n" });
  });
});
