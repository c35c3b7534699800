import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run, startFakeAgent } from "../../../test/harness/cli_agent.ts";
const startFakeAgentAs = (m: MembershipApi | undefined, server = true) => startFakeAgent(m, server, "server-1");
import type { MemberView, MembershipApi } from "../../http/deps.ts";
import type { HttpServerHandle } from "../../platform/index.ts";
import type { Command } from "../command.ts";
import { columnize, createMembersCommand } from "./members.ts";

const LAN: MemberView[] = [
  { name: "c1", addr: "10.0.0.9", port: 8301, tags: { role: "node", dc: "dc1", vsn: "2", build: "1.8.0:abcdef01", id: "c1-id" }, status: "failed" },
  { name: "x1", addr: "fe80::1", port: 8301, tags: {}, status: "alive" },
  { name: "server-1", addr: "10.0.0.1", port: 8301, tags: { role: "consul", dc: "dc1", vsn: "2", build: "0.1.0", port: "8300" }, status: "alive" },
  { name: "c0", addr: "10.0.0.10", port: 18301, tags: { role: "node", dc: "dc1", vsn: "2" }, status: "left" },
];
const WAN: MemberView[] = [
  { name: "server-1.dc1", addr: "10.0.0.1", port: 8302, tags: { role: "consul", dc: "dc1", vsn: "2", build: "0.1.0" }, status: "alive" },
  { name: "server-1.dc2", addr: "10.1.0.1", port: 8302, tags: { role: "consul", dc: "dc2", vsn: "2", build: "0.1.0" }, status: "failed" },
];

const membership: MembershipApi = {
  members: (wan) => (wan ? WAN : LAN),
  join: async () => 1,
  leave: async () => {},
  forceLeave: async () => {},
};

let serverAgent: HttpServerHandle, clientAgent: HttpServerHandle, noGossip: HttpServerHandle;
const url = (h: HttpServerHandle) => `http://127.0.0.1:${h.port}`;
const members = createMembersCommand({ env: () => ({}) });

beforeAll(async () => {
  [serverAgent, clientAgent, noGossip] = await Promise.all([startFakeAgentAs(membership), startFakeAgentAs(membership, false), startFakeAgentAs(undefined)]);
});
afterAll(async () => {
  await Promise.all([serverAgent.close(), clientAgent.close(), noGossip.close()]);
});

describe("columnize", () => {
  test("pads all but the last column to the widest cell, two spaces apart, no trailing newline", () => {
    expect(columnize(["a|bb|c", "ddd|e|ffff", " g |h"])).toBe("a    bb  c\nddd  e   ffff\ng    h");
  });
});

