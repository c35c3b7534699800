import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run, startFakeAgent } from "../../../test/harness/cli_agent.ts";
import type { MembershipApi } from "../../http/deps.ts";
import type { HttpServerHandle } from "../../platform/index.ts";
import type { Command } from "../command.ts";
import { createJoinCommand } from "./join.ts";

const joins: Array<[string, boolean]> = [];
const membership: MembershipApi = {
  members: () => [],
  join: async (address, wan) => {
    joins.push([address, wan]);
    if (address.startsWith("10.9.")) throw new Error(`1 error occurred:\n\t* Failed to join ${address}:8301: dial tcp ${address}:8301: i/o timeout\n\n`);
    return 1;
  },
  leave: async () => {},
  forceLeave: async () => {},
};

let agent: HttpServerHandle;
let addr: string;
const join = createJoinCommand({ env: () => ({}) });

beforeAll(async () => {
  agent = await startFakeAgent(membership);
  addr = `-http-addr=http://127.0.0.1:${agent.port}`;
});
afterAll(() => agent.close());

describe("causeway join", () => {
  test("joins each address and counts the ones that worked", async () => {
    joins.length = 0;
    const { code, out, err } = await run(join, [addr, "10.0.0.2", "10.0.0.3:8301", "[::1]:8301"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe("Successfully joined cluster by contacting 3 nodes.\n");
    expect(joins).toEqual([["10.0.0.2", false], ["10.0.0.3:8301", false], ["[::1]:8301", false]]);
  });

  test("-wan joins the WAN pool", async () => {
    joins.length = 0;
    expect((await run(join, ["-wan", addr, "10.1.0.1"])).code).toBe(0);
    expect(joins).toEqual([["10.1.0.1", true]]);
  });

  test("a failed address is reported and the rest still count", async () => {
    const { code, out, err } = await run(join, [addr, "10.9.0.1", "10.0.0.2"]);
    expect(code).toBe(0);
    expect(out).toBe("Successfully joined cluster by contacting 1 nodes.\n");
    expect(err).toBe("Error joining address '10.9.0.1': Unexpected response code: 500 (1 error occurred:\n\t* Failed to join 10.9.0.1:8301: dial tcp 10.9.0.1:8301: i/o timeout)\n");
  });

  test("no address joined is exit 1", async () => {
    const { code, out, err } = await run(join, [addr, "10.9.0.1"]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toEndWith("Failed to join any nodes.\n");
  });

  test("no address given is exit 1 with usage", async () => {
    const { code, out, err } = await run(join, [addr]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toStartWith("At least one address to join must be specified.\n\nUsage: causeway join [options] address ...");
  });

  test("an agent without gossip fails every address", async () => {
    const bare = await startFakeAgent(undefined);
    try {
      const { code, err } = await run(join, [`-http-addr=127.0.0.1:${bare.port}`, "10.0.0.2"]);
      expect(code).toBe(1);
      expect(err).toContain("Error joining address '10.0.0.2': Unexpected response code: 500 (Membership is not available");
    } finally {
      await bare.close();
    }
  });

  test("a bad -http-addr is exit 1", async () => {
    const { code, err } = await run(join, ["-http-addr=ftp://x", "10.0.0.2"]);
    expect(code).toBe(1);
    expect(err).toContain("unsupported scheme");
  });
});
