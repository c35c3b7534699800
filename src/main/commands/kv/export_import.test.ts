import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createKvCommand } from "../kv.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
let agent: RecordingAgent;
let stdinText = "";
let kv: ReturnType<typeof createKvCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  kv = createKvCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new TextEncoder().encode(stdinText) });
});
afterAll(() => agent.close());

describe("causeway kv export", () => {
  test("prints Go's MarshalIndent of {key, flags, value(base64)} entries", async () => {
    agent.reset({
      "GET /v1/kv/app": {
        body: [
          { Key: "app/a", CreateIndex: 1, ModifyIndex: 1, LockIndex: 0, Flags: 0, Value: b64("<1&2>") },
          { Key: "app/b", CreateIndex: 2, ModifyIndex: 2, LockIndex: 0, Flags: 7, Value: null },
        ],
      },
    });
    const { code, out, err } = await run(kv, ["export", "-stale", "app"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(`[\n\t{\n\t\t"key": "app/a",\n\t\t"flags": 0,\n\t\t"value": "${b64("<1&2>")}"\n\t},\n\t{\n\t\t"key": "app/b",\n\t\t"flags": 7,\n\t\t"value": ""\n\t}\n]\n`);
    expect(agent.lines()).toEqual(["GET /v1/kv/app?recurse=&stale="]);
  });

  test("nothing under the prefix prints [] (Go escapes <>& in keys)", async () => {
    agent.reset({ "GET /v1/kv/x": { body: [{ Key: "x<y>", Flags: 0, Value: null }] } });
    expect((await run(kv, ["export", "zzz"])).out).toBe("[]\n");
    expect((await run(kv, ["export", "x"])).out).toContain('"key": "x\\u003cy\\u003e"');
  });
});

describe("causeway kv import", () => {
  const doc = JSON.stringify([
    { key: "app/a", flags: 0, value: b64("one") },
    { Key: "app/b", Flags: 9, Value: b64("two") },
  ]);

  test("writes each entry (flags when not 0) and prints Imported: KEY", async () => {
    agent.reset({ "PUT /v1/kv/app/a": { body: "true" }, "PUT /v1/kv/app/b": { body: "true" } });
    expect(await run(kv, ["import", doc])).toEqual({ code: 0, out: "Imported: app/a\nImported: app/b\n", err: "" });
    expect(agent.lines()).toEqual(["PUT /v1/kv/app/a", "PUT /v1/kv/app/b?flags=9"]);
    expect(agent.requests.map((r) => r.text)).toEqual(["one", "two"]);
  });

  test("reads @file and - (stdin); round-trips an export", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cw-kv-"));
    writeFileSync(join(dir, "kv.json"), doc);
    agent.reset({ "PUT /v1/kv/app/a": { body: "true" }, "PUT /v1/kv/app/b": { body: "true" } });
    expect((await run(kv, ["import", `@${join(dir, "kv.json")}`])).code).toBe(0);
    stdinText = doc;
    expect((await run(kv, ["import", "-"])).code).toBe(0);
    expect(agent.requests.length).toBe(4);
  });

  test("errors: missing/empty/too many arguments, bad JSON, bad base64, a failed write stops", async () => {
    agent.reset({ "PUT /v1/kv/a": { status: 500, body: "nope" } });
    expect(await run(kv, ["import"])).toEqual({ code: 1, out: "", err: "Error! Missing DATA argument\n" });
    expect(await run(kv, ["import", ""])).toEqual({ code: 1, out: "", err: "Error! Empty DATA argument\n" });
    expect(await run(kv, ["import", "a", "b"])).toEqual({ code: 1, out: "", err: "Error! Too many arguments (expected 1, got 2)\n" });
    expect((await run(kv, ["import", "{"])).err).toStartWith("Cannot unmarshal data: ");
    expect((await run(kv, ["import", "{}"])).err).toBe("Cannot unmarshal data: json: cannot unmarshal object into Go value of type []*impexp.Entry\n");
    expect((await run(kv, ["import", '[{"key":"k","value":"!!"}]'])).err).toBe("Error base 64 decoding value for key k: illegal base64 data at input byte 0\n");
    const failed = await run(kv, ["import", JSON.stringify([{ key: "a", value: "" }, { key: "b", value: "" }])]);
    expect(failed).toEqual({ code: 1, out: "", err: "Error! Failed writing data for key a: Unexpected response code: 500 (nope)\n" });
    expect(agent.lines()).toEqual(["PUT /v1/kv/a"]);
  });
});