describe("causeway members", () => {
  test("prints Consul's table: servers (<all>) first, then by segment and name", async () => {
    const { code, out, err } = await run(members, [`-http-addr=${url(serverAgent)}`]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "Node      Address          Status  Type     Build  Protocol  DC   Segment",
        "server-1  10.0.0.1:8301    alive   server   0.1.0  2         dc1  <all>",
        "c0        10.0.0.10:18301  left    client   < 0.3  2         dc1  <default>",
        "c1        10.0.0.9:8301    failed  client   1.8.0  2         dc1  <default>",
        "x1        [fe80::1]:8301   alive   unknown                        ",
        "",
      ].join("\n"),
    );
  });

  test("-detailed prints sorted tags, with the segment as shown", async () => {
    const { code, out } = await run(members, ["-detailed", "-http-addr", url(serverAgent)]);
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "Node      Address          Status  Tags",
        "server-1  10.0.0.1:8301    alive   build=0.1.0,dc=dc1,port=8300,role=consul,segment=<all>,vsn=2",
        "c0        10.0.0.10:18301  left    dc=dc1,role=node,segment=<default>,vsn=2",
        "c1        10.0.0.9:8301    failed  build=1.8.0:abcdef01,dc=dc1,id=c1-id,role=node,segment=<default>,vsn=2",
        "x1        [fe80::1]:8301   alive   segment=<default>",
        "",
      ].join("\n"),
    );
  });

  test("-status filters by a regular expression on the status name; no match is exit 2 and silence", async () => {
    const alive = await run(members, [`-http-addr=${url(serverAgent)}`, "-status=^(alive|left)$"]);
    expect(alive.code).toBe(0);
    expect(alive.out.split("\n").slice(1, -1).map((l) => l.split(" ")[0])).toEqual(["server-1", "c0", "x1"]);
    const none = await run(members, [`-http-addr=${url(serverAgent)}`, "-status=leaving"]);
    expect(none).toEqual({ code: 2, out: "", err: "" });
    const bad = await run(members, [`-http-addr=${url(serverAgent)}`, "-status=("]);
    expect(bad.code).toBe(1);
    expect(bad.err).toStartWith("Failed to compile status regexp: ");
  });

  test("-wan lists the WAN pool on a server; on a client (null) nothing matches: exit 2", async () => {
    const wan = await run(members, [`-http-addr=${url(serverAgent)}`, "-wan"]);
    expect(wan.code).toBe(0);
    expect(wan.out).toBe(
      [
        "Node          Address        Status  Type    Build  Protocol  DC   Segment",
        "server-1.dc1  10.0.0.1:8302  alive   server  0.1.0  2         dc1  <all>",
        "server-1.dc2  10.1.0.1:8302  failed  server  0.1.0  2         dc2  <all>",
        "",
      ].join("\n"),
    );
    expect(await run(members, [`-http-addr=${url(clientAgent)}`, "-wan"])).toEqual({ code: 2, out: "", err: "" });
  });

  test("a named segment without segment support is the agent's 400, exit 1", async () => {
    const { code, out, err } = await run(members, [`-http-addr=${url(serverAgent)}`, "-segment=alpha"]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toBe("Error retrieving members: Unexpected response code: 400 (Network segments are not supported in this version of Consul)\n");
  });

  test("an agent without gossip is an error, not an empty list", async () => {
    const { code, err } = await run(members, [`-http-addr=${url(noGossip)}`]);
    expect(code).toBe(1);
    expect(err).toBe("Error retrieving members: Unexpected response code: 500 (Membership is not available: gossip is not running on this agent)\n");
  });

  test("an unreachable agent is exit 1 naming the URL", async () => {
    const gone = await startFakeAgentAs(membership);
    const port = gone.port;
    await gone.close();
    const { code, out, err } = await run(members, [`-http-addr=127.0.0.1:${port}`]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toBe(`Error retrieving members: Get "http://127.0.0.1:${port}/v1/agent/members?segment=_all": connection refused\n`);
  });

  test("the address comes from -http-addr, else CAUSEWAY_HTTP_ADDR, else CONSUL_HTTP_ADDR", async () => {
    const viaConsul = createMembersCommand({ env: () => ({ CONSUL_HTTP_ADDR: url(serverAgent) }) });
    expect((await run(viaConsul, [])).code).toBe(0);
    const viaCauseway = createMembersCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: `127.0.0.1:${serverAgent.port}`, CONSUL_HTTP_ADDR: url(noGossip) }) });
    expect((await run(viaCauseway, [])).code).toBe(0);
    const flagWins = createMembersCommand({ env: () => ({ CAUSEWAY_HTTP_ADDR: url(noGossip) }) });
    expect((await run(flagWins, [`-http-addr=${url(serverAgent)}`])).code).toBe(0);
  });

  test("-h prints usage; unknown flags and arguments are usage errors", async () => {
    const help = await run(members, ["-h"]);
    expect(help.code).toBe(0);
    expect(help.out).toContain("Usage: causeway members [options]");
    expect(help.out).toContain("-http-addr=<address>");
    for (const argv of [["-nope"], ["extra"]]) {
      const r = await run(members, argv);
      expect(r.code).toBe(1);
      expect(r.out).toBe("");
      expect(r.err).toContain("Usage: causeway members");
    }
  });
});
