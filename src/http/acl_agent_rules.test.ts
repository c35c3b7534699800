import { describe, expect, test } from "bun:test";
import { agentAclRule } from "./acl_agent_rules.ts";

describe("which ACL the agent-answered endpoints need", () => {
  test("by method and path, with the agent's node or a path segment", () => {
    expect(agentAclRule("GET", "/v1/agent/self", "n1")).toEqual({ resource: "agent", access: "read", segment: "n1" });
    expect(agentAclRule("PUT", "/v1/agent/join/10.0.0.1", "n1")).toEqual({ resource: "agent", access: "write", segment: "n1" });
    expect(agentAclRule("PUT", "/v1/agent/force-leave/n2", "n1")).toEqual({ resource: "operator", access: "write" });
    expect(agentAclRule("PUT", "/v1/event/fire/deploy%2Fweb", "n1")).toEqual({ resource: "event", access: "write", segment: "deploy/web" });
    expect(agentAclRule("GET", "/v1/agent/connect/ca/leaf/web", "n1")).toEqual({ resource: "service", access: "write", segment: "web" });
    expect(agentAclRule("GET", "/v1/operator/keyring", "n1")).toEqual({ resource: "keyring", access: "read" });
    expect(agentAclRule("GET", "/v1/kv/x", "n1")).toBeUndefined(); // the servers check the state's endpoints
    expect(agentAclRule("POST", "/v1/agent/self", "n1")).toBeUndefined();
  });
});
