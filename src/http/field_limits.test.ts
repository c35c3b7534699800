import { describe, expect, test } from "bun:test";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";
import { utf8Bytes } from "./field_limits.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const long = (n: number) => "x".repeat(n);

function setup() {
  const state = fakeState();
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0, newId: () => "00000000-0000-0000-0000-000000000001" });
  const put = (path: string, body: unknown) => app.request(path, { method: "PUT", body: JSON.stringify(body) });
  return { state, put };
}

describe("size limits of catalog registrations", () => {
  test("UTF-8 byte length as Go's len()", () => {
    expect(["", "abc", "é", "€", "😀", "a😀é"].map(utf8Bytes)).toEqual(["", "abc", "é", "€", "😀", "a😀é"].map((s) => new TextEncoder().encode(s).length));
  });

  test("names, IDs and tags at their limits, and Consul's metadata limits, are accepted", async () => {
    const { state, put } = setup();
    const meta = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`${i}`.padEnd(128, "k"), long(512)]));
    const res = await put("/v1/catalog/register", {
      Node: long(512), Address: "10.0.0.1", NodeMeta: meta,
      Service: { Service: long(512), ID: long(512), Tags: Array.from({ length: 256 }, () => long(512)), Meta: meta },
      Checks: Array.from({ length: 64 }, (_, i) => ({ CheckID: `c${i}`, Name: long(512) })),
    });
    expect(res.status).toBe(200);
    expect(state.writes.length).toBe(1);
  });

  const base = { Node: "n", Address: "10.0.0.1" };
  test.each([
    ["a node name over 512 bytes", { ...base, Node: long(513) }, "Node name is too long (limit: 512 bytes)"],
    ["65 node meta pairs", { ...base, NodeMeta: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"])) }, "Node meta cannot contain more than 64 key/value pairs"],
    ["a node meta key over 128 bytes", { ...base, NodeMeta: { [long(129)]: "v" } }, "Node meta key is too long (limit: 128 bytes)"],
    ["a node meta value over 512 bytes", { ...base, NodeMeta: { k: long(513) } }, `Node meta value for key "k" is too long (limit: 512 bytes)`],
    ["a service name over 512 bytes", { ...base, Service: { Service: long(513) } }, "Service name is too long (limit: 512 bytes)"],
    ["a service ID over 512 bytes", { ...base, Service: { Service: "s", ID: long(513) } }, "Service ID is too long (limit: 512 bytes)"],
    ["a tag over 512 bytes", { ...base, Service: { Service: "s", Tags: [long(513)] } }, "Service tag is too long (limit: 512 bytes)"],
    ["257 tags", { ...base, Service: { Service: "s", Tags: Array.from({ length: 257 }, (_, i) => `t${i}`) } }, "Service has too many tags (limit: 256)"],
    ["a service meta value over 512 bytes", { ...base, Service: { Service: "s", Meta: { k: long(513) } } }, `Service meta value for key "k" is too long (limit: 512 bytes)`],
    ["65 checks", { ...base, Checks: Array.from({ length: 65 }, (_, i) => ({ CheckID: `c${i}` })) }, "Too many checks in one registration (limit: 64)"],
    ["a check ID over 512 bytes", { ...base, Check: { CheckID: long(513) } }, "Check ID is too long (limit: 512 bytes)"],
    ["a check name over 512 bytes", { ...base, Checks: [{ Name: long(513) }] }, "Check name is too long (limit: 512 bytes)"],
    ["a check service ID over 512 bytes", { ...base, Checks: [{ CheckID: "c", ServiceID: long(513) }] }, "Check service ID is too long (limit: 512 bytes)"],
  ])("a register with %s is 400 and writes nothing", async (_what: string, body: unknown, message: string) => {
    const { state, put } = setup();
    const res = await put("/v1/catalog/register", body);
    expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
    expect(state.writes).toEqual([]);
  });

  test("the message never echoes the oversized value", async () => {
    const { put } = setup();
    const res = await put("/v1/catalog/register", { ...base, NodeMeta: { k: long(100_000) } });
    expect((await res.text()).length).toBeLessThan(200);
  });

  test("deregister and session create are held to the same limits", async () => {
    const { state, put } = setup();
    expect((await put("/v1/catalog/deregister", { Node: long(513) })).status).toBe(400);
    expect((await put("/v1/catalog/deregister", { Node: "n", ServiceID: long(513) })).status).toBe(400);
    expect(await (await put("/v1/session/create", { Node: long(513) })).text()).toBe("Node name is too long (limit: 512 bytes)\n");
    expect(await (await put("/v1/session/create", { Name: long(513) })).text()).toBe("Session name is too long (limit: 512 bytes)\n");
    const many = await put("/v1/session/create", { NodeChecks: Array.from({ length: 65 }, (_, i) => `c${i}`) });
    expect([many.status, await many.text()]).toEqual([400, "Too many checks for one session (limit: 64)\n"]);
    expect(state.writes).toEqual([]);
  });
});
