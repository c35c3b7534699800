import { describe, expect, test } from "bun:test";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;

describe("GET /v1/internal/ui/services", () => {
  test("the summaries as read, blocking options and ?dc= passed through", async () => {
    const state = fakeState();
    const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
    const summary = { Name: "web", Tags: ["v1"], Nodes: ["a"], InstanceCount: 1, ChecksPassing: 2, ChecksWarning: 0, ChecksCritical: 0, ExternalSources: [] };
    state.values["ui-services"] = [summary];
    const res = await app.request("/v1/internal/ui/services?dc=dc2&index=7&wait=1s");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(await res.json()).toEqual([summary]);
    expect(state.reads[0]!.query).toEqual({ type: "ui-services" });
    expect(state.reads[0]!.options).toMatchObject({ datacenter: "dc2", minIndex: 7 });
  });

  test("GET /v1/internal/ui/nodes: the node dump as read", async () => {
    const state = fakeState();
    const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
    state.values["ui-nodes"] = [{ Node: "n1", Services: [], Checks: [] }];
    const res = await app.request("/v1/internal/ui/nodes");
    expect(await res.json()).toEqual([{ Node: "n1", Services: [], Checks: [] }]);
    expect(state.reads[0]!.query).toEqual({ type: "ui-nodes" });
  });
});
