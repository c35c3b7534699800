import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { startRecordingAgent, type FakeReply, type FakeRoute, type RecordingAgent } from "../../../test/harness/cli_http_fake.ts";
import { createWatchCommand, type WatchDeps } from "./watch.ts";
import { spawnHandler, type HandlerSpawner, type InterruptSignal } from "./watch/handler_process.ts";

const LEADER = { "GET /v1/status/leader": { body: "127.0.0.1:8300" } };
const b64 = (s: string) => Buffer.from(s).toString("base64");
const pair = (Key: string, value: string, ModifyIndex = 7) => ({ LockIndex: 0, Key, Flags: 0, Value: b64(value), CreateIndex: 5, ModifyIndex });
/** The Go API's KVPair layout of `pair(...)`, compact. */
const goPair = (Key: string, value: string, ModifyIndex = 7) => `{"Key":"${Key}","CreateIndex":5,"ModifyIndex":${ModifyIndex},"LockIndex":0,"Flags":0,"Value":"${b64(value)}","Session":""}`;

let agent: RecordingAgent;
let dir: string;
beforeAll(async () => {
  agent = await startRecordingAgent();
  dir = mkdtempSync(join(tmpdir(), "causeway-watch-"));
});
afterAll(async () => {
  await agent.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Test dependencies: the fake agent's address, no real sleeps (recorded), time 0, interrupts on demand. */
function harness(extra: Partial<WatchDeps> = {}) {
  const slept: number[] = [];
  let listener: ((sig: InterruptSignal) => void) | undefined;
  const deps: WatchDeps = {
    env: () => ({ CONSUL_HTTP_ADDR: agent.url, PATH: process.env.PATH, SHELL: "/bin/sh" }),
    onInterrupt: (l) => {
      listener = l;
      return () => (listener = undefined);
    },
    sleep: async (ms) => void slept.push(ms),
    now: () => new Date(0),
    spawnHandler,
    ...extra,
  };
  return { watch: createWatchCommand(deps), slept, interrupt: (sig: InterruptSignal = "SIGINT") => listener?.(sig) };
}

/** A route that answers `replies` in turn, then interrupts the watch and keeps answering the last one. */
function sequence(replies: readonly FakeReply[], interrupt: () => void): FakeRoute {
  let i = 0;
  return () => {
    if (i >= replies.length) interrupt();
    return replies[Math.min(i++, replies.length - 1)]!;
  };
}

const indexed = (index: number, body: unknown, status = 200): FakeReply => ({ status, body, headers: { "X-Consul-Index": String(index) } });

describe("causeway watch without a handler: prints the value once as Go's MarshalIndent", () => {
  test("-type key: the Go API's KVPair layout; a missing key is null", async () => {
    const { watch } = harness();
    agent.reset({ ...LEADER, "GET /v1/kv/foo/bar": indexed(7, [pair("foo/bar", "hello")]), "GET /v1/kv/nope": indexed(9, "", 404) });
    expect(await run(watch, ["-type=key", "-key=foo/bar"])).toEqual({
      code: 0,
      out: `{\n    "Key": "foo/bar",\n    "CreateIndex": 5,\n    "ModifyIndex": 7,\n    "LockIndex": 0,\n    "Flags": 0,\n    "Value": "${b64("hello")}",\n    "Session": ""\n}\n`,
      err: "",
    });
    expect(await run(watch, ["-type", "key", "-key", "nope"])).toEqual({ code: 0, out: "null\n", err: "" });
    expect(agent.lines()).toEqual(["GET /v1/status/leader", "GET /v1/kv/foo/bar", "GET /v1/status/leader", "GET /v1/kv/nope"]);
  });

  test("-type keyprefix lists with ?recurse=; nothing there (404) is null", async () => {
    const { watch } = harness();
    agent.reset({ ...LEADER, "GET /v1/kv/app/": indexed(8, [pair("app/a", "1"), pair("app/b", "2")]), "GET /v1/kv/empty": indexed(8, "", 404) });
    const { code, out } = await run(watch, ["-type=keyprefix", "-prefix=app/"]);
    expect(code).toBe(0);
    expect(JSON.parse(out).map((p: { Key: string }) => p.Key)).toEqual(["app/a", "app/b"]);
    expect(out).toStartWith('[\n    {\n        "Key": "app/a",\n');
    expect((await run(watch, ["-type=keyprefix", "-prefix=empty"])).out).toBe("null\n");
    expect(agent.lines()).toEqual(["GET /v1/status/leader", "GET /v1/kv/app/?recurse=", "GET /v1/status/leader", "GET /v1/kv/empty?recurse="]);
  });

  test("-type services (keys sorted) and -type nodes (the API's Node fields), with -stale, -datacenter and -token", async () => {
    const { watch } = harness();
    agent.reset({
      ...LEADER,
      "GET /v1/catalog/services": indexed(4, { web: ["v1"], consul: [] }),
      "GET /v1/catalog/nodes": indexed(4, [{ ID: "id1", Node: "n1", Address: "10.0.0.1", Datacenter: "dc2", TaggedAddresses: { lan: "10.0.0.1" }, Meta: {}, CreateIndex: 3, ModifyIndex: 4 }]),
    });
    expect((await run(watch, ["-type=services", "-stale", "-datacenter=dc2", "-token=secret"])).out).toBe('{\n    "consul": [],\n    "web": [\n        "v1"\n    ]\n}\n');
    expect(agent.requests.map((r) => r.headers.get("x-consul-token"))).toEqual(["secret", "secret"]);
    const nodes = await run(watch, ["-type=nodes"]);
    expect(nodes.out).toBe(
      '[\n    {\n        "ID": "id1",\n        "Node": "n1",\n        "Address": "10.0.0.1",\n        "Datacenter": "dc2",\n        "TaggedAddresses": {\n            "lan": "10.0.0.1"\n        },\n        "Meta": {},\n        "CreateIndex": 3,\n        "ModifyIndex": 4\n    }\n]\n',
    );
    expect(agent.lines()).toEqual(["GET /v1/status/leader?dc=dc2", "GET /v1/catalog/services?dc=dc2&stale=", "GET /v1/status/leader", "GET /v1/catalog/nodes"]);
  });

  test("-type service with repeated -tag and -passingonly=true; -type checks by state (default any) or by service", async () => {
    const { watch } = harness();
    const check = { Node: "n1", CheckID: "c1", Name: "web check", Status: "critical", Notes: "", Output: "down", ServiceID: "web1", ServiceName: "web", ServiceTags: ["v1"], Type: "ttl", Definition: {}, CreateIndex: 9, ModifyIndex: 9 };
    agent.reset({
      ...LEADER,
      "GET /v1/health/service/web": indexed(9, [{ Node: { Node: "n1" }, Service: { ID: "web1", Service: "web", Tags: ["v1"], Port: 80 }, Checks: [check] }]),
      "GET /v1/health/state/critical": indexed(9, [check]),
      "GET /v1/health/state/any": indexed(9, []),
      "GET /v1/health/checks/web": indexed(9, [check]),
    });
    const svc = await run(watch, ["-type=service", "-service=web", "-tag=v1", "-tag=prod", "-passingonly=true"]);
    expect(svc.code).toBe(0);
    expect(JSON.parse(svc.out)[0].Checks[0].Definition).toEqual({ Interval: "0s", Timeout: "0s", DeregisterCriticalServiceAfter: "0s", HTTP: "", Header: null, Method: "", Body: "", TLSSkipVerify: false, TCP: "" });
    const critical = await run(watch, ["-type=checks", "-state=critical"]);
    expect(JSON.parse(critical.out)).toEqual([{ ...check, Definition: JSON.parse(svc.out)[0].Checks[0].Definition }]);
    expect((await run(watch, ["-type=checks"])).out).toBe("[]\n");
    expect((await run(watch, ["-type=checks", "-service=web"])).code).toBe(0);
    expect(agent.lines().filter((l) => !l.includes("leader"))).toEqual([
      "GET /v1/health/service/web?passing=1&tag=v1&tag=prod",
      "GET /v1/health/state/critical",
      "GET /v1/health/state/any",
      "GET /v1/health/checks/web",
    ]);
  });

  test("-type event lists the events named by -name", async () => {
    const { watch } = harness();
    const event = { ID: "00000000-0000-0000-0000-000000000001", Name: "deploy", Payload: b64("v2"), NodeFilter: "", ServiceFilter: "", TagFilter: "", Version: 1, LTime: 3 };
    agent.reset({ ...LEADER, "GET /v1/event/list": indexed(1, [event]) });
    const { code, out } = await run(watch, ["-type=event", "-name=deploy"]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual([event]);
    expect(agent.lines()).toEqual(["GET /v1/status/leader", "GET /v1/event/list?name=deploy"]);
  });
});

describe("causeway watch argument and agent errors (Consul's words, exit 1, nothing watched)", () => {
  test.each([
    [["-key=a"], "Watch type must be specified\n\nUsage: causeway watch [options] [child...]"],
    [["-type=frob"], "Unsupported watch type: frob\n"],
    [["-type=key"], "Must specify a single key to watch\n"],
    [["-type=keyprefix"], "Must specify a single prefix to watch\n"],
    [["-type=service"], "Must specify a single service to watch\n"],
    [["-type=key", "-key=a", "-prefix=b", "-name=c"], "Invalid parameters: [name prefix]\n"],
    [["-type=checks", "-service=web", "-state=any"], "Cannot specify service and state\n"],
    [["-type=service", "-service=web", "-passingonly=yes"], 'Failed to parse passingonly flag: strconv.ParseBool: parsing "yes": invalid syntax\n'],
    [["-type=event", "-stale"], "Invalid parameters: [stale]\n"],
    [["-type=connect_roots"], "Type connect_roots is not supported in the CLI tool\n"],
    [["-type=key", "-nope"], "flag provided but not defined: -nope\nUsage: causeway watch"],
  ])("%j", async (argv: string[], err: string) => {
    const { watch } = harness();
    agent.reset(LEADER);
    const res = await run(watch, argv);
    expect(res.code).toBe(1);
    expect(res.out).toBe("");
    expect(res.err).toStartWith(err);
    expect(agent.requests).toEqual([]);
  });

  test("an unreachable agent is 'Error querying Consul agent'; a bad address 'Error connecting to Consul agent'", async () => {
    const { watch } = harness();
    expect(await run(watch, ["-http-addr=127.0.0.1:1", "-type=services"])).toEqual({
      code: 1, out: "", err: 'Error querying Consul agent: Get "http://127.0.0.1:1/v1/status/leader": connection refused\n',
    });
    expect(await run(watch, ["-http-addr=ftp://x", "-type=services"])).toEqual({
      code: 1, out: "", err: 'Error connecting to Consul agent: unsupported scheme in HTTP address "ftp://x" (want http or https)\n',
    });
  });

  test("-h prints the usage with the HTTP API and command options", async () => {
    const { code, out } = await run(harness().watch, ["-h"]);
    expect(code).toBe(0);
    expect(out).toStartWith("Usage: causeway watch [options] [child...]");
    expect(out).toContain("-http-addr=<address>");
    expect(out).toContain("-passingonly=<[true|false]>");
    expect(out).toContain("-tag=<tag>");
  });
});

describe("causeway watch with a handler", () => {
  const handlerScript = (file: string) => `cat >> ${file}; echo " index=$CONSUL_INDEX" >> ${file}`;

  test("runs `sh -c` on each change with the JSON on stdin and CONSUL_INDEX; blocks on ?index=; an interrupt is exit 0", async () => {
    const h = harness();
    const file = join(dir, "changes.txt");
    agent.reset({ ...LEADER, "GET /v1/kv/k": sequence([indexed(3, [pair("k", "a", 3)]), indexed(3, [pair("k", "a", 3)]), indexed(6, [pair("k", "a", 3)]), indexed(8, [pair("k", "b", 8)])], h.interrupt) });
    expect(await run(h.watch, ["-type=key", "-key=k", handlerScript(file)])).toEqual({ code: 0, out: "", err: "" });
    expect(readFileSync(file, "utf8")).toBe(`${goPair("k", "a", 3)}\n index=3\n${goPair("k", "b", 8)}\n index=8\n`);
    expect(agent.lines()).toEqual([
      "GET /v1/status/leader", "GET /v1/kv/k", "GET /v1/kv/k?index=3&wait=4m", "GET /v1/kv/k?index=3&wait=4m", "GET /v1/kv/k?index=6&wait=4m", "GET /v1/kv/k?index=8&wait=4m",
    ]);
  });

  test("an index that goes backwards is asked again without an index; the handler sees the new value and index", async () => {
    const h = harness();
    const file = join(dir, "reset.txt");
    agent.reset({ ...LEADER, "GET /v1/kv/k": sequence([indexed(10, [pair("k", "a", 10)]), indexed(5, [pair("k", "b", 5)]), indexed(7, [pair("k", "b", 5)])], h.interrupt) });
    expect((await run(h.watch, ["-type=key", "-key=k", handlerScript(file)])).code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(`${goPair("k", "a", 10)}\n index=10\n${goPair("k", "b", 5)}\n index=5\n`);
    expect(agent.lines().slice(1)).toEqual(["GET /v1/kv/k", "GET /v1/kv/k?index=10&wait=4m", "GET /v1/kv/k", "GET /v1/kv/k?index=7&wait=4m"]);
  });

  test("an agent error is logged and retried after Consul's back-off; the answer after it runs the handler again", async () => {
    const h = harness();
    const file = join(dir, "recover.txt");
    agent.reset({ ...LEADER, "GET /v1/kv/k": sequence([indexed(3, [pair("k", "a", 3)]), { status: 500, body: "boom" }, { status: 500, body: "boom" }, indexed(3, [pair("k", "a", 3)])], h.interrupt) });
    const res = await run(h.watch, ["-type=key", "-key=k", handlerScript(file)]);
    expect(res.code).toBe(0);
    const line = (retry: string) => `1970-01-01T00:00:00.000Z [ERROR] watch.watch: Watch errored: type=key error="Unexpected response code: 500 (boom)" retry=${retry}\n`;
    expect(res.err).toBe(line("5s") + line("20s"));
    expect(h.slept).toEqual([5000, 20000]);
    expect(readFileSync(file, "utf8")).toBe(`${goPair("k", "a", 3)}\n index=3\n`.repeat(2));
    expect(agent.lines().slice(1)).toEqual(["GET /v1/kv/k", "GET /v1/kv/k?index=3&wait=4m", "GET /v1/kv/k", "GET /v1/kv/k", "GET /v1/kv/k?index=3&wait=4m"]);
  });

  test("-shell=false runs the arguments as the command line; a failing handler stops the watch with exit 1", async () => {
    const h = harness();
    const file = join(dir, "noshell.txt");
    agent.reset({ ...LEADER, "GET /v1/kv/k": indexed(3, [pair("k", "a", 3)]) });
    expect(await run(h.watch, ["-type=key", "-key=k", "-shell=false", "/bin/sh", "-c", `cat > ${file}; exit 3`])).toEqual({ code: 1, out: "", err: "Error executing handler: exit status 3\n" });
    expect(readFileSync(file, "utf8")).toBe(`${goPair("k", "a", 3)}\n`);
    expect(await run(h.watch, ["-type=key", "-key=k", "-shell=false", "no-such-watch-handler"])).toEqual({
      code: 1, out: "", err: 'Error starting handler: exec: "no-such-watch-handler": executable file not found in $PATH\n',
    });
    expect(await run(h.watch, ["-type=key", "-key=k", "kill -TERM $$"])).toEqual({ code: 1, out: "", err: "Error executing handler: signal: terminated\n" });
  });

  test("an interrupt while the handler runs is forwarded to it, and the watch exits 0", async () => {
    let h: ReturnType<typeof harness>;
    const signals: string[] = [];
    const spawner: HandlerSpawner = (spec) => {
      expect(spec.env.CONSUL_INDEX).toBe("3");
      expect(spec.argv).toEqual(["/bin/sh", "-c", "handler arg"]);
      queueMicrotask(() => h.interrupt("SIGTERM"));
      return { done: new Promise(() => {}), signal: (sig) => void signals.push(sig) };
    };
    h = harness({ spawnHandler: spawner });
    agent.reset({ ...LEADER, "GET /v1/kv/k": indexed(3, [pair("k", "a", 3)]) });
    expect(await run(h.watch, ["-type=key", "-key=k", "handler", "arg"])).toEqual({ code: 0, out: "", err: "" });
    expect(signals).toEqual(["SIGTERM"]);
  });
});
