import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createKvCommand } from "../kv.ts";

let agent: RecordingAgent;
let kv: ReturnType<typeof createKvCommand>;
const stdin = new TextEncoder().encode("from stdin\n");
beforeAll(async () => {
  agent = await startRecordingAgent();
  kv = createKvCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => stdin });
});
afterAll(() => agent.close());

describe("causeway kv put", () => {
  test("writes the data as the raw body", async () => {
    agent.reset({ "PUT /v1/kv/redis/maxconns": { body: "true" } });
    expect(await run(kv, ["put", "redis/maxconns", "5"])).toEqual({ code: 0, out: "Success! Data written to: redis/maxconns\n", err: "" });
    expect(agent.lines()).toEqual(["PUT /v1/kv/redis/maxconns"]);
    expect(agent.requests[0]!.text).toBe("5");
  });

  test("no DATA writes an empty value; -flags is sent when not 0; -datacenter as ?dc=", async () => {
    agent.reset({ "PUT /v1/kv/k": { body: "true" } });
    await run(kv, ["put", "k"]);
    await run(kv, ["put", "-flags=42", "-datacenter", "dc2", "k", "v"]);
    await run(kv, ["put", "-flags=0", "k", "v"]);
    expect(agent.lines()).toEqual(["PUT /v1/kv/k", "PUT /v1/kv/k?dc=dc2&flags=42", "PUT /v1/kv/k"]);
    expect(agent.requests[0]!.body.length).toBe(0);
  });

  test("@file reads a file's bytes, - reads stdin, -base64 decodes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cw-kv-"));
    const file = join(dir, "blob.bin");
    writeFileSync(file, new Uint8Array([0, 255, 10, 65]));
    agent.reset({ "PUT /v1/kv/k": { body: "true" } });
    expect((await run(kv, ["put", "k", `@${file}`])).code).toBe(0);
    expect((await run(kv, ["put", "k", "-"])).code).toBe(0);
    expect((await run(kv, ["put", "-base64", "k", "aGVsbG8="])).code).toBe(0);
    expect((await run(kv, ["put", "k", "-notaflag"])).code).toBe(0);
    expect([...agent.requests[0]!.body]).toEqual([0, 255, 10, 65]);
    expect(agent.requests.slice(1).map((r) => r.text)).toEqual(["from stdin\n", "hello", "-notaflag"]);
    const missing = await run(kv, ["put", "k", `@${join(dir, "none")}`]);
    expect(missing.code).toBe(1);
    expect(missing.err).toStartWith("Error! Failed to read file: ");
  });

  test("-cas sends ?cas=N; false from the agent is CAS failed, exit 1", async () => {
    agent.reset({ "PUT /v1/kv/k": (req) => ({ body: req.query === "cas=7" ? "true" : "false" }) });
    expect(await run(kv, ["put", "-cas", "-modify-index=7", "k", "v"])).toEqual({ code: 0, out: "Success! Data written to: k\n", err: "" });
    expect(await run(kv, ["put", "-cas", "-modify-index=8", "k", "v"])).toEqual({ code: 1, out: "", err: "Error! Did not write to k: CAS failed\n" });
    expect(await run(kv, ["put", "-cas", "k", "v"])).toEqual({ code: 1, out: "", err: "Must specify -modify-index with -cas!\n" });
    expect(agent.lines()).toEqual(["PUT /v1/kv/k?cas=7", "PUT /v1/kv/k?cas=8"]);
  });

  test("-acquire / -release need -session and send ?acquire= / ?release=", async () => {
    agent.reset({ "PUT /v1/kv/lock": (req) => ({ body: req.query.includes("s1") ? "true" : "false" }) });
    expect(await run(kv, ["put", "-acquire", "lock"])).toEqual({ code: 1, out: "", err: "Error! Missing -session (required with -acquire and -release)\n" });
    expect(await run(kv, ["put", "-acquire", "-session=s1", "lock", "me"])).toEqual({ code: 0, out: "Success! Lock acquired on: lock\n", err: "" });
    expect(await run(kv, ["put", "-release", "-session=s1", "lock"])).toEqual({ code: 0, out: "Success! Lock released on: lock\n", err: "" });
    expect(await run(kv, ["put", "-acquire", "-session=s2", "lock"])).toEqual({ code: 1, out: "", err: "Error! Did not acquire lock\n" });
    expect(await run(kv, ["put", "-release", "-session=s2", "lock"])).toEqual({ code: 1, out: "", err: "Error! Did not release lock\n" });
    expect(agent.lines()).toEqual(["PUT /v1/kv/lock?acquire=s1", "PUT /v1/kv/lock?release=s1", "PUT /v1/kv/lock?acquire=s2", "PUT /v1/kv/lock?release=s2"]);
  });

  test("argument and flag errors", async () => {
    agent.reset();
    expect(await run(kv, ["put"])).toEqual({ code: 1, out: "", err: "Error! Missing KEY argument\n" });
    expect(await run(kv, ["put", "a", "b", "c"])).toEqual({ code: 1, out: "", err: "Error! Too many arguments (expected 1 or 2, got 3)\n" });
    expect((await run(kv, ["put", "-base64", "k", "***"])).err).toBe("Error! Cannot base 64 decode data: illegal base64 data at input byte 0\n");
    expect((await run(kv, ["put", "-flags=-1", "k"])).err).toStartWith('invalid value "-1" for flag -flags: parse error\nUsage: causeway kv put');
    expect((await run(kv, ["put", "-modify-index"])).err).toStartWith("flag needs an argument: -modify-index\n");
    expect(await run(kv, ["put", "/abs", "v"])).toEqual({ code: 1, out: "", err: "Error! Failed writing data: Invalid key. Key must not begin with a '/': /abs\n" });
    expect(agent.requests).toEqual([]);
  });

  test("an agent error is reported with the status", async () => {
    agent.reset({ "PUT /v1/kv/k": { status: 413, body: "Value exceeds 524288 byte limit" } });
    expect(await run(kv, ["put", "k", "v"])).toEqual({ code: 1, out: "", err: "Error! Failed writing data: Unexpected response code: 413 (Value exceeds 524288 byte limit)\n" });
  });
});

