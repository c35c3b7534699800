import { describe, expect, test } from "bun:test";
import { chainAuthorizers, parseRules, policyAuthorizer, staticAuthorizer } from "../acl/index.ts";
import { checkDenial, PERMISSION_DENIED, readableChecks, readableServices, serviceRegisterDenial, serviceUpdateDenial } from "./agent_acl.ts";
import type { LocalAgentApi, LocalAgentCheckView, LocalAgentServiceView } from "./deps.ts";

const authz = (rules: string) => chainAuthorizers([policyAuthorizer(parseRules(rules)), staticAuthorizer("deny")]);
const services: Record<string, LocalAgentServiceView> = { "web-1": { ID: "web-1", Service: "web" }, "db-1": { ID: "db-1", Service: "db" } };
const check = (CheckID: string, ServiceID: string, ServiceName: string): LocalAgentCheckView =>
  ({ Node: "n1", CheckID, Name: CheckID, Status: "passing", Notes: "", Output: "", ServiceID, ServiceName }) as LocalAgentCheckView;
const checks: Record<string, LocalAgentCheckView> = { "service:web-1": check("service:web-1", "web-1", "web"), mem: check("mem", "", "") };
const agent = { agentServices: () => services, agentChecks: () => checks } as unknown as LocalAgentApi;

describe("the local agent's ACL checks", () => {
  test("registering: write on the service, on the one it replaces, and on a proxy's destination", () => {
    const a = authz(`service "web" { policy = "write" } service "api" { policy = "write" }`);
    expect(serviceRegisterDenial(a, agent, [{ id: "web-2", name: "web" }])).toBeUndefined();
    expect(serviceRegisterDenial(a, agent, [{ id: "db-1", name: "web" }])).toBe(PERMISSION_DENIED); // replaces db-1
    expect(serviceRegisterDenial(a, agent, [{ id: "p", name: "api", destination: "db" }])).toBe(PERMISSION_DENIED);
    expect(serviceRegisterDenial(undefined, agent, [{ id: "x", name: "anything" }])).toBeUndefined();
    expect([serviceUpdateDenial(a, agent, "web-1"), serviceUpdateDenial(a, agent, "db-1"), serviceUpdateDenial(a, agent, "unknown")]).toEqual([undefined, PERMISSION_DENIED, undefined]);
  });

  test("checks: a service check by its service, a node check by this node, the check it replaces too", () => {
    const a = authz(`service "web" { policy = "write" }`);
    expect(checkDenial(a, agent, "n1", { serviceId: "web-1", checkId: "c" })).toBeUndefined();
    expect(checkDenial(a, agent, "n1", { serviceId: "", checkId: "c" })).toBe(PERMISSION_DENIED);
    expect(checkDenial(authz(`node "n1" { policy = "write" }`), agent, "n1", { serviceId: "", checkId: "service:web-1" })).toBe(PERMISSION_DENIED);
  });

  test("lists show what the token may read", () => {
    const a = authz(`service "web" { policy = "read" } node "n1" { policy = "read" }`);
    expect(Object.keys(readableServices(a, services))).toEqual(["web-1"]);
    expect(Object.keys(readableChecks(a, checks))).toEqual(["service:web-1", "mem"]);
    expect(Object.keys(readableChecks(authz(`service "web" { policy = "read" }`), checks))).toEqual(["service:web-1"]);
  });
});

describe("members with ACLs", () => {
  test("only the nodes the token may read", async () => {
    const { Hono } = await import("hono");
    const { mountMembers } = await import("./members.ts");
    const app = new Hono();
    const member = (name: string) => ({ name, addr: "10.0.0.1", port: 8301, tags: {}, status: "alive" as const });
    mountMembers(app, { members: () => [member("n1"), member("n2")], join: async () => 1, leave: async () => {}, forceLeave: async () => {} } as never, { server: true },
      async () => authz(`node "n1" { policy = "read" }`));
    const body = (await (await app.request("/v1/agent/members")).json()) as { Name: string }[];
    expect(body.map((m) => m.Name)).toEqual(["n1"]);
  });
});
