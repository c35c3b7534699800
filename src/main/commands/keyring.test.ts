import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runCommand as run } from "../../../test/harness/cli_agent.ts";
import { createHttpApi, type KeyringApi, type KeyringPoolResult } from "../../http/index.ts";
import { serveHttp, type HttpServerHandle } from "../../platform/index.ts";
import { createKeyringCommand } from "./keyring.ts";

const K1 = "pUqJrVyVRj5jsiYEkM/tFQYfWyJIv4s3XkvDwy7Cu5s=";
const K2 = "HWq0+0TFdXo7uFGiYGxMabKmV7uUjfA4s6z6/kN+I4g=";

const calls: string[] = [];
let next: KeyringPoolResult[] = [];
const answer = async (call: string) => (calls.push(call), next);
const keyring: KeyringApi = {
  list: () => answer("list"),
  install: (k) => answer(`install ${k}`),
  use: (k) => answer(`use ${k}`),
  remove: (k) => answer(`remove ${k}`),
};
const pool = (wan: boolean, over: Partial<KeyringPoolResult> = {}): KeyringPoolResult => ({
  wan, datacenter: "dc1", segment: "", messages: {}, keys: {}, numNodes: wan ? 1 : 3, error: "", ...over,
});

let agent: HttpServerHandle;
let addr: string;
const cmd = createKeyringCommand({ env: () => ({}) });

beforeAll(async () => {
  const app = createHttpApi({
    agent: { datacenter: "dc1", primaryDatacenter: "dc1", nodeName: "s1", nodeId: "id", server: true, version: "0.1.0", revision: "", advertiseAddr: "10.0.0.1", serfLanPort: 8301, serverPort: 8300, nodeMeta: {}, debugConfig: {}, stats: () => ({}) },
    raft: { leader: () => "", peers: () => [] },
    keyring,
  });
  agent = await serveHttp({ host: "127.0.0.1", port: 0, handler: (req) => app.fetch(req) });
  addr = `-http-addr=127.0.0.1:${agent.port}`;
});
afterAll(() => agent.close());

describe("causeway keyring", () => {
  test("-list prints every pool with each key's count, like consul keyring -list", async () => {
    calls.length = 0;
    next = [pool(true, { keys: { [K1]: 1 } }), pool(false, { keys: { [K2]: 3, [K1]: 2 } })];
    const { code, out, err } = await run(cmd, [addr, "-list"]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(`==> Gathering installed encryption keys...\n\nWAN:\n  ${K1} [1/1]\n\ndc1 (LAN):\n  ${K2} [3/3]\n  ${K1} [2/3]\n`);
    expect(calls).toEqual(["list"]);
  });

  for (const [flag, op, info] of [
    ["install", "install", "Installing new gossip encryption key..."],
    ["use", "use", "Changing primary gossip encryption key..."],
    ["remove", "remove", "Removing gossip encryption key..."],
  ] as const) {
    test(`-${flag} sends the key and reports success with exit 0`, async () => {
      calls.length = 0;
      next = [pool(true), pool(false)];
      const { code, out, err } = await run(cmd, [addr, `-${flag}`, K2]);
      expect({ code, out, err }).toEqual({ code: 0, out: `==> ${info}\n`, err: "" });
      expect(calls).toEqual([`${op} ${K2}`]);
    });
  }

  test("a failure on a node is exit 1 with the agent's error", async () => {
    next = [pool(false, { error: "1/3 nodes reported failure", messages: { c1: "Removing the primary key is not allowed" } })];
    const { code, out, err } = await run(cmd, [addr, "-remove", K1]);
    expect(code).toBe(1);
    expect(out).toBe("==> Removing gossip encryption key...\n");
    expect(err).toBe("error: Unexpected response code: 500 (2 errors occurred:\n\t* dc1 (LAN) error: 1/3 nodes reported failure\n\t* c1: Removing the primary key is not allowed)\n");
  });

  test("a malformed key is refused by the agent with a 400", async () => {
    calls.length = 0;
    const { code, err } = await run(cmd, [addr, "-install", "c2hvcnQ="]);
    expect(code).toBe(1);
    expect(err).toBe("error: Unexpected response code: 400 (Invalid key: key size must be 16, 24 or 32 bytes)\n");
    expect(calls).toEqual([]);
  });

  test("exactly one action: none, two, or an empty key are errors naming the flags", async () => {
    const none = await run(cmd, [addr]);
    expect(none.code).toBe(1);
    expect(none.err).toStartWith("One of -list, -install, -use or -remove is required\n\nUsage: causeway keyring [options]");
    const two = await run(cmd, [addr, "-list", "-install", K1]);
    expect(two).toEqual({ code: 1, out: "", err: "Only a single action is allowed (got -list and -install)\n" });
    const three = await run(cmd, [addr, "-use", K1, "-remove", K2]);
    expect(three.err).toBe("Only a single action is allowed (got -use and -remove)\n");
    const empty = await run(cmd, [addr, "-use="]);
    expect(empty.code).toBe(1);
    expect(empty.err).toContain("-use needs a key");
    const missing = await run(cmd, [addr, "-install"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toStartWith("flag needs an argument: -install");
    expect((await run(cmd, [addr, "-list=false"])).code).toBe(1);
  });

  test("-relay-factor must be 0 to 5 and is passed on", async () => {
    const bad = await run(cmd, [addr, "-list", "-relay-factor", "6"]);
    expect(bad).toEqual({ code: 1, out: "", err: "Error parsing relay factor: Relay factor must be in range: [0, 5]\n" });
    next = [pool(false)];
    expect((await run(cmd, [addr, "-list", "-relay-factor", "2"])).code).toBe(0);
  });

  test("an unreachable agent is exit 1 naming the request", async () => {
    const { code, err } = await run(cmd, ["-http-addr=127.0.0.1:1", "-list"]);
    expect(code).toBe(1);
    expect(err).toStartWith('error: Get "http://127.0.0.1:1/v1/operator/keyring": ');
  });

  test("-h prints the help", async () => {
    const { code, out } = await run(cmd, ["-h"]);
    expect(code).toBe(0);
    expect(out).toContain("-install=<key>");
    expect(out).toContain("-list");
  });
});
