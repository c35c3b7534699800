import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type RecordingAgent } from "../../../../test/harness/cli_http_fake.ts";
import { createKvCommand } from "../kv.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const pair = (Key: string, value: string | null, extra: object = {}) => ({ Key, CreateIndex: 5, ModifyIndex: 7, LockIndex: 0, Flags: 0, Value: value === null ? null : b64(value), ...extra });

let agent: RecordingAgent;
let kv: ReturnType<typeof createKvCommand>;
beforeAll(async () => {
  agent = await startRecordingAgent();
  kv = createKvCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url }), readStdin: async () => new Uint8Array() });
});
afterAll(() => agent.close());

describe("causeway kv get", () => {
  test("prints the raw value of one key", async () => {
    agent.reset({ "GET /v1/kv/foo/bar": { body: [pair("foo/bar", "hello world")] } });
    expect(await run(kv, ["get", "foo/bar"])).toEqual({ code: 0, out: "hello world\n", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/kv/foo/bar"]);
  });

  test("a leading slash is stripped; keys are escaped per segment", async () => {
    agent.reset({ "GET /v1/kv/a%20b/c%3Fd": { body: [pair("a b/c?d", "x")] } });
    expect((await run(kv, ["get", "/a b/c?d"])).out).toBe("x\n");
    expect(agent.lines()).toEqual(["GET /v1/kv/a%20b/c%3Fd"]);
  });

  test("a missing key (404) is exit 1 naming the key; an empty value prints an empty line", async () => {
    agent.reset({ "GET /v1/kv/empty": { body: [pair("empty", null)] } });
    expect(await run(kv, ["get", "nope"])).toEqual({ code: 1, out: "", err: "Error! No key exists at: nope\n" });
    expect(await run(kv, ["get", "empty"])).toEqual({ code: 0, out: "\n", err: "" });
  });

  test("-detailed prints the tabwriter block; -base64 encodes the value", async () => {
    agent.reset({ "GET /v1/kv/foo": { body: [pair("foo", "bar", { Flags: 42, Session: "sess-1" })] } });
    const { code, out } = await run(kv, ["get", "-detailed", "foo"]);
    expect(code).toBe(0);
    expect(out).toBe(
      ["CreateIndex      5", "Flags            42", "Key              foo", "LockIndex        0", "ModifyIndex      7", "Session          sess-1", "Value            bar", ""].join("\n"),
    );
    expect((await run(kv, ["get", "-base64", "foo"])).out).toBe(`${b64("bar")}\n`);
    expect((await run(kv, ["get", "-detailed", "-base64", "foo"])).out).toEndWith(`Value            ${b64("bar")}\n`);
  });

  test("-recurse lists key:value pairs (with ?recurse=), -detailed blocks separated by a blank line", async () => {
    const body = [pair("app/a", "1"), pair("app/b", "2")];
    agent.reset({ "GET /v1/kv/app": { body } });
    expect(await run(kv, ["get", "-recurse", "app"])).toEqual({ code: 0, out: "app/a:1\napp/b:2\n", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/kv/app?recurse="]);
    const detailed = await run(kv, ["get", "-recurse", "-detailed", "app"]);
    expect(detailed.out.split("\n\n").length).toBe(2);
    expect(detailed.out).toContain("Key              app/a\n");
    expect(detailed.out).toEndWith("Value            2\n");
  });

  test("-recurse with no key lists everything; nothing found is silence and exit 0", async () => {
    agent.reset();
    expect(await run(kv, ["get", "-recurse"])).toEqual({ code: 0, out: "", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/kv/?recurse="]);
  });

  test("-keys sends ?keys=&separator=/ (or none when empty) and prints each key", async () => {
    agent.reset({ "GET /v1/kv/app/": { body: ["app/a", "app/sub/"] } });
    expect(await run(kv, ["get", "-keys", "app/"])).toEqual({ code: 0, out: "app/a\napp/sub/\n", err: "" });
    await run(kv, ["get", "-keys", "-separator=", "app/"]);
    await run(kv, ["get", "-keys", "-separator=:", "-stale", "-datacenter=dc2", "app/"]);
    expect(agent.lines()).toEqual(["GET /v1/kv/app/?keys=&separator=%2F", "GET /v1/kv/app/?keys=", "GET /v1/kv/app/?dc=dc2&keys=&separator=%3A&stale="]);
  });

  test("-token (or CONSUL_HTTP_TOKEN) is sent as X-Consul-Token", async () => {
    agent.reset({ "GET /v1/kv/foo": { body: [pair("foo", "v")] } });
    await run(kv, ["get", "-token=secret", "foo"]);
    expect(agent.requests[0]!.headers.get("x-consul-token")).toBe("secret");
    const withEnv = createKvCommand({ env: () => ({ CONSUL_HTTP_ADDR: agent.url, CONSUL_HTTP_TOKEN: "from-env" }), readStdin: async () => new Uint8Array() });
    await run(withEnv, ["get", "foo"]);
    expect(agent.requests[1]!.headers.get("x-consul-token")).toBe("from-env");
  });

  test("argument errors: missing key, too many arguments, unknown flag", async () => {
    agent.reset();
    expect(await run(kv, ["get"])).toEqual({ code: 1, out: "", err: "Error! Missing KEY argument\n" });
    expect(await run(kv, ["get", "a", "b"])).toEqual({ code: 1, out: "", err: "Too many arguments (expected 1, got 2)\n" });
    const bad = await run(kv, ["get", "-nope", "a"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toStartWith("flag provided but not defined: -nope\nUsage: causeway kv get");
    expect(agent.requests).toEqual([]);
  });

  test("an agent error is exit 1 with the status and body", async () => {
    agent.reset({ "GET /v1/kv/foo": { status: 500, body: "No cluster leader\n" } });
    expect(await run(kv, ["get", "foo"])).toEqual({ code: 1, out: "", err: "Error querying the agent: Unexpected response code: 500 (No cluster leader)\n" });
  });

  test("-h prints usage with the HTTP API and command options", async () => {
    const { code, out } = await run(kv, ["get", "-h"]);
    expect(code).toBe(0);
    expect(out).toStartWith("Usage: causeway kv get [options] [KEY_OR_PREFIX]");
    expect(out).toContain("HTTP API Options");
    expect(out).toContain("-datacenter=<name>");
    expect(out).toContain("-separator=<string>");
  });
});

describe("causeway kv", () => {
  test("lists its subcommands; no subcommand is exit 1, -h exit 0, unknown is named", async () => {
    const none = await run(kv, []);
    expect(none.code).toBe(1);
    expect(none.err).toContain("Subcommands:\n    delete    Removes data from the KV store\n    export    Exports a tree from the KV store as JSON\n    get       Retrieves or lists data from the KV store");
    expect((await run(kv, ["-h"])).code).toBe(0);
    const unknown = await run(kv, ["frob"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toStartWith("unknown subcommand: frob\n");
  });
});

const MAX = "18446744073709551615";

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
