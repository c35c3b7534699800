import { describe, expect, test } from "bun:test";
import { decodeConfigEntry, type ConfigEntry } from "../connect/index.ts";
import type { StateResult } from "../state/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;

function setup(entries: readonly ConfigEntry[] = []) {
  const state = fakeState();
  state.values["config-entry-list"] = entries;
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
  const send = (method: string, path: string, body?: unknown) =>
    app.request(path, { method, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  return { state, app, send };
}

const httpDefaults = decodeConfigEntry({ Kind: "service-defaults", Name: "web", Protocol: "http" });
const router = { Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { PathPrefix: "/admin" } }, Destination: { ServiceSubset: "v2" } }] };
const resolver = decodeConfigEntry({ Kind: "service-resolver", Name: "web", Subsets: { v2: { Filter: "Service.Meta.version == v2" } } });

describe("PUT /v1/config", () => {
  test("decodes (snake_case too), validates, reads every entry, writes a set and answers true", async () => {
    const { state, send } = setup();
    const res = await send("PUT", "/v1/config?dc=dc2", { kind: "service-defaults", name: "web", protocol: "HTTP" });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("true");
    expect(state.reads.map((r) => [r.query, r.options.datacenter, r.options.minIndex])).toEqual([[{ type: "config-entry-list" }, "dc2", 0]]);
    expect(state.writes).toEqual([{ datacenter: "dc2", command: { type: "config-entry", op: "set", entry: httpDefaults } }]);
  });

  test("?cas=N writes a cas and answers the result's ok", async () => {
    for (const ok of [true, false]) {
      const { state, send } = setup();
      state.writeResult = { type: "cas", ok } as StateResult;
      const res = await send("PUT", "/v1/config?cas=7", { Kind: "service-defaults", Name: "web", Protocol: "http" });
      expect(await res.text()).toBe(String(ok));
      expect(state.writes[0]!.command).toEqual({ type: "config-entry", op: "cas", entry: httpDefaults, index: 7 });
    }
  });

  test("an empty ?cas= is a plain set (Consul tests casStr != \"\")", async () => {
    const { state, send } = setup();
    await send("PUT", "/v1/config?cas=", { Kind: "service-defaults", Name: "web", Protocol: "http" });
    expect((state.writes[0]!.command as { op: string }).op).toBe("set");
  });

  test("graph validation refuses a router on a tcp service: 400, nothing written", async () => {
    const { state, send } = setup([resolver]);
    const res = await send("PUT", "/v1/config", router);
    expect(res.status).toBe(400);
    expect(await res.text()).toBe('discovery chain "web" uses a protocol "tcp" that does not permit advanced routing or splitting behavior\n');
    expect(state.writes).toEqual([]);
  });

  test("the same router is accepted once the service speaks http", async () => {
    const { state, send } = setup([httpDefaults, resolver]);
    const res = await send("PUT", "/v1/config", router);
    expect(await res.text()).toBe("true");
    expect(state.writes.length).toBe(1);
  });

  test("graph errors that need other entries: an unknown subset", async () => {
    const { state, send } = setup([httpDefaults]);
    const res = await send("PUT", "/v1/config", router);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('does not have a subset named "v2"');
    expect(state.writes).toEqual([]);
  });

  test.each([
    ["bad JSON", "{", "Request decoding failed: unexpected EOF"],
    ["an empty body", "", "Request decoding failed: EOF"],
    ["no kind", { Name: "web" }, "Request decoding failed: Payload does not contain a kind/Kind key at the top level"],
    ["an unknown kind", { Kind: "bogus", Name: "x" }, "Request decoding failed: invalid config entry kind: bogus"],
    ["a missing name", { Kind: "service-defaults" }, "Name is required"],
    ["proxy-defaults not named global", { Kind: "proxy-defaults", Name: "x" }, 'invalid name ("x"), only "global" is supported'],
    ["a bad ?cas", "", 'Invalid cas value "x": must be an unsigned integer'],
  ])("%s: 400 with Consul's message, no read, nothing written", async (name: string, body: unknown, message: string) => {
    const { state, send } = setup();
    const res = await send("PUT", name === "a bad ?cas" ? "/v1/config?cas=x" : "/v1/config", body);
    expect(res.status).toBe(400);
    expect(await res.text()).toStartWith(message);
    expect(state.reads).toEqual([]);
    expect(state.writes).toEqual([]);
  });

  test("a failed read or a refused write answers 500", async () => {
    const { state, send } = setup();
    state.failWith = "No cluster leader";
    const res = await send("PUT", "/v1/config", { Kind: "service-defaults", Name: "web" });
    expect([res.status, await res.text()]).toEqual([500, "No cluster leader\n"]);
    expect(state.writes).toEqual([]);
  });
});

