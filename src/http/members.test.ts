import { describe, expect, test } from "bun:test";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, MemberView, MembershipApi } from "./deps.ts";
import { MEMBERSHIP_UNAVAILABLE } from "./members.ts";

function agentInfo(server: boolean): AgentInfo {
  return {
    datacenter: "dc1",
    primaryDatacenter: "dc1",
    nodeName: "s1",
    nodeId: "00000000-0000-0000-0000-000000000001",
    server,
    version: "0.1.0",
    revision: "",
    advertiseAddr: "10.0.0.1",
    serfLanPort: 8301,
    serverPort: 8300,
    nodeMeta: {},
    debugConfig: {},
    stats: () => ({}),
  };
}

const LAN: MemberView[] = [
  { name: "s1", addr: "10.0.0.1", port: 8301, tags: { role: "consul", dc: "dc1", vsn: "2", build: "0.1.0" }, status: "alive" },
  { name: "c1", addr: "10.0.0.9", port: 8301, tags: { role: "node", dc: "dc1" }, status: "failed" },
  { name: "c2", addr: "10.0.0.8", port: 8301, tags: {}, status: "left" },
  { name: "c3", addr: "10.0.0.7", port: 8301, tags: {}, status: "leaving" },
  { name: "c4", addr: "10.0.0.6", port: 8301, tags: {}, status: "none" },
];
const WAN: MemberView[] = [{ name: "s1.dc1", addr: "10.0.0.1", port: 8302, tags: { role: "consul", dc: "dc1" }, status: "alive" }];

interface Call {
  op: string;
  args: unknown[];
}

function fakeMembership(overrides: Partial<MembershipApi> = {}) {
  const calls: Call[] = [];
  const api: MembershipApi = {
    members: (wan) => (calls.push({ op: "members", args: [wan] }), wan ? WAN : LAN),
    join: async (address, wan) => (calls.push({ op: "join", args: [address, wan] }), 1),
    leave: async () => void calls.push({ op: "leave", args: [] }),
    forceLeave: async (node, options) => void calls.push({ op: "forceLeave", args: [node, options] }),
    ...overrides,
  };
  return { api, calls };
}

function app(membership: MembershipApi | undefined, server = true) {
  return createHttpApi({ agent: agentInfo(server), raft: { leader: () => "", peers: () => [] }, membership });
}

describe("GET /v1/agent/members", () => {
  test("lists the LAN pool in Consul's shape with serf's integer statuses", async () => {
    const res = await app(fakeMembership().api).request("/v1/agent/members");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as any[];
    expect(body[0]).toEqual({
      Name: "s1",
      Addr: "10.0.0.1",
      Port: 8301,
      Tags: { role: "consul", dc: "dc1", vsn: "2", build: "0.1.0" },
      Status: 1,
      ProtocolMin: 1,
      ProtocolMax: 5,
      ProtocolCur: 2,
      DelegateMin: 2,
      DelegateMax: 5,
      DelegateCur: 4,
    });
    expect(Object.keys(body[0])).toEqual(["Name", "Addr", "Port", "Tags", "Status", "ProtocolMin", "ProtocolMax", "ProtocolCur", "DelegateMin", "DelegateMax", "DelegateCur"]);
    expect(body.map((m) => [m.Name, m.Status])).toEqual([["s1", 1], ["c1", 4], ["c2", 3], ["c3", 2], ["c4", 0]]);
  });

  test("wan=1 lists the WAN pool on a server; an empty wan value means LAN, as in Go", async () => {
    const { api, calls } = fakeMembership();
    const wan = (await (await app(api).request("/v1/agent/members?wan=1")).json()) as any[];
    expect(wan.map((m) => m.Name)).toEqual(["s1.dc1"]);
    const lan = (await (await app(api).request("/v1/agent/members?wan=")).json()) as any[];
    expect(lan).toHaveLength(LAN.length);
    expect(calls.map((c) => c.args[0])).toEqual([true, false]);
  });

  test("wan=1 on a client agent answers null, as Consul's Agent.WANMembers does", async () => {
    const res = await app(fakeMembership().api, false).request("/v1/agent/members?wan=1");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("null");
  });

  test("segment=_all is every member; a named segment is 400 on CE (Consul: 500); a segment with wan is 400", async () => {
    const all = await app(fakeMembership().api).request("/v1/agent/members?segment=_all");
    expect(((await all.json()) as any[]).length).toBe(LAN.length);
    const named = await app(fakeMembership().api).request("/v1/agent/members?segment=alpha");
    expect(named.status).toBe(400);
    expect(await named.text()).toBe("Network segments are not supported in this version of Consul");
    const wanSeg = await app(fakeMembership().api).request("/v1/agent/members?wan=1&segment=alpha");
    expect(wanSeg.status).toBe(400);
    expect(await wanSeg.text()).toBe("Cannot provide a segment with wan=true");
    expect((await app(fakeMembership().api).request("/v1/agent/members?wan=1&segment=_all")).status).toBe(200);
  });

  test("?pretty indents", async () => {
    expect(await (await app(fakeMembership().api).request("/v1/agent/members?pretty")).text()).toContain('\n    {\n        "Name": "s1"');
  });

  test("PUT is 405", async () => {
    const res = await app(fakeMembership().api).request("/v1/agent/members", { method: "PUT" });
    expect(res.status).toBe(405);
    expect(await res.text()).toBe("method PUT not allowed\n");
  });
});

