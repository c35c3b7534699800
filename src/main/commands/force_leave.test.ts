import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run, startFakeAgent } from "../../../test/harness/cli_agent.ts";
import type { MembershipApi } from "../../http/deps.ts";
import type { HttpServerHandle } from "../../platform/index.ts";
import type { Command } from "../command.ts";
import { createForceLeaveCommand } from "./force_leave.ts";

const calls: Array<[string, { prune: boolean; wan: boolean }]> = [];
const membership: MembershipApi = {
  members: (wan) => (wan ? [] : [{ name: "c1", addr: "10.0.0.9", port: 8301, tags: {}, status: "failed" }, { name: "web/1", addr: "10.0.0.8", port: 8301, tags: {}, status: "failed" }]),
  join: async () => 1,
  leave: async () => {},
  forceLeave: async (node, options) => {
    calls.push([node, options]);
    if (options.wan && node === "ghost.dc2") throw new Error("node not found in the WAN pool");
  },
};

let agent: HttpServerHandle;
let addr: string;
const forceLeave = createForceLeaveCommand({ env: () => ({}) });

beforeAll(async () => {
  agent = await startFakeAgent(membership);
  addr = `-http-addr=http://127.0.0.1:${agent.port}`;
});
afterAll(() => agent.close());

describe("causeway force-leave", () => {
  test("forces a node out silently; -prune and -wan are passed on", async () => {
    calls.length = 0;
    expect(await run(forceLeave, [addr, "c1"])).toEqual({ code: 0, out: "", err: "" });
    expect(await run(forceLeave, [addr, "-prune", "c1"])).toEqual({ code: 0, out: "", err: "" });
    expect(await run(forceLeave, [addr, "-prune", "-wan", "s2.dc2"])).toEqual({ code: 0, out: "", err: "" });
    expect(calls).toEqual([
      ["c1", { prune: false, wan: false }],
      ["c1", { prune: true, wan: false }],
      ["s2.dc2", { prune: true, wan: true }],
    ]);
  });

  test("node names are escaped in the path", async () => {
    calls.length = 0;
    expect((await run(forceLeave, [addr, "web/1"])).code).toBe(0);
    expect(calls).toEqual([["web/1", { prune: false, wan: false }]]);
  });

  test("an unknown node is exit 1 with Consul's message", async () => {
    const { code, out, err } = await run(forceLeave, [addr, "ghost"]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toBe("Error force leaving: Unexpected response code: 400 (agent: No node found with name 'ghost')\n");
    const wan = await run(forceLeave, [addr, "-wan", "ghost.dc2"]);
    expect(wan.code).toBe(1);
    expect(wan.err).toBe("Error force leaving: Unexpected response code: 500 (node not found in the WAN pool)\n");
  });

  test("exactly one node name is required", async () => {
    for (const argv of [[addr], [addr, "a", "b"]]) {
      const { code, out, err } = await run(forceLeave, argv);
      expect(code).toBe(1);
      expect(out).toBe("");
      expect(err).toStartWith("A single node name must be specified to force leave.\n\nUsage: causeway force-leave [options] name");
    }
  });

  test("-h prints usage", async () => {
    const { code, out } = await run(forceLeave, ["-h"]);
    expect(code).toBe(0);
    expect(out).toContain("-prune");
  });
});