describe("GET /v1/config/:kind[/:name]", () => {
  test("lists one kind, blocking with the read's X-Consul-Index", async () => {
    const { state, send } = setup([httpDefaults]);
    const res = await send("GET", "/v1/config/service-defaults?index=5&wait=1s");
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(await res.json()).toEqual([JSON.parse(JSON.stringify(httpDefaults))]);
    expect(state.reads[0]!.query).toEqual({ type: "config-entry-list", kind: "service-defaults" });
    expect(state.reads[0]!.options.minIndex).toBe(5);
  });

  test("an empty list is [] ; /v1/config/ lists every kind", async () => {
    const { state, send } = setup([]);
    expect(await (await send("GET", "/v1/config/service-router")).text()).toBe("[]");
    await send("GET", "/v1/config/");
    expect(state.reads[1]!.query).toEqual({ type: "config-entry-list" });
  });

  test("one entry; the name may hold a slash", async () => {
    const { state, send } = setup();
    state.values["config-entry-get"] = httpDefaults;
    expect(await (await send("GET", "/v1/config/service-defaults/web")).json()).toEqual(JSON.parse(JSON.stringify(httpDefaults)));
    await send("GET", "/v1/config/service-defaults/a/b");
    expect(state.reads.map((r) => r.query)).toEqual([
      { type: "config-entry-get", kind: "service-defaults", name: "web" },
      { type: "config-entry-get", kind: "service-defaults", name: "a/b" },
    ]);
  });

  test("a missing entry is 404 with Consul's text", async () => {
    const { state, send } = setup();
    state.values["config-entry-get"] = null;
    const res = await send("GET", "/v1/config/service-resolver/db");
    expect([res.status, await res.text()]).toEqual([404, 'Config entry not found for "service-resolver" / "db"\n']);
  });

  test("an unknown kind is 400 with Consul's message and reads nothing", async () => {
    const { state, send } = setup();
    for (const path of ["/v1/config/bogus", "/v1/config/bogus/x", "/v1/config/Service-Defaults/x"]) {
      const res = await send("GET", path);
      expect(res.status).toBe(400);
      expect(await res.text()).toStartWith("invalid config entry kind: ");
    }
    expect(state.reads).toEqual([]);
  });
});

describe("DELETE /v1/config/:kind/:name", () => {
  test("checks the graph without the entry, then deletes and answers {}", async () => {
    const { state, send } = setup([httpDefaults]);
    const res = await send("DELETE", "/v1/config/service-defaults/web?dc=dc3");
    expect([res.status, await res.text()]).toEqual([200, "{}"]);
    expect(state.reads.map((r) => r.query)).toEqual([{ type: "config-entry-list" }]);
    expect(state.writes).toEqual([{ datacenter: "dc3", command: { type: "config-entry", op: "delete", kind: "service-defaults", name: "web" } }]);
  });

  test("refuses a delete that would leave a router on a tcp service: 400, nothing written", async () => {
    const { state, send } = setup([httpDefaults, resolver, decodeConfigEntry(router)]);
    const res = await send("DELETE", "/v1/config/service-defaults/web");
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("does not permit advanced routing or splitting behavior");
    expect(state.writes).toEqual([]);
  });

  test("needs a kind and a name (404, as Consul), and a known kind (400)", async () => {
    const { state, send } = setup();
    const res = await send("DELETE", "/v1/config/service-defaults");
    expect([res.status, await res.text()]).toEqual([404, "Must provide both a kind and name to delete\n"]);
    const bad = await send("DELETE", "/v1/config/bogus/x");
    expect([bad.status, await bad.text()]).toEqual([400, "invalid config entry kind: bogus\n"]);
    expect(state.writes).toEqual([]);
  });

  test("other methods are 405", async () => {
    const { send } = setup();
    expect((await send("POST", "/v1/config/service-defaults/web")).status).toBe(405);
    expect((await send("GET", "/v1/config")).status).toBe(405);
  });
});