describe("PUT /v1/agent/join/:address", () => {
  test("joins the LAN pool and answers 200 with an empty body", async () => {
    const { api, calls } = fakeMembership();
    const res = await app(api).request("/v1/agent/join/10.0.0.2:8301", { method: "PUT" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect(calls).toEqual([{ op: "join", args: ["10.0.0.2:8301", false] }]);
  });

  test("wan=1 joins the WAN pool; escaped addresses are decoded", async () => {
    const { api, calls } = fakeMembership();
    expect((await app(api).request("/v1/agent/join/%5B%3A%3A1%5D%3A8302?wan=1", { method: "PUT" })).status).toBe(200);
    expect(calls).toEqual([{ op: "join", args: ["[::1]:8302", true] }]);
  });

  test("a failed join is 500 with the error text", async () => {
    const { api } = fakeMembership({ join: async () => Promise.reject(new Error("1 error occurred: Failed to join 10.0.0.3: connection refused")) });
    const res = await app(api).request("/v1/agent/join/10.0.0.3", { method: "PUT" });
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("1 error occurred: Failed to join 10.0.0.3: connection refused");
  });

  test("GET and POST are 405", async () => {
    for (const method of ["GET", "POST", "DELETE"]) {
      const res = await app(fakeMembership().api).request("/v1/agent/join/10.0.0.2", { method });
      expect(res.status).toBe(405);
      expect(await res.text()).toBe(`method ${method} not allowed\n`);
    }
  });
});

describe("PUT /v1/agent/leave", () => {
  test("leaves and answers 200 empty", async () => {
    const { api, calls } = fakeMembership();
    const res = await app(api).request("/v1/agent/leave", { method: "PUT" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    expect(calls).toEqual([{ op: "leave", args: [] }]);
  });

  test("a failed leave is 500; GET is 405", async () => {
    const { api } = fakeMembership({ leave: async () => Promise.reject(new Error("leave timed out")) });
    const res = await app(api).request("/v1/agent/leave", { method: "PUT" });
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("leave timed out");
    expect((await app(api).request("/v1/agent/leave")).status).toBe(405);
  });
});

describe("PUT /v1/agent/force-leave/:node", () => {
  test("forces a known LAN member to leave; prune and wan count by presence", async () => {
    const { api, calls } = fakeMembership();
    expect((await app(api).request("/v1/agent/force-leave/c1", { method: "PUT" })).status).toBe(200);
    expect((await app(api).request("/v1/agent/force-leave/c1?prune", { method: "PUT" })).status).toBe(200);
    expect((await app(api).request("/v1/agent/force-leave/s1.dc1?prune=1&wan=1", { method: "PUT" })).status).toBe(200);
    expect(calls.filter((c) => c.op === "forceLeave")).toEqual([
      { op: "forceLeave", args: ["c1", { prune: false, wan: false }] },
      { op: "forceLeave", args: ["c1", { prune: true, wan: false }] },
      { op: "forceLeave", args: ["s1.dc1", { prune: true, wan: true }] },
    ]);
  });

  test("an unknown LAN node is 400 (Consul: 500) with Consul's message and is not passed on", async () => {
    const { api, calls } = fakeMembership();
    const res = await app(api).request("/v1/agent/force-leave/ghost", { method: "PUT" });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("agent: No node found with name 'ghost'");
    expect(calls.some((c) => c.op === "forceLeave")).toBe(false);
  });

  test("the pool's own refusal of a node it does not know is 400 too", async () => {
    const { api } = fakeMembership({ forceLeave: async () => Promise.reject(new Error("agent: No node found with name 's1.dc9'")) });
    const res = await app(api).request("/v1/agent/force-leave/s1.dc9?wan", { method: "PUT" });
    expect([res.status, await res.text()]).toEqual([400, "agent: No node found with name 's1.dc9'"]);
  });

  test("the membership layer's rejection is 500 with its text", async () => {
    const { api } = fakeMembership({ forceLeave: async () => Promise.reject(new Error("node s1.dc9 not found in the WAN pool")) });
    const res = await app(api).request("/v1/agent/force-leave/s1.dc9?wan", { method: "PUT" });
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("node s1.dc9 not found in the WAN pool");
  });

  test("-wan on a client agent is refused with Consul's message (400; Consul: 500)", async () => {
    const res = await app(fakeMembership().api, false).request("/v1/agent/force-leave/s1.dc1?wan", { method: "PUT" });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("Must be a server to force-leave a node from the WAN cluster");
  });

  test("GET is 405", async () => {
    expect((await app(fakeMembership().api).request("/v1/agent/force-leave/c1")).status).toBe(405);
  });
});

describe("without gossip", () => {
  test("every membership route answers 500 with a clear message", async () => {
    const a = app(undefined);
    for (const [path, method] of [["/v1/agent/members", "GET"], ["/v1/agent/members?wan=1", "GET"], ["/v1/agent/join/10.0.0.2", "PUT"], ["/v1/agent/leave", "PUT"], ["/v1/agent/force-leave/c1", "PUT"]] as const) {
      const res = await a.request(path, { method });
      expect(res.status).toBe(500);
      expect(await res.text()).toBe(MEMBERSHIP_UNAVAILABLE);
    }
  });

  test("/v1/agent/self's Member is exactly this agent's entry in /v1/agent/members", async () => {
    const a = app(fakeMembership().api);
    const members = (await (await a.request("/v1/agent/members")).json()) as { Name: string }[];
    const self = (await (await a.request("/v1/agent/self")).json()) as { Member: unknown };
    expect(self.Member).toEqual(members.find((m) => m.Name === "s1"));
    expect(self.Member).toMatchObject({ ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4 });
  });

  test("wrong methods are still 405 and other routes are untouched", async () => {
    const a = app(undefined);
    expect((await a.request("/v1/agent/join/10.0.0.2")).status).toBe(405);
    expect((await a.request("/v1/agent/self")).status).toBe(200);
    expect((await a.request("/v1/agent/nope")).status).toBe(404);
  });
});

describe("PUT /v1/agent/reload", () => {
  const withReload = (agentReload?: () => Promise<void>) =>
    createHttpApi({ agent: agentInfo(true), raft: { leader: () => "", peers: () => [] }, ...(agentReload ? { agentReload } : {}) });

  test("200 after the reload; 500 with its reason; 500 on an agent that cannot reload", async () => {
    let reloads = 0;
    expect((await withReload(async () => void reloads++).request("/v1/agent/reload", { method: "PUT" })).status).toBe(200);
    expect(reloads).toBe(1);
    const failed = await withReload(() => Promise.reject(new Error("Failed to reload configs: c.json: invalid config key colour"))).request("/v1/agent/reload", { method: "PUT" });
    expect([failed.status, await failed.text()]).toEqual([500, "Failed to reload configs: c.json: invalid config key colour"]);
    const none = await withReload().request("/v1/agent/reload", { method: "PUT" });
    expect([none.status, await none.text()]).toEqual([500, "This agent cannot reload its configuration"]);
  });
});
