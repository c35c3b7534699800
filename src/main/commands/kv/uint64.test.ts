import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createKvCommand } from "../kv.ts";

const MAX = "18446744073709551615";
let agent: RecordingAgent;
let kv: ReturnType<typeof createKvCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  kv = createKvCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

describe("KV flags and indexes over the whole uint64 range", () => {
  test("put sends -flags and -modify-index exactly; values past uint64 are usage errors naming the flag", async () => {
    agent.reset({ "PUT /v1/kv/k": { body: "true" } });
    expect((await run(kv, ["put", `-flags=${MAX}`, "-cas", "-modify-index=9007199254740993", "k", "v"])).code).toBe(0);
    expect(agent.lines()).toEqual([`PUT /v1/kv/k?cas=9007199254740993&flags=${MAX}`]);
    const bad = await run(kv, ["put", "-flags=18446744073709551616", "k", "v"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('invalid value "18446744073709551616" for flag -flags');
  });

  test("get -detailed and export print the exact flags; import sends them exactly", async () => {
    const body = `[{"Key":"k","CreateIndex":5,"ModifyIndex":7,"LockIndex":0,"Flags":${MAX},"Value":null}]`;
    agent.reset({ "GET /v1/kv/k": { body } });
    expect((await run(kv, ["get", "-detailed", "k"])).out).toContain(`Flags            ${MAX}\n`);
    expect((await run(kv, ["export", "k"])).out).toContain(`"flags": ${MAX},`);
    agent.reset({ "PUT /v1/kv/a": { body: "true" } });
    expect((await run(kv, ["import", `[{"key":"a","flags":${MAX},"value":""}]`])).code).toBe(0);
    expect(agent.lines()).toEqual([`PUT /v1/kv/a?flags=${MAX}`]);
    const bad = await run(kv, ["import", `[{"key":"a","flags":18446744073709551616,"value":""}]`]);
    expect(bad.code).toBe(1);
  });
});
