import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createIntentionCommand } from "../intention.ts";
import { rfc850Utc } from "./get.ts";

let agent: RecordingAgent;
let intention: ReturnType<typeof createIntentionCommand>;
let stdin = "";
beforeAll(async () => {
  agent = await startRecordingAgent();
  intention = createIntentionCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new TextEncoder().encode(stdin) });
});
afterAll(() => agent.close());

const ID = "8f246b77-f3e1-ff88-5b48-8ec93abf3e05";
const webToDb = {
  ID, Description: "", SourceNS: "default", SourceName: "web", DestinationNS: "default", DestinationName: "db", SourceType: "consul", Action: "allow",
  Meta: { team: "a", env: "prod" }, Precedence: 9, CreatedAt: "2020-06-01T10:00:00.12Z", UpdatedAt: "2020-06-01T10:00:00.12Z",
};
const anyToDb = { ...webToDb, ID: "a7e1ab52-9e8f-4b9c-ae0b-3b7e7b3d2c10", SourceNS: "ops", SourceName: "*", Action: "deny", Meta: {} };

describe("causeway intention create", () => {
  test("POSTs an allow intention by default and prints it", async () => {
    agent.reset({ "POST /v1/connect/intentions": { body: { ID } } });
    expect(await run(intention, ["create", "web", "db"])).toEqual({ code: 0, out: "Created: web => db (allow)\n", err: "" });
    expect(JSON.parse(agent.requests[0]!.text)).toEqual({ SourceNS: "", SourceName: "web", DestinationNS: "", DestinationName: "db", SourceType: "consul", Action: "allow", Meta: null });
  });

  test("-deny, -meta and namespaces", async () => {
    agent.reset({ "POST /v1/connect/intentions": { body: { ID } } });
    expect((await run(intention, ["create", "-deny", "-meta", "a=1", "-meta", "b=2", "ops/*", "db"])).out).toBe("Created: ops/* => db (deny)\n");
    expect(JSON.parse(agent.requests[0]!.text)).toMatchObject({ SourceNS: "ops", SourceName: "*", Action: "deny", Meta: { a: "1", b: "2" } });
  });

  test("-replace updates the existing intention for the pair, silently", async () => {
    agent.reset({ "GET /v1/connect/intentions": { body: [webToDb] }, [`PUT /v1/connect/intentions/${ID}`]: { body: { ID } } });
    expect(await run(intention, ["create", "-replace", "-deny", "default/web", "db"])).toEqual({ code: 0, out: "", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/connect/intentions", `PUT /v1/connect/intentions/${ID}`]);
    expect(JSON.parse(agent.requests[1]!.text)).toMatchObject({ ID, Action: "deny" });
  });

  test("-file reads intentions from files or stdin", async () => {
    agent.reset({ "POST /v1/connect/intentions": { body: { ID } } });
    stdin = JSON.stringify({ SourceName: "a", DestinationName: "b", Action: "deny" });
    expect((await run(intention, ["create", "-file", "-"])).out).toBe("Created: a => b (deny)\n");
  });

  test("refusals", async () => {
    agent.reset({ "POST /v1/connect/intentions": { status: 500, body: "duplicate intention found: ALLOW default/web => default/db" } });
    expect((await run(intention, ["create", "-allow", "-deny", "a", "b"])).err).toBe("Only one of -allow or -deny may be specified.\n");
    expect((await run(intention, ["create", "a"])).err).toBe("Error: Must specify two arguments: source and destination\n");
    expect((await run(intention, ["create", "a/b/c", "d"])).err).toBe("Error: Invalid intention source: target can contain at most one '/'\n");
    expect(await run(intention, ["create", "web", "db"])).toEqual({
      code: 1, out: "", err: 'Error creating intention "web => db (allow)": Unexpected response code: 500 (duplicate intention found: ALLOW default/web => default/db)\n',
    });
  });
});

describe("causeway intention get / delete", () => {
  const routes = { "GET /v1/connect/intentions": { body: [webToDb, anyToDb] }, [`GET /v1/connect/intentions/${ID}`]: { body: webToDb } };

  test("get by SRC DST looks the ID up, then prints the intention", async () => {
    agent.reset(routes);
    const res = await run(intention, ["get", "web", "default/db"]);
    expect(res).toEqual({
      code: 0,
      err: "",
      out: [
        "Source:       web",
        "Destination:  db",
        "Action:       allow",
        `ID:           ${ID}`,
        "Meta[env]:    prod",
        "Meta[team]:   a",
        "Created At:   Monday, 01-Jun-20 10:00:00 UTC",
        "",
      ].join("\n"),
    });
    expect(agent.lines()).toEqual(["GET /v1/connect/intentions", `GET /v1/connect/intentions/${ID}`]);
  });

  test("get by ID; unknown pair; wrong argument count", async () => {
    agent.reset(routes);
    expect((await run(intention, ["get", ID])).code).toBe(0);
    expect(agent.lines()).toEqual([`GET /v1/connect/intentions/${ID}`]);
    expect(await run(intention, ["get", "x", "y"])).toEqual({ code: 1, out: "", err: 'Error: Intention with source "x" and destination "y" not found.\n' });
    expect((await run(intention, ["get"])).err).toBe("Error: command requires exactly 1 or 2 arguments\n");
  });

  test("delete by pair or ID", async () => {
    agent.reset({ ...routes, [`DELETE /v1/connect/intentions/${anyToDb.ID}`]: { body: true } });
    expect(await run(intention, ["delete", "ops/*", "db"])).toEqual({ code: 0, out: "Intention deleted.\n", err: "" });
    expect((await run(intention, ["delete", ID])).err).toBe("Error deleting the intention: Unexpected response code: 404 (not found)\n");
  });

  test("RFC 850 in UTC", () => {
    expect(rfc850Utc("2021-12-31T23:59:59.999Z")).toBe("Friday, 31-Dec-21 23:59:59 UTC");
  });
});

describe("causeway intention check / match", () => {
  test("check: Allowed exit 0, Denied exit 1, errors exit 2 (Consul's codes)", async () => {
    agent.reset({ "GET /v1/connect/intentions/check": (req) => ({ body: { Allowed: req.query.includes("source=web") } }) });
    expect(await run(intention, ["check", "web", "db"])).toEqual({ code: 0, out: "Allowed\n", err: "" });
    expect(await run(intention, ["check", "api", "db"])).toEqual({ code: 1, out: "Denied\n", err: "" });
    expect(agent.lines()[0]).toBe("GET /v1/connect/intentions/check?destination=db&source=web&source-type=consul");
    expect(await run(intention, ["check", "web"])).toEqual({ code: 2, out: "", err: "Error: command requires exactly two arguments: src and dst\n" });
    agent.reset();
    expect((await run(intention, ["check", "web", "db"])).code).toBe(2);
  });

  test("match: by destination by default, -source; prints in evaluation order", async () => {
    agent.reset({ "GET /v1/connect/intentions/match": (req) => ({ body: { db: req.query.startsWith("by=destination") ? [webToDb, anyToDb] : null } }) });
    expect(await run(intention, ["match", "db"])).toEqual({ code: 0, out: "web => db (allow)\nops/* => db (deny)\n", err: "" });
    expect(await run(intention, ["match", "-source", "db"])).toEqual({ code: 0, out: "", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/connect/intentions/match?by=destination&name=db", "GET /v1/connect/intentions/match?by=source&name=db"]);
    expect((await run(intention, ["match", "-source", "-destination", "db"])).err).toBe("Error: only one of -source or -destination may be specified\n");
    expect((await run(intention, ["match"])).err).toBe("Error: command requires exactly one argument: src or dst\n");
  });
});
