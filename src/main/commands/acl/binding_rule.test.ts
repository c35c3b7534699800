import { describe, expect, test } from "bun:test";
import { managedCli, type Run } from "./fixtures.test.ts";

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const fails = (err: string) => ({ code: 1, out: "", err: `${err}\n` });

/** A cluster with the kubernetes method `k8s` and the jwt method `jwt`. */
async function withMethods(): Promise<Run> {
  const { run } = await managedCli();
  const k8s = ["-kubernetes-host", "https://k8s:6443", "-kubernetes-ca-cert", "CA", "-kubernetes-service-account-jwt", "JWT"];
  expect((await run(["auth-method", "create", "-type", "kubernetes", "-name", "k8s", ...k8s])).code).toBe(0);
  expect((await run(["auth-method", "create", "-type", "jwt", "-name", "jwt", "-config", '{"ClaimMappings":{"team":"team"}}'])).code).toBe(0);
  return run;
}

/** `binding-rule create` expecting success; the new rule's ID. */
async function rule(run: Run, ...args: string[]): Promise<string> {
  const r = await run(["binding-rule", "create", "-format", "json", ...args]);
  if (r.code !== 0) throw new Error(`binding-rule create failed: ${r.err}`);
  return (JSON.parse(r.out) as { ID: string }).ID;
}

