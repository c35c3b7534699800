import { describe, expect, test } from "bun:test";
import { goTime } from "./format.ts";
import { aclCli as cli, field } from "./fixtures.test.ts";

describe("causeway acl", () => {
  test("bootstrap, then policy and token commands with the management token from CONSUL_HTTP_TOKEN", async () => {
    const { run } = await cli();
    const boot = await run(["bootstrap"]);
    expect(boot.code).toBe(0);
    expect(boot.out).toMatch(/^AccessorID: {7}[0-9a-f-]{36}\nSecretID: {9}[0-9a-f-]{36}\nDescription: {6}Bootstrap Token \(Global Management\)\nLocal: {12}false\nCreate Time: {6}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC\nPolicies:\n {3}00000000-0000-0000-0000-000000000001 - global-management\n$/);
    expect(await run(["bootstrap"])).toMatchObject({ code: 1, err: expect.stringMatching(/^Failed ACL bootstrapping: Unexpected response code: 403 \(Permission denied: ACL bootstrap no longer allowed \(reset index: \d+\)\)\n$/) });
    const env = { CONSUL_HTTP_TOKEN: field(boot.out, "SecretID")! };

    const policy = await run(["policy", "create", "-name", "kv-app", "-description", "app keys", "-rules", `key_prefix "app/" { policy = "write" }`], env);
    expect(policy.code).toBe(0);
    expect(policy.out).toContain(`Name:         kv-app\nDescription:  app keys\nDatacenters:  \nRules:\nkey_prefix "app/" { policy = "write" }\n`);
    const token = await run(["token", "create", "-description", "app", "-policy-name", "kv-app", "-service-identity", "web:dc1,dc2", "-node-identity", "n1:dc1"], env);
    expect(token.code).toBe(0);
    expect(token.out).toContain("Policies:\n   ");
    expect(token.out).toContain(" - kv-app\nService Identities:\n   web (Datacenters: dc1, dc2)\nNode Identities:\n   n1 (Datacenter: dc1)\n");
    const accessor = field(token.out, "AccessorID")!;

    const read = await run(["token", "read", "-id", accessor, "-meta"], env);
    expect(field(read.out, "Description")).toBe("app");
    expect(field(read.out, "Create Index")).toMatch(/^\d+$/);
    expect((await run(["token", "read", "-self"], { CONSUL_HTTP_TOKEN: field(token.out, "SecretID")! })).out).toContain(`AccessorID:       ${accessor}\n`);
    const list = await run(["token", "list"], env);
    expect(list.out.split("\n\n").length).toBe(3); // anonymous, bootstrap, app
    expect(list.out).toContain("Legacy:           false\n");
    expect(JSON.parse((await run(["policy", "list", "-format", "json"], env)).out).map((p: { Name: string }) => p.Name).sort()).toEqual(["global-management", "kv-app"]);
    expect((await run(["policy", "read", "-name", "kv-app"], env)).out).toContain("Name:         kv-app\n");
    expect(await run(["token", "delete", "-id", accessor], env)).toMatchObject({ code: 0, out: `Token "${accessor}" deleted successfully\n` });
    expect((await run(["policy", "delete", "-name", "kv-app"], env)).out).toMatch(/^Policy "[0-9a-f-]{36}" deleted successfully\n$/);
  });

  test("usage errors name what is missing; without a management token the agent's refusal is shown", async () => {
    const { run } = await cli();
    await run(["bootstrap"]);
    expect(await run(["token", "read"])).toMatchObject({ code: 1, err: "Must specify the -id parameter\n" });
    expect(await run(["policy", "create"])).toMatchObject({ code: 1, err: "Missing required '-name' flag\n" });
    expect(await run(["token", "list", "-format", "yaml"])).toMatchObject({ code: 1, err: "Unknown format: yaml\n" });
    expect(await run(["policy", "list"])).toMatchObject({ code: 1, err: "Failed to retrieve the policy list: Unexpected response code: 403 (Permission denied)\n" });
  });

  test("acl and its groups list Consul 1.8's verbs", async () => {
    const { run } = await cli();
    const verbs = async (...group: string[]) => [...(await run([...group, "-h"])).out.matchAll(/^ {4}(\S+) {4}/gm)].map((m) => m[1]);
    expect(await verbs()).toEqual(["auth-method", "binding-rule", "bootstrap", "policy", "role", "set-agent-token", "token", "translate-rules"]);
    expect(await verbs("role")).toEqual(["create", "delete", "list", "read", "update"]);
    expect(await verbs("token")).toEqual(["clone", "create", "delete", "list", "read", "update"]);
    expect(await verbs("policy")).toEqual(["create", "delete", "list", "read", "update"]);
    expect(await verbs("auth-method")).toEqual(["create", "delete", "list", "read", "update"]);
    expect(await verbs("binding-rule")).toEqual(["create", "delete", "list", "read", "update"]);
    expect(await run(["role"])).toMatchObject({ code: 1, out: "" });
    expect(await run(["auth-method", "--help"])).toMatchObject({ code: 0, out: expect.stringMatching(/^Usage: causeway acl auth-method <subcommand>/) });
    expect(await run(["binding-rule", "create", "--help"])).toMatchObject({ code: 0, out: expect.stringMatching(/^Usage: causeway acl binding-rule create \[options\]\n[^]*\n {2}-bind-name=<name>\n/) });
  });

  test("times print as Go's time.Time String", () => {
    expect(goTime("2026-12-03T12:00:00Z")).toBe("2026-12-03 12:00:00 +0000 UTC");
    expect(goTime("2026-12-03T12:00:00.250Z")).toBe("2026-12-03 12:00:00.25 +0000 UTC");
  });
});