describe("causeway kv delete", () => {
  test("deletes one key, a prefix (?recurse=), or with CAS (?cas=N)", async () => {
    agent.reset({ "DELETE /v1/kv/k": (req) => ({ body: req.query === "cas=3" ? "true" : req.query === "cas=4" ? "false" : "true" }), "DELETE /v1/kv/app": { body: "true" } });
    expect(await run(kv, ["delete", "/k"])).toEqual({ code: 0, out: "Success! Deleted key: k\n", err: "" });
    expect(await run(kv, ["delete", "-recurse", "app"])).toEqual({ code: 0, out: "Success! Deleted keys with prefix: app\n", err: "" });
    expect(await run(kv, ["delete", "-cas", "-modify-index=3", "k"])).toEqual({ code: 0, out: "Success! Deleted key: k\n", err: "" });
    expect(await run(kv, ["delete", "-cas", "-modify-index=4", "k"])).toEqual({ code: 1, out: "", err: "Error! Did not delete key k: CAS failed\n" });
    expect(agent.lines()).toEqual(["DELETE /v1/kv/k", "DELETE /v1/kv/app?recurse=", "DELETE /v1/kv/k?cas=3", "DELETE /v1/kv/k?cas=4"]);
  });

  test("-recurse without a key deletes everything", async () => {
    agent.reset({ "DELETE /v1/kv/": { body: "true" } });
    expect(await run(kv, ["delete", "-recurse"])).toEqual({ code: 0, out: "Success! Deleted keys with prefix: \n", err: "" });
    expect(agent.lines()).toEqual(["DELETE /v1/kv/?recurse="]);
  });

  test("Consul's argument checks", async () => {
    agent.reset();
    const cases: Array<[string[], string]> = [
      [["delete"], "Error! Missing KEY argument"],
      [["delete", "a", "b"], "Too many arguments (expected 1, got 2)"],
      [["delete", "-cas", "k"], "Cannot delete a key that does not exist. Provide a -modify-index greater than than 0."],
      [["delete", "-modify-index=2", "k"], "Cannot specify -modify-index without -cas!"],
      [["delete", "-cas", "-modify-index=2", "-recurse", "k"], "Cannot specify both -cas and -recurse!"],
    ];
    for (const [argv, err] of cases) expect(await run(kv, argv)).toEqual({ code: 1, out: "", err: `${err}\n` });
    expect(agent.requests).toEqual([]);
  });

  test("an agent error is exit 1", async () => {
    agent.reset({ "DELETE /v1/kv/k": { status: 500, body: "boom" } });
    expect(await run(kv, ["delete", "k"])).toEqual({ code: 1, out: "", err: "Error deleting key k: Unexpected response code: 500 (boom)\n" });
    expect((await run(kv, ["delete", "-recurse", "k"])).err).toBe("Error! Did not delete prefix k: Unexpected response code: 500 (boom)\n");
  });
});