describe("causeway acl binding-rule", () => {
  test("create (bind type service by default), read by ID prefix, list all or one method's, pretty and json", async () => {
    const run = await withMethods();
    const created = await run(["binding-rule", "create", "-method", "k8s", "-description", "web pods", "-bind-name", "${serviceaccount.name}", "-selector", "serviceaccount.namespace==default"]);
    expect(created.code).toBe(0);
    // Consul's formatter, then the blank line its UI adds.
    expect(created.out).toMatch(new RegExp(
      `^ID: {11}${UUID}\\nAuthMethod: {3}k8s\\nDescription: {2}web pods\\nBindType: {5}service\\nBindName: {5}\\$\\{serviceaccount.name\\}\\nSelector: {5}serviceaccount.namespace==default\\n\\n$`,
    ));
    const id = /^ID: +(\S+)/.exec(created.out)![1]!;
    expect(await run(["binding-rule", "read", "-id", id.slice(0, 5)])).toEqual(created);
    const meta = await run(["binding-rule", "read", "-id", id, "-meta"]);
    expect(meta.out).toMatch(/\nSelector: {5}serviceaccount.namespace==default\nCreate Index: \d+\nModify Index: \d+\n\n$/);
    expect(JSON.parse((await run(["binding-rule", "read", "-id", id, "-format", "json"])).out)).toEqual({
      ID: id, Description: "web pods", AuthMethod: "k8s", Selector: "serviceaccount.namespace==default", BindType: "service", BindName: "${serviceaccount.name}",
      CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number),
    });

    const other = await rule(run, "-method", "jwt", "-bind-type", "role", "-bind-name", "team-${value.team}");
    const list = await run(["binding-rule", "list"]);
    expect(list.out).toContain(`${id}:\n   AuthMethod:   k8s\n   Description:  web pods\n   BindType:     service\n   BindName:     \${serviceaccount.name}\n   Selector:     serviceaccount.namespace==default\n`);
    expect(list.out).toContain(`${other}:\n   AuthMethod:   jwt\n   Description:  \n   BindType:     role\n   BindName:     team-\${value.team}\n   Selector:     \n`);
    expect(list.out).toEndWith("\n\n");
    expect((await run(["binding-rule", "list", "-meta"])).out).toMatch(/ {3}Selector: {5}.*\n {3}Create Index: \d+\n {3}Modify Index: \d+\n/);
    expect(JSON.parse((await run(["binding-rule", "list", "-method", "jwt", "-format", "json"])).out)).toEqual([
      { ID: other, Description: "", AuthMethod: "jwt", Selector: "", BindType: "role", BindName: "team-${value.team}", CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) },
    ]);
    expect((await run(["binding-rule", "list", "-method", "k8s"])).out).toStartWith(`${id}:\n`);
    expect(await run(["binding-rule", "list", "-method", "nope"])).toEqual({ code: 0, out: "", err: "" });
  });

  test("update merges by default (and, as in Consul 1.8, -bind-type defaults to service); -no-merge replaces; delete by prefix", async () => {
    const run = await withMethods();
    const id = await rule(run, "-method", "k8s", "-description", "admins", "-bind-type", "role", "-bind-name", "admins", "-selector", "serviceaccount.name==admin");
    const described = await run(["binding-rule", "update", "-id", id.slice(0, 6), "-description", "the admins", "-bind-type", "role"]);
    expect(described).toEqual({
      code: 0, err: "",
      out: `ID:           ${id}\nAuthMethod:   k8s\nDescription:  the admins\nBindType:     role\nBindName:     admins\nSelector:     serviceaccount.name==admin\n\n`,
    });
    // No -bind-type: its default "service" replaces "role".
    const retyped = JSON.parse((await run(["binding-rule", "update", "-id", id, "-bind-name", "ops", "-format", "json"])).out);
    expect(retyped).toMatchObject({ Description: "the admins", BindType: "service", BindName: "ops", Selector: "serviceaccount.name==admin" });
    // An empty -selector is a change (it matches everything); no -selector keeps it.
    expect(JSON.parse((await run(["binding-rule", "update", "-id", id, "-selector", "", "-format", "json"])).out).Selector).toBe("");

    const replaced = await run(["binding-rule", "update", "-id", id, "-no-merge", "-bind-type", "role", "-bind-name", "viewers", "-meta"]);
    expect(replaced.out).toMatch(new RegExp(`^ID: {11}${id}\\nAuthMethod: {3}k8s\\nDescription:  \\nBindType: {5}role\\nBindName: {5}viewers\\nSelector: {5}\\nCreate Index: \\d+\\nModify Index: \\d+\\n\\n$`));

    expect(await run(["binding-rule", "delete", "-id", id.slice(0, 8)])).toEqual({ code: 0, out: `Binding rule "${id}" deleted successfully\n`, err: "" });
    expect(await run(["binding-rule", "read", "-id", id])).toEqual(fails(`Binding rule not found with ID "${id}"`));
    expect(await run(["binding-rule", "list", "-format", "json"])).toEqual({ code: 0, out: "[]\n", err: "" });
  });

  test("each usage error, unknown or ambiguous ID and server refusal exits 1 with Consul's message", async () => {
    const run = await withMethods();
    const id = await rule(run, "-method", "k8s", "-bind-name", "web");
    const missing = "ffffffff-ffff-ffff-ffff-ffffffffffff";
    const withHelp = (err: string, verb: string) => ({ code: 1, out: "", err: expect.stringMatching(new RegExp(`^${err}\\nUsage: causeway acl binding-rule ${verb} `)) });
    const cases: [string, string[], unknown][] = [
      ["create without -method", ["create", "-bind-name", "x"], withHelp("Missing required '-method' flag", "create")],
      ["create with an empty -bind-type", ["create", "-method", "k8s", "-bind-type", "", "-bind-name", "x"], withHelp("Missing required '-bind-type' flag", "create")],
      ["create without -bind-name", ["create", "-method", "k8s"], withHelp("Missing required '-bind-name' flag", "create")],
      ["create with an unknown -format", ["create", "-method", "k8s", "-bind-name", "x", "-format", "yaml"], fails("Unknown format: yaml")],
      ["create for an unknown method", ["create", "-method", "nope", "-bind-name", "x"], fails('Failed to create new binding rule: Unexpected response code: 400 (cannot find auth method with name "nope")')],
      ["create with a bad selector", ["create", "-method", "k8s", "-bind-name", "x", "-selector", "foo"], { code: 1, out: "", err: expect.stringMatching(/^Failed to create new binding rule: Unexpected response code: 400 \(invalid Binding Rule: Selector is invalid: .+\)\n$/) }],
      ["create with an unknown variable", ["create", "-method", "k8s", "-bind-name", "${nope}"], fails("Failed to create new binding rule: Unexpected response code: 400 (Invalid Binding Rule: invalid BindName: unknown variable accessed: nope)")],
      ["read without -id", ["read"], fails("Must specify the -id parameter.")],
      ["read of an unknown prefix", ["read", "-id", "zz"], fails("Error determining binding rule ID: No such rule ID with prefix: zz")],
      ["read of an unknown ID", ["read", "-id", missing], fails(`Binding rule not found with ID "${missing}"`)],
      ["update without -id", ["update", "-description", "x"], fails("Cannot update a binding rule without specifying the -id parameter")],
      ["update of an unknown prefix", ["update", "-id", "zz"], fails("Error determining binding rule ID: No such rule ID with prefix: zz")],
      ["update of an unknown ID", ["update", "-id", missing], fails(`Binding rule not found with ID "${missing}"`)],
      ["update -no-merge with an empty -bind-type", ["update", "-id", id, "-no-merge", "-bind-type", "", "-bind-name", "x"], withHelp("Missing required '-bind-type' flag", "update")],
      ["update -no-merge without -bind-name", ["update", "-id", id, "-no-merge"], withHelp("Missing required '-bind-name' flag", "update")],
      ["update the servers refuse", ["update", "-id", id, "-bind-name", "Not Valid"], fails(`Error updating binding rule "${id}": Unexpected response code: 400 (Invalid Binding Rule: invalid BindName)`)],
      ["delete without -id", ["delete"], fails("Must specify the -id parameter")],
      ["delete of an unknown prefix", ["delete", "-id", "zz"], fails("Error determining binding rule ID: No such rule ID with prefix: zz")],
      ["list with an unknown -format", ["list", "-format", "yaml"], fails("Unknown format: yaml")],
      ["list without a token", ["list", "-token", "anonymous"], fails("Failed to retrieve the binding rule list: Unexpected response code: 403 (Permission denied)")],
    ];
    for (const [name, argv, want] of cases) expect([name, await run(["binding-rule", ...argv])]).toEqual([name, want]);

    // Rules until two IDs share a first character (at most 17): that character is an ambiguous prefix.
    const ids = [id];
    let shared: string | undefined;
    while (!shared) {
      const next = await rule(run, "-method", "k8s", "-bind-name", `web${ids.length}`);
      shared = ids.find((x) => x[0] === next[0])?.[0];
      ids.push(next);
    }
    expect(await run(["binding-rule", "read", "-id", shared])).toEqual(fails("Error determining binding rule ID: Partial rule ID is not unique"));
  });
});
