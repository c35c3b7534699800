import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAclCommand } from "../acl.ts";
import { managedCli } from "./fixtures.test.ts";

const fails = (err: string) => ({ code: 1, out: "", err: `${err}\n` });

describe("causeway acl set-agent-token", () => {
  test("sets each of the agent's tokens; TOKEN may be the text, @file or - (stdin)", async () => {
    const { run, tokens } = await managedCli();
    const dir = mkdtempSync(join(tmpdir(), "cw-acl-agent-token-"));
    try {
      writeFileSync(join(dir, "token"), "from-file");
      const cases: [string, string, string, () => string, string][] = [
        ["default", "d-token", "", () => tokens.default(), "d-token"],
        ["agent", `@${join(dir, "token")}`, "", () => tokens.agent(), "from-file"],
        ["master", "-", "from-stdin", () => tokens.agentMaster(), "from-stdin"],
        ["replication", "r-token", "", () => tokens.replication(), "r-token"],
      ];
      for (const [type, arg, stdin, current, want] of cases) {
        expect(await run(["set-agent-token", type, arg], {}, stdin)).toEqual({ code: 0, out: `ACL token "${type}" set successfully\n`, err: "" });
        expect([type, current()]).toEqual([type, want]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("argument errors, an unknown type and the agent's refusal exit 1 with Consul 1.8's messages", async () => {
    const { run } = await managedCli();
    const cases: [string[], unknown][] = [
      [[], fails("Error! Missing TYPE and TOKEN arguments")],
      [["default"], fails("Error! Missing TOKEN argument")],
      [["master"], fails("Error! Missing TOKEN argument")],
      [["recovery"], fails("Error! MISSING TYPE argument")], // 1.11's name for master
      [["default", "a", "b"], fails("Error! Too many arguments: expected 2 got 3")],
      [["bogus", "t"], fails("Unknown token type")],
      [["constructor", "t"], fails("Unknown token type")],
      [["default", "@/nonexistent/token"], { code: 1, out: "", err: expect.stringMatching(/^Error! Failed to read file: .*nonexistent.*\n$/) }],
      [["-bogus", "default", "t"], { code: 1, out: "", err: expect.stringMatching(/^flag provided but not defined: -bogus\nUsage: causeway acl set-agent-token \[options\] TYPE TOKEN\n/) }],
    ];
    for (const [argv, want] of cases) expect([argv, await run(["set-agent-token", ...argv])]).toEqual([argv, want]);
    // Without agent:write (the anonymous token under default deny) both names are refused; the last refusal is shown.
    expect(await run(["set-agent-token", "agent", "x"], { CONSUL_HTTP_TOKEN: "" })).toEqual(fails('Failed to set ACL token "agent": Unexpected response code: 403 (Permission denied)'));
  });

  test("as the 1.8 api client, a 404 for the current name falls back to the legacy one", async () => {
    const tried: string[] = [];
    const fake = (legacyStatus: number) => async (url: string, init: { method: string; body?: Uint8Array }) => {
      const path = new URL(url).pathname;
      tried.push(`${init.method} ${path} ${new TextDecoder().decode(init.body)}`);
      return path.endsWith("/agent_master") ? new Response("Token \"agent_master\" is unknown", { status: 404 }) : new Response("nope", { status: legacyStatus });
    };
    const run = async (legacyStatus: number) => {
      let out = "", err = "";
      const deps = { env: () => ({ CONSUL_HTTP_ADDR: "http://agent" }), fetch: fake(legacyStatus), readStdin: async () => new Uint8Array() };
      const code = await createAclCommand(deps).run(["set-agent-token", "master", "s3cret"], { out: (t) => void (out += t), err: (t) => void (err += t) });
      return { code, out, err };
    };
    expect(await run(200)).toEqual({ code: 0, out: 'ACL token "master" set successfully\n', err: "" });
    expect(tried).toEqual(['PUT /v1/agent/token/agent_master {"Token":"s3cret"}', 'PUT /v1/agent/token/acl_agent_master_token {"Token":"s3cret"}']);
    expect(await run(500)).toEqual(fails('Failed to set ACL token "master": Unexpected response code: 500 (nope)'));
    // Any other answer for the current name is final: no legacy retry.
    tried.length = 0;
    const refusing = { env: () => ({ CONSUL_HTTP_ADDR: "http://agent" }), readStdin: async () => new Uint8Array(),
      fetch: async (url: string) => (tried.push(new URL(url).pathname), new Response("Permission denied", { status: 403 })) };
    expect(await createAclCommand(refusing).run(["set-agent-token", "master", "s3cret"], { out: () => {}, err: () => {} })).toBe(1);
    expect(tried).toEqual(["/v1/agent/token/agent_master"]);
  });
});
