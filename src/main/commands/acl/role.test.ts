import { describe, expect, test } from "bun:test";
import { created, managedCli } from "./fixtures.test.ts";

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

describe("causeway acl role", () => {
  test("create links policies by name and by ID prefix and identities; read by ID prefix or name; list", async () => {
    const { run } = await managedCli();
    const kv = await created(run, "policy", "-name", "kv-app");
    const db = await created(run, "policy", "-name", "db");
    const role = await run(["role", "create", "-name", "app", "-description", "the app", "-policy-name", "kv-app", "-policy-id", db.slice(0, 6), "-service-identity", "web:dc1,dc2", "-node-identity", "n1:dc1", "-meta"]);
    expect(role.code).toBe(0);
    expect(role.out).toMatch(new RegExp(
      `^ID: {11}(${UUID})\\nName: {9}app\\nDescription: {2}the app\\nHash: {9}[0-9a-f]{64}\\nCreate Index: \\d+\\nModify Index: \\d+\\n` +
        `Policies:\\n {3}${kv} - kv-app\\n {3}${db} - db\\nService Identities:\\n {3}web \\(Datacenters: dc1, dc2\\)\\nNode Identities:\\n {3}n1 \\(Datacenter: dc1\\)\\n$`,
    ));
    const id = /^ID: +(\S+)/.exec(role.out)![1]!;
    const pretty = role.out.replace(/Hash:.*\nCreate Index:.*\nModify Index:.*\n/, "");
    expect(await run(["role", "read", "-id", id.slice(0, 5)])).toEqual({ code: 0, out: pretty, err: "" });
    expect((await run(["role", "read", "-name", "app"])).out).toBe(pretty);
    expect(JSON.parse((await run(["role", "read", "-name", "app", "-format", "json"])).out)).toMatchObject({ ID: id, Name: "app", NodeIdentities: [{ NodeName: "n1", Datacenter: "dc1" }] });

    await created(run, "role", "-name", "ops", "-service-identity", "ops");
    const list = await run(["role", "list"]);
    expect(list.out).toContain(
      `app:\n   ID:           ${id}\n   Description:  the app\n   Policies:\n      ${kv} - kv-app\n      ${db} - db\n` +
        "   Service Identities:\n      web (Datacenters: dc1, dc2)\n   Node Identities:\n      n1 (Datacenter: dc1)\n",
    );
    expect(list.out).toMatch(new RegExp(`(^|\\n)ops:\\n {3}ID: {11}${UUID}\\n {3}Description:  \\n {3}Service Identities:\\n {6}ops \\(Datacenters: all\\)\\n`));
    expect(JSON.parse((await run(["role", "list", "-format", "json"])).out).map((r: { Name: string }) => r.Name).sort()).toEqual(["app", "ops"]);
  });

  test("update merges by default and replaces everything with -no-merge; delete by name or ID prefix", async () => {
    const { run } = await managedCli();
    await created(run, "policy", "-name", "kv-app");
    const db = await created(run, "policy", "-name", "db");
    const id = await created(run, "role", "-name", "app", "-description", "the app", "-policy-name", "kv-app", "-service-identity", "web:dc1", "-node-identity", "n1:dc1");

    const merged = await run(["role", "update", "-id", id.slice(0, 4), "-policy-id", db, "-policy-name", "kv-app", "-service-identity", "web:dc2", "-service-identity", "api", "-node-identity", "n1:dc1", "-node-identity", "n1:dc2"]);
    expect(merged.code).toBe(0);
    expect(merged.out).toContain("Name:         app\nDescription:  the app\n");
    expect(merged.out).toMatch(/Policies:\n {3}\S+ - kv-app\n {3}\S+ - db\n/); // kv-app not linked twice
    expect(merged.out).toContain("Service Identities:\n   api (Datacenters: all)\n   web (Datacenters: dc2)\n"); // web:dc1 replaced, not added
    expect(merged.out).toContain("Node Identities:\n   n1 (Datacenter: dc1)\n   n1 (Datacenter: dc2)\n");

    const renamed = await run(["role", "update", "-id", id, "-name", "app2"]);
    expect(renamed.out).toContain("Name:         app2\nDescription:  the app\nPolicies:\n");

    const replaced = await run(["role", "update", "-id", id, "-no-merge", "-name", "app3", "-policy-name", "db"]);
    expect(replaced).toEqual({ code: 0, out: `ID:           ${id}\nName:         app3\nDescription:  \nPolicies:\n   ${db} - db\n`, err: "" });

    expect(await run(["role", "delete", "-name", "app3"])).toEqual({ code: 0, out: `Role "${id}" deleted successfully\n`, err: "" });
    expect(await run(["role", "read", "-id", id])).toEqual({ code: 1, out: "", err: `Role not found with ID "${id}"\n` });
    const other = await created(run, "role", "-name", "other", "-service-identity", "x");
    expect((await run(["role", "delete", "-id", other.slice(0, 8)])).out).toBe(`Role "${other}" deleted successfully\n`);
    expect((await run(["role", "list", "-format", "json"])).out).toBe("[]\n");
  });

  test("usage errors name the flag; unknown or ambiguous IDs and names are refused with exit 1", async () => {
    const { run } = await managedCli();
    const fails = (err: string) => ({ code: 1, out: "", err: `${err}\n` });
    expect(await run(["role", "create", "-policy-name", "x"])).toEqual(fails("Missing require '-name' flag"));
    expect(await run(["role", "create", "-name", "r"])).toEqual(fails("Cannot create a role without specifying -policy-name, -policy-id, -service-identity, or -node-identity at least once"));
    expect(await run(["role", "create", "-name", "r", "-node-identity", "n1"])).toEqual(fails('Malformed -node-identity argument: "n1"'));
    expect(await run(["role", "create", "-name", "r", "-service-identity", "a:b:c"])).toEqual(fails('Malformed -service-identity argument: "a:b:c"'));
    expect(await run(["role", "create", "-name", "r", "-policy-id", "abc"])).toEqual(fails("Error resolving policy ID abc: No such policy ID with prefix: abc"));
    expect(await run(["role", "read"])).toEqual(fails("Must specify either the -id or -name parameters"));
    expect(await run(["role", "read", "-name", "nope"])).toEqual(fails('Role not found with name "nope"'));
    expect(await run(["role", "update", "-name", "x"])).toEqual(fails("Cannot update a role without specifying the -id parameter"));
    expect(await run(["role", "delete"])).toEqual(fails("Must specify the -id or -name parameters"));
    expect(await run(["role", "delete", "-name", "nope"])).toEqual(fails("Error determining role ID: No such role with name nope"));
    expect(await run(["role", "list", "-format", "yaml"])).toEqual(fails("Unknown format: yaml"));
    expect((await run(["role", "create", "-bogus"])).err).toStartWith("flag provided but not defined: -bogus\n");

    // Roles until two IDs share a first character (at most 17): that character is an ambiguous prefix.
    const ids: string[] = [];
    let shared: string | undefined;
    while (!shared) {
      const id = await created(run, "role", "-name", `r${ids.length}`, "-service-identity", "s");
      shared = ids.find((x) => x[0] === id[0])?.[0];
      ids.push(id);
    }
    expect(await run(["role", "read", "-id", shared])).toEqual(fails("Error determining role ID: Partial role ID is not unique"));
  });
});
