import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createConfigCommand } from "../config.ts";

let agent: RecordingAgent;
let config: ReturnType<typeof createConfigCommand>;
let stdin = "";
beforeAll(async () => {
  agent = await startRecordingAgent();
  config = createConfigCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new TextEncoder().encode(stdin) });
});
afterAll(() => agent.close());

const dir = mkdtempSync(join(tmpdir(), "cw-config-"));
const file = (name: string, body: string) => {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
};
const webDefaults = { Kind: "service-defaults", Name: "web", Protocol: "http", MeshGateway: {}, Expose: {}, CreateIndex: 0, ModifyIndex: 0 };

describe("causeway config write", () => {
  test("decodes the file (snake_case too) and PUTs the entry", async () => {
    agent.reset({ "PUT /v1/config": { body: "true" } });
    const path = file("web.json", JSON.stringify({ kind: "service-defaults", name: "web", protocol: "HTTP" }));
    expect(await run(config, ["write", path])).toEqual({ code: 0, out: "Config entry written: service-defaults/web\n", err: "" });
    expect(agent.lines()).toEqual(["PUT /v1/config"]);
    expect(JSON.parse(agent.requests[0]!.text)).toEqual(webDefaults);
  });

  test("- reads stdin; -cas -modify-index sends ?cas=N; false is not updated, exit 1", async () => {
    agent.reset({ "PUT /v1/config": (req) => ({ body: req.query === "cas=4" ? "true" : "false" }) });
    stdin = JSON.stringify({ Kind: "proxy-defaults", Name: "global", Config: { protocol: "http" } });
    expect((await run(config, ["write", "-cas", "-modify-index=4", "-"])).code).toBe(0);
    expect(await run(config, ["write", "-cas", "-modify-index=5", "-datacenter=dc2", "-"])).toEqual({ code: 1, out: "", err: "Config entry not updated: proxy-defaults/global\n" });
    expect(agent.lines()).toEqual(["PUT /v1/config?cas=4", "PUT /v1/config?cas=5&dc=dc2"]);
  });

  test("refuses bad input before any request", async () => {
    agent.reset();
    expect((await run(config, ["write"])).err).toBe("Must provide exactly one positional argument to specify the config entry to write\n");
    expect((await run(config, ["write", join(dir, "none.json")])).err).toStartWith("Failed to load data: Failed to read file: ");
    const noKind = await run(config, ["write", file("nokind.json", '{"Name":"x"}')]);
    expect(noKind).toEqual({ code: 1, out: "", err: "Failed to decode config entry input: Payload does not contain a kind/Kind key at the top level\n" });
    expect(agent.lines()).toEqual([]);
  });

  test("an agent error is reported with the entry", async () => {
    agent.reset({ "PUT /v1/config": { status: 400, body: "Name is required" } });
    const res = await run(config, ["write", file("web2.json", JSON.stringify({ Kind: "service-defaults", Name: "web" }))]);
    expect(res).toEqual({ code: 1, out: "", err: "Error writing config entry service-defaults/web: Unexpected response code: 400 (Name is required)\n" });
  });
});

describe("causeway config read / list / delete", () => {
  test("read prints the entry as indented JSON", async () => {
    agent.reset({ "GET /v1/config/service-defaults/web": { body: webDefaults } });
    const res = await run(config, ["read", "-kind", "service-defaults", "-name", "web"]);
    expect(res).toEqual({ code: 0, out: `${JSON.stringify(webDefaults, null, 4)}\n`, err: "" });
  });

  test("read: a missing entry and missing flags", async () => {
    agent.reset({ "GET /v1/config/service-defaults/db": { status: 404, body: 'Config entry not found for "service-defaults" / "db"' } });
    expect((await run(config, ["read", "-kind", "service-defaults", "-name", "db"])).err).toBe(
      'Error reading config entry "service-defaults" / "db": Unexpected response code: 404 (Config entry not found for "service-defaults" / "db")\n',
    );
    expect(await run(config, ["read", "-name", "x"])).toEqual({ code: 1, out: "", err: "Must specify the -kind parameter\n" });
    expect(await run(config, ["read", "-kind", "x"])).toEqual({ code: 1, out: "", err: "Must specify the -name parameter\n" });
  });

  test("list prints names; needs -kind", async () => {
    agent.reset({ "GET /v1/config/service-defaults": { body: [webDefaults, { ...webDefaults, Name: "db" }] } });
    expect(await run(config, ["list", "-kind", "service-defaults"])).toEqual({ code: 0, out: "web\ndb\n", err: "" });
    expect((await run(config, ["list"])).err).toBe("Must specify the -kind parameter\n");
    agent.reset({ "GET /v1/config/bogus": { status: 400, body: "invalid config entry kind: bogus" } });
    expect((await run(config, ["list", "-kind", "bogus"])).err).toBe('Error listing config entries for kind "bogus": Unexpected response code: 400 (invalid config entry kind: bogus)\n');
  });

  test("delete sends DELETE and confirms", async () => {
    agent.reset({ "DELETE /v1/config/service-router/web": { body: {} } });
    expect(await run(config, ["delete", "-kind", "service-router", "-name", "web"])).toEqual({ code: 0, out: "Config entry deleted: service-router/web\n", err: "" });
    agent.reset({ "DELETE /v1/config/service-defaults/web": { status: 400, body: "graph says no" } });
    expect((await run(config, ["delete", "-kind", "service-defaults", "-name", "web"])).err).toBe(
      "Error deleting config entry service-defaults/web: Unexpected response code: 400 (graph says no)\n",
    );
  });

  test("the group lists its subcommands", async () => {
    const res = await run(config, []);
    expect(res.code).toBe(1);
    expect(res.err).toContain("    delete    Delete a centralized config entry");
  });
});
