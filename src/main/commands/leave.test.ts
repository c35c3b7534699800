import { describe, expect, test } from "bun:test";
import { runCommand as run, startFakeAgent } from "../../../test/harness/cli_agent.ts";
import type { MembershipApi } from "../../http/deps.ts";
import type { HttpServerHandle } from "../../platform/index.ts";
import type { Command } from "../command.ts";
import { createLeaveCommand } from "./leave.ts";

function membership(leave: () => Promise<void>): MembershipApi {
  return { members: () => [], join: async () => 1, leave, forceLeave: async () => {} };
}

const leave = createLeaveCommand({ env: () => ({}) });

describe("causeway leave", () => {
  test("asks the agent to leave and reports a graceful leave", async () => {
    let left = 0;
    const agent = await startFakeAgent(membership(async () => void left++));
    try {
      const { code, out, err } = await run(leave, [`-http-addr=http://127.0.0.1:${agent.port}`]);
      expect({ code, out, err }).toEqual({ code: 0, out: "Graceful leave complete\n", err: "" });
      expect(left).toBe(1);
    } finally {
      await agent.close();
    }
  });

  test("a failed leave is exit 1 with the agent's message", async () => {
    const agent = await startFakeAgent(membership(async () => Promise.reject(new Error("timeout waiting for leave broadcast"))));
    try {
      const { code, out, err } = await run(leave, [`-http-addr=http://127.0.0.1:${agent.port}`]);
      expect(code).toBe(1);
      expect(out).toBe("");
      expect(err).toBe("Error leaving: Unexpected response code: 500 (timeout waiting for leave broadcast)\n");
    } finally {
      await agent.close();
    }
  });

  test("the address comes from the environment when no flag is given", async () => {
    const agent = await startFakeAgent(membership(async () => {}));
    try {
      const viaEnv = createLeaveCommand({ env: () => ({ CONSUL_HTTP_ADDR: `127.0.0.1:${agent.port}` }) });
      expect((await run(viaEnv, [])).code).toBe(0);
    } finally {
      await agent.close();
    }
  });

  test("arguments are refused as Consul does, with usage on stdout", async () => {
    const { code, out, err } = await run(leave, ["a", "b"]);
    expect(code).toBe(1);
    expect(err).toBe("Error found unexpected args: [a b]\n");
    expect(out).toContain("Usage: causeway leave [options]");
  });

  test("an unreachable agent is exit 1", async () => {
    const gone = await startFakeAgent(undefined);
    const port = gone.port;
    await gone.close();
    const { code, err } = await run(leave, [`-http-addr=127.0.0.1:${port}`]);
    expect(code).toBe(1);
    expect(err).toBe(`Error leaving: Put "http://127.0.0.1:${port}/v1/agent/leave": connection refused\n`);
  });
});
