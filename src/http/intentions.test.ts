import { describe, expect, test } from "bun:test";
import { prepareIntentionCreate, type Intention } from "../connect/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, HttpApiDeps } from "./deps.ts";
import { intentionIdError } from "./intentions.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const NOW = Date.UTC(2020, 5, 1, 10, 0, 0, 120);
const ID1 = "8f246b77-f3e1-ff88-5b48-8ec93abf3e05";
const ID2 = "a7e1ab52-9e8f-4b9c-ae0b-3b7e7b3d2c10";
const NEW = "0b0c0d0e-1111-2222-3333-444455556666";

const ixn = (id: string, src: string, dst: string, action: "allow" | "deny", extra = {}): Intention => ({
  ...prepareIntentionCreate({ SourceName: src, DestinationName: dst, Action: action, ...extra }, id, { nowMs: Date.UTC(2020, 0, 1) }),
  CreateIndex: 10, ModifyIndex: 10,
});
const webToDb = ixn(ID1, "web", "db", "allow");
const anyToDb = ixn(ID2, "*", "db", "deny", { Meta: { team: "a" } });

function setup(intentions: readonly Intention[] = [webToDb, anyToDb], extra: Partial<HttpApiDeps> = {}) {
  const state = fakeState();
  state.values["intention-list"] = intentions;
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0, newId: () => NEW, now: () => NOW, ...extra });
  const send = (method: string, path: string, body?: unknown) =>
    app.request(path, { method, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  return { state, app, send };
}
const json = (v: unknown) => JSON.parse(JSON.stringify(v));

describe("GET /v1/connect/intentions", () => {
  test("lists every intention with X-Consul-Index; ?filter= selects", async () => {
    const { state, send } = setup();
    const res = await send("GET", "/v1/connect/intentions?index=2");
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(await res.json()).toEqual(json([webToDb, anyToDb]));
    expect(state.reads[0]!.options.minIndex).toBe(2);
    const filtered = await send("GET", `/v1/connect/intentions?filter=${encodeURIComponent('Meta.team == "a"')}`);
    expect(await filtered.json()).toEqual(json([anyToDb]));
  });

  test("a bad filter is 400; none is []", async () => {
    expect((await setup().send("GET", "/v1/connect/intentions?filter=CreatedAt%20==%20x")).status).toBe(400);
    expect(await (await setup([]).send("GET", "/v1/connect/intentions")).text()).toBe("[]");
  });
});

describe("POST /v1/connect/intentions", () => {
  test("creates with deps.newId and deps.now, checks duplicates, answers the ID", async () => {
    const { state, send } = setup();
    const res = await send("POST", "/v1/connect/intentions?dc=dc2", { SourceName: "api", DestinationName: "db", Action: "allow", Meta: { k: "v" } });
    expect([res.status, await res.json()]).toEqual([200, { ID: NEW }]);
    expect(state.reads.map((r) => r.query)).toEqual([{ type: "intention-list" }]);
    expect(state.writes).toEqual([{
      datacenter: "dc2",
      command: { type: "intention", op: "upsert", intention: prepareIntentionCreate({ SourceName: "api", DestinationName: "db", Action: "allow", Meta: { k: "v" } }, NEW, { nowMs: NOW }) },
    }]);
    expect((state.writes[0]!.command as { intention: Intention }).intention.CreatedAt).toBe("2020-06-01T10:00:00.12Z");
  });

  test("draws another ID when the first is taken", async () => {
    const ids = [ID1, NEW];
    const { state, send } = setup(undefined, { newId: () => ids.shift()! });
    expect(await (await send("POST", "/v1/connect/intentions", { SourceName: "api", DestinationName: "db", Action: "allow" })).json()).toEqual({ ID: NEW });
    expect(state.writes.length).toBe(1);
  });

  test.each([
    ["a duplicate (case-insensitive)", { SourceName: "WEB", DestinationName: "db", Action: "deny" }, 400, "duplicate intention found: ALLOW default/web => default/db (ID: 8f246b77-f3e1-ff88-5b48-8ec93abf3e05, Precedence: 9)"],
    ["a bad action", { SourceName: "a", DestinationName: "b", Action: "maybe" }, 400, "1 error occurred:\n\t* Action must be set to 'allow' or 'deny'\n\n"],
    ["an ID in the body", { ID: ID1, SourceName: "a", DestinationName: "b", Action: "allow" }, 400, "ID must be empty when creating a new intention"],
    ["an unknown field", { Bogus: 1 }, 400, 'Failed to decode request body: json: unknown field "Bogus"'],
    ["bad JSON", "{", 400, "Failed to decode request body: unexpected EOF"],
  ])("%s: %d, nothing written", async (_name: string, body: unknown, status: number, message: string) => {
    const { state, send } = setup();
    const res = await send("POST", "/v1/connect/intentions", body);
    expect([res.status, await res.text()]).toEqual([status, message.endsWith("\n") ? message : `${message}\n`]);
    expect(state.writes).toEqual([]);
  });

  test("without newId or a clock: 500, nothing read or written", async () => {
    const { state, send } = setup(undefined, { now: undefined });
    expect((await send("POST", "/v1/connect/intentions", { SourceName: "a", DestinationName: "b", Action: "allow" })).status).toBe(500);
    expect([state.reads, state.writes]).toEqual([[], []]);
  });

  test("PUT on the collection is 405", async () => {
    expect((await setup().send("PUT", "/v1/connect/intentions")).status).toBe(405);
  });
});

describe("/v1/connect/intentions/:id", () => {
  test("GET one; 404 Intention not found; a malformed ID is 400 with memdb's text", async () => {
    const { state, send } = setup();
    state.values["intention-get"] = webToDb;
    expect(await (await send("GET", `/v1/connect/intentions/${ID1}`)).json()).toEqual(json(webToDb));
    expect(state.reads[0]!.query).toEqual({ type: "intention-get", id: ID1 });
    state.values["intention-get"] = null;
    const missing = await send("GET", `/v1/connect/intentions/${ID2}`);
    expect([missing.status, await missing.text()]).toEqual([404, "Intention not found\n"]);
    const bad = await send("GET", "/v1/connect/intentions/nope");
    expect([bad.status, await bad.text()]).toEqual([400, "failed intention lookup: UUID must be 36 characters\n"]);
  });

  test("PUT replaces every field, keeps CreatedAt, sets UpdatedAt = now", async () => {
    const { state, send } = setup();
    const res = await send("PUT", `/v1/connect/intentions/${ID1}`, { SourceName: "web", DestinationName: "db", Action: "deny", Description: "x" });
    expect(await res.json()).toEqual({ ID: ID1 });
    const written = (state.writes[0]!.command as { intention: Intention }).intention;
    expect([written.Action, written.Description, written.CreatedAt, written.UpdatedAt, written.CreateIndex]).toEqual(["deny", "x", webToDb.CreatedAt, "2020-06-01T10:00:00.12Z", 10]);
  });

  test("PUT refusals", async () => {
    const { state, send } = setup();
    const missing = await send("PUT", `/v1/connect/intentions/${NEW}`, { SourceName: "a", DestinationName: "b", Action: "allow" });
    expect([missing.status, await missing.text()]).toEqual([400, `Cannot modify non-existent intention: '${NEW}'\n`]);
    const dup = await send("PUT", `/v1/connect/intentions/${ID2}`, { SourceName: "web", DestinationName: "db", Action: "allow" });
    expect(dup.status).toBe(400);
    const bad = await send("PUT", `/v1/connect/intentions/${ID1}`, "[1]");
    expect([bad.status, await bad.text()]).toEqual([400, "Request decode failed: json: cannot unmarshal array into Go value of type structs.Intention\n"]);
    const empty = await send("PUT", `/v1/connect/intentions/${ID1}`, "");
    expect([empty.status, await empty.text()]).toEqual([400, "Request decode failed: EOF\n"]);
    expect(state.writes).toEqual([]);
  });

  test("DELETE checks existence and answers true", async () => {
    const { state, send } = setup();
    expect(await (await send("DELETE", `/v1/connect/intentions/${ID2}`)).text()).toBe("true");
    expect(state.writes).toEqual([{ datacenter: undefined, command: { type: "intention", op: "delete", id: ID2 } }]);
    const missing = await send("DELETE", `/v1/connect/intentions/${NEW}`);
    expect([missing.status, await missing.text()]).toEqual([400, `Cannot delete non-existent intention: '${NEW}'\n`]);
    expect(state.writes.length).toBe(1);
  });

  test("memdb's UUID index rules", () => {
    expect(intentionIdError(ID1)).toBeUndefined();
    expect(intentionIdError("g".repeat(36))).toBe("failed intention lookup: Invalid UUID: encoding/hex: invalid byte: U+0067 'g'");
    expect(intentionIdError("-".repeat(5) + "a".repeat(31))).toBe('failed intention lookup: UUID should have maximum of 4 "-"; got 5');
    expect(intentionIdError("---" + "a".repeat(33))).toBe("failed intention lookup: Input (without hyphens) must be even length");
  });
});

describe("match and check", () => {
  test("match by destination: one list per name, highest precedence first, null when none", async () => {
    const { send } = setup();
    const res = await send("GET", "/v1/connect/intentions/match?by=destination&name=db&name=other");
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(await res.json()).toEqual({ db: json([webToDb, anyToDb]), other: null });
    expect(await (await send("GET", "/v1/connect/intentions/match?by=source&name=web")).json()).toEqual({ web: json([webToDb, anyToDb]) });
  });

  test.each([
    ["", "required query parameter 'by' not set"],
    ["?by=x&name=a", "'by' parameter must be one of 'source' or 'destination'"],
    ["?by=source", "required query parameter 'name' not set"],
    ["?by=source&name=a/b/c", `name "a/b/c" is invalid: input can contain at most one '/'`],
  ])("match%s is 400", async (q: string, message: string) => {
    const res = await setup().send("GET", `/v1/connect/intentions/match${q}`);
    expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
  });

  test("check: the deciding intention, else allowed (no ACLs)", async () => {
    const { send } = setup();
    const allowed = async (q: string) => (await (await send("GET", `/v1/connect/intentions/check?${q}`)).json()).Allowed;
    expect(await allowed("source=web&destination=db")).toBe(true);
    expect(await allowed("source=api&destination=db")).toBe(false);
    expect(await allowed("source=api&destination=cache")).toBe(true);
  });

  test("check refusals", async () => {
    const { send } = setup();
    const cases: [string, number, string][] = [
      ["destination=db", 400, "required query parameter 'source' not set"],
      ["source=web", 400, "required query parameter 'destination' not set"],
      ["source=a/b/c&destination=db", 400, `source "a/b/c" is invalid: input can contain at most one '/'`],
      ["source=web&destination=a/b/c", 400, `destination "a/b/c" is invalid: input can contain at most one '/'`],
      ["source=web&destination=db&source-type=x", 400, 'unsupported SourceType: "x"'],
    ];
    for (const [q, status, message] of cases) {
      const res = await send("GET", `/v1/connect/intentions/check?${q}`);
      expect([res.status, await res.text()]).toEqual([status, `${message}\n`]);
    }
    expect((await send("PUT", "/v1/connect/intentions/check")).status).toBe(405);
  });
});

describe("POST /v1/agent/connect/authorize", () => {
  const authorize = (body: unknown, intentions?: readonly Intention[]) =>
    setup(intentions).send("POST", "/v1/agent/connect/authorize", body);
  const uri = (svc: string) => `spiffe://${"1".repeat(8)}-2222-3333-4444-555555555555.consul/ns/default/dc/dc1/svc/${svc}`;

  test("decides by the matching intention, else allows with ACLs disabled", async () => {
    expect(await (await authorize({ Target: "db", ClientCertURI: uri("web") })).json()).toEqual({
      Authorized: true, Reason: `Matched intention: ALLOW default/web => default/db (ID: ${ID1}, Precedence: 9)`,
    });
    expect((await (await authorize({ Target: "db", ClientCertURI: uri("api") })).json()).Authorized).toBe(false);
    expect(await (await authorize({ target: "cache", clientcerturi: uri("api") })).json()).toEqual({ Authorized: true, Reason: "ACLs disabled, access is allowed by default" });
  });

  test.each([
    [{ ClientCertURI: "spiffe://x/ns/default/dc/dc1/svc/web" }, "Target service must be specified"],
    [{ Target: "db", ClientCertURI: "http://x" }, "ClientCertURI not a valid Connect identifier"],
    [{ Target: "db", ClientCertURI: "spiffe://x/agent/client/dc/dc1/id/n1" }, "ClientCertURI not a valid Service identifier"],
    ["", "Request decode failed: EOF"],
    [{ Target: 5 }, "Request decode failed: json: cannot unmarshal number into Go struct field ConnectAuthorizeRequest.Target of type string"],
  ])("%j is 400 %s", async (body: unknown, message: string) => {
    const res = await authorize(body);
    expect([res.status, await res.text()]).toEqual([400, `${message}\n`]);
  });
});
