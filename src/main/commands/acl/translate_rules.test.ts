import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aclCli, created, managedCli } from "./fixtures.test.ts";

const LEGACY = `key "" { policy = "read" }\nservice "web" { policy = "write" }\n`;
const TRANSLATED = `key_prefix "" {\n  policy = "read"\n}\n\nservice_prefix "web" {\n  policy = "write"\n}\n`;
const fails = (err: string) => ({ code: 1, out: "", err: `${err}\n` });

describe("causeway acl translate-rules", () => {
  test("translates the argument, a file or stdin here, without the agent", async () => {
    const { run } = await aclCli();
    const dir = mkdtempSync(join(tmpdir(), "cw-acl-translate-"));
    try {
      writeFileSync(join(dir, "rules.hcl"), LEGACY);
      // No agent at that address: the plain forms never ask it.
      const env = { CONSUL_HTTP_ADDR: "ftp://nowhere" };
      for (const [arg, stdin] of [[LEGACY, ""], [`@${join(dir, "rules.hcl")}`, ""], ["-", LEGACY]] as const) {
        expect(await run(["translate-rules", arg], env, stdin)).toEqual({ code: 0, out: TRANSLATED, err: "" });
      }
      expect(await run(["translate-rules", "-token-accessor", "abc"], env)).toEqual(fails('Error connecting to the agent: unsupported scheme in HTTP address "ftp://nowhere" (want http or https)'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("-token-accessor and -token-secret translate a legacy token's rules", async () => {
    const { run, call, secret: root } = await managedCli();
    const secret = (await call("PUT", "/v1/acl/create", root, { Name: "legacy", Rules: LEGACY })).json.ID as string;
    const accessor = (await call("GET", "/v1/acl/token/self", secret)).json.AccessorID as string;
    expect(await run(["translate-rules", "-token-accessor", accessor.slice(0, 8)])).toEqual({ code: 0, out: TRANSLATED, err: "" });
    expect(await run(["translate-rules", "-token-secret", secret])).toEqual({ code: 0, out: TRANSLATED, err: "" });
    // An ID from stdin with its newline (echo without -n).
    expect(await run(["translate-rules", "-token-secret", "-"], {}, `${secret}\n`)).toEqual({ code: 0, out: TRANSLATED, err: "" });

    const modern = await created(run, "token", "-description", "new");
    const unknown = "ffffffff-ffff-ffff-ffff-ffffffffffff";
    const cases: [string[], unknown][] = [
      [["-token-accessor", modern], fails("Token is not a legacy token with rules")],
      [["-token-accessor", "zz"], fails("No such token ID with prefix: zz")],
      [["-token-accessor", unknown], fails("Error reading token: Unexpected response code: 403 (ACL not found)")],
      [["-token-secret", unknown], fails("Error reading token: Unexpected response code: 403 (ACL not found)")],
    ];
    for (const [argv, want] of cases) expect([argv, await run(["translate-rules", ...argv])]).toEqual([argv, want]);
  });

  test("argument errors and rules that do not parse exit 1 with Consul 1.8's messages", async () => {
    const { run } = await aclCli();
    const cases: [string[], unknown][] = [
      [["-token-accessor", "-token-secret", "x"], fails("Error - cannot specify both -token-secret and -token-accessor")],
      [[], fails("Error! Missing TRANSLATE argument")],
      [["a", "b"], fails("Error! Too many arguments: expected 1 got 2")],
      [["@/nonexistent/rules.hcl"], { code: 1, out: "", err: expect.stringMatching(/^Error! Failed to read file: .*nonexistent.*\n$/) }],
      [[`key "x" {`], fails(`Error translating rules: Failed to parse rules: At 1:10: expected "}" to close "{" at 1:9, found end of input`)],
    ];
    for (const [argv, want] of cases) expect([argv, await run(["translate-rules", ...argv])]).toEqual([argv, want]);
  });
});
