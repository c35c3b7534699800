import { describe, expect, test } from "bun:test";
import { created, managedCli } from "./fixtures.test.ts";

const RULES = `key_prefix "app/" { policy = "write" }`;

describe("causeway acl policy update, and -id prefixes in policy read and delete", () => {
  test("update merges what is given into the current policy; -no-merge replaces it all", async () => {
    const { run } = await managedCli();
    const id = await created(run, "policy", "-name", "kv-app", "-description", "app keys", "-rules", RULES, "-valid-datacenter", "dc1");

    expect(await run(["policy", "update", "-name", "kv-app", "-description", "the app's keys"])).toEqual({
      code: 0, out: `ID:           ${id}\nName:         kv-app\nDescription:  the app's keys\nDatacenters:  dc1\nRules:\n${RULES}\n`, err: "",
    });
    const renamed = await run(["policy", "update", "-id", id.slice(0, 5), "-name", "kv", "-valid-datacenter", "dc1", "-valid-datacenter", "dc2", "-meta"]);
    expect(renamed.out).toMatch(new RegExp(`^ID: {11}${id}\\nName: {9}kv\\nDescription:  the app's keys\\nDatacenters:  dc1, dc2\\nHash: {9}[0-9a-f]{64}\\nCreate Index: \\d+\\nModify Index: \\d+\\nRules:\\n`));
    const rules = await run(["policy", "update", "-id", id, "-rules", `key "x" { policy = "read" }`, "-description", "", "-format", "json"]);
    expect(JSON.parse(rules.out)).toMatchObject({ ID: id, Name: "kv", Description: "", Datacenters: ["dc1", "dc2"], Rules: `key "x" { policy = "read" }` });

    const replaced = await run(["policy", "update", "-id", id, "-no-merge", "-name", "bare"]);
    expect(replaced).toEqual({ code: 0, out: `ID:           ${id}\nName:         bare\nDescription:  \nDatacenters:  \nRules:\n\n`, err: "" });
    expect((await run(["policy", "read", "-id", id.slice(0, 6)])).out).toBe(replaced.out);
  });

  test("read and delete take an ID prefix or global-management; usage errors name the flag", async () => {
    const { run } = await managedCli();
    const fails = (err: string) => ({ code: 1, out: "", err: `${err}\n` });
    const id = await created(run, "policy", "-name", "kv-app");
    expect((await run(["policy", "read", "-id", "global-management"])).out).toStartWith("ID:           00000000-0000-0000-0000-000000000001\nName:         global-management\n");
    expect(await run(["policy", "update"])).toEqual(fails("Must specify either the -id or -name parameters"));
    expect(await run(["policy", "update", "-name", "nope"])).toEqual(fails("Error determining policy ID: No such policy with name nope"));
    expect(await run(["policy", "update", "-id", "zz"])).toEqual(fails("Error determining policy ID: No such policy ID with prefix: zz"));
    expect(await run(["policy", "read", "-id", "zz"])).toEqual(fails("Error determining policy ID: No such policy ID with prefix: zz"));
    expect(await run(["policy", "update", "-id", id, "-rules", "@/nonexistent/rules.hcl"])).toMatchObject({ code: 1, err: expect.stringMatching(/^Error loading rules: .+\n$/) });
    expect(await run(["policy", "update", "-id", id, "-no-merge"])).toMatchObject({ code: 1, err: expect.stringMatching(new RegExp(`^Error updating policy "${id}": Unexpected response code: 400 \\(.+\\)\\n$`)) });
    expect(await run(["policy", "delete", "-id", id.slice(0, 6)])).toEqual({ code: 0, out: `Policy "${id}" deleted successfully\n`, err: "" });
    expect(await run(["policy", "delete", "-name", "kv-app"])).toEqual(fails("Error determining policy ID: No such policy with name kv-app"));
  });
});
