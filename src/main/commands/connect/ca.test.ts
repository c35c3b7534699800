import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createConnectCommand } from "../connect.ts";

const dir = mkdtempSync(join(tmpdir(), "causeway-ca-cli-"));
let agent: RecordingAgent;
let connect: ReturnType<typeof createConnectCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  connect = createConnectCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => {
  agent.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("causeway connect ca", () => {
  test("get-config prints the configuration as tab-indented JSON", async () => {
    const config = { ClusterID: "c1", Provider: "consul", Config: { LeafCertTTL: "72h" }, CreateIndex: 4, ModifyIndex: 4 };
    agent.reset({ "GET /v1/connect/ca/configuration": { body: config } });
    const { code, out, err } = await run(connect, ["ca", "get-config"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(`${JSON.stringify(config, null, "\t")}\n`);
  });

  test("set-config PUTs the file and prints Consul's message", async () => {
    agent.reset({ "PUT /v1/connect/ca/configuration": { body: "" } });
    const path = join(dir, "ca.json");
    writeFileSync(path, JSON.stringify({ Provider: "consul", Config: { LeafCertTTL: "24h" } }));
    const { code, out } = await run(connect, ["ca", "set-config", "-config-file", path]);
    expect(code).toBe(0);
    expect(out).toBe("Configuration updated!\n");
    expect(JSON.parse(agent.requests[0]!.text)).toEqual({ Provider: "consul", Config: { LeafCertTTL: "24h" } });
  });

  test("set-config errors: no flag, unreadable file, bad JSON, refused by the agent", async () => {
    expect((await run(connect, ["ca", "set-config"])).err).toContain("-config-file flag is required");
    expect((await run(connect, ["ca", "set-config", "-config-file", join(dir, "missing.json")])).err).toContain("Error reading config file");
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{");
    expect((await run(connect, ["ca", "set-config", "-config-file", bad])).err).toContain("Error parsing config file");
    agent.reset({ "PUT /v1/connect/ca/configuration": { status: 400, body: "leaf cert TTL must be greater than 1h" } });
    const good = join(dir, "good.json");
    writeFileSync(good, "{}");
    const refused = await run(connect, ["ca", "set-config", "-config-file", good]);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("Error setting CA configuration: Unexpected response code: 400");
  });
});
