import { describe, expect, test } from "bun:test";
import { created, field, managedCli } from "./fixtures.test.ts";

type Token = { AccessorID: string; SecretID: string; Description: string; Policies?: { Name: string }[]; Roles?: { Name: string }[]; ServiceIdentities?: unknown[]; NodeIdentities?: unknown[] };

describe("causeway acl token update and clone", () => {
  test("update replaces each kind of link unless its -merge-* flag is given; -id may be an accessor prefix", async () => {
    const { run } = await managedCli();
    await created(run, "policy", "-name", "kv-app");
    const db = await created(run, "policy", "-name", "db");
    await created(run, "role", "-name", "ops", "-service-identity", "ops");
    const id = await created(run, "token", "-description", "app", "-policy-name", "kv-app", "-service-identity", "web", "-node-identity", "n1:dc1");
    const read = async () => JSON.parse((await run(["token", "read", "-id", id, "-format", "json"])).out) as Token;
    const secret = (await read()).SecretID;

    const merged = await run(["token", "update", "-id", id.slice(0, 6), "-merge-policies", "-policy-id", db.slice(0, 5), "-policy-name", "kv-app", "-merge-service-identities", "-service-identity", "api:dc2", "-service-identity", "web:dc3", "-merge-node-identities", "-node-identity", "n2:dc1", "-role-name", "ops"]);
    expect(merged.code).toBe(0);
    expect(merged.out).toMatch(new RegExp(
      `^AccessorID: {7}${id}\\nSecretID: {9}${secret}\\nDescription: {6}app\\nLocal: {12}false\\nCreate Time: {6}.*\\n` +
        `Policies:\\n {3}\\S+ - kv-app\\n {3}${db} - db\\nRoles:\\n {3}\\S+ - ops\\nService Identities:\\n {3}api \\(Datacenters: dc2\\)\\n {3}web \\(Datacenters: dc3\\)\\n` +
        "Node Identities:\\n {3}n1 \\(Datacenter: dc1\\)\\n {3}n2 \\(Datacenter: dc1\\)\\n$",
    ));

    // Without -merge-*, what the flags give replaces: no -role-* or identity flags clear those.
    const replaced = await run(["token", "update", "-id", id, "-policy-name", "db", "-description", "renamed", "-format", "json"]);
    expect(replaced.code).toBe(0);
    const t = JSON.parse(replaced.out) as Token;
    expect(t).toMatchObject({ AccessorID: id, SecretID: secret, Description: "renamed", Policies: [{ Name: "db" }] });
    expect([t.Roles, t.ServiceIdentities, t.NodeIdentities]).toEqual([undefined, undefined, undefined]);
    // An empty -description keeps the current one.
    expect(field((await run(["token", "update", "-id", id, "-description", "", "-merge-policies"])).out, "Description")).toBe("renamed");
    expect((await read()).Policies).toMatchObject([{ Name: "db" }]);
    const roles = await run(["token", "update", "-id", id, "-merge-policies", "-merge-roles", "-role-name", "ops", "-meta"]);
    expect(field(roles.out, "Modify Index")).toMatch(/^\d+$/);
    expect((await read()).Roles).toMatchObject([{ Name: "ops" }]);
  });

  test("clone copies the links under a new accessor and secret with the given description", async () => {
    const { run } = await managedCli();
    await created(run, "policy", "-name", "kv-app");
    const id = await created(run, "token", "-description", "app", "-policy-name", "kv-app", "-service-identity", "web:dc1");
    const clone = await run(["token", "clone", "-id", id.slice(0, 7), "-description", "copy"]);
    expect(clone.code).toBe(0);
    const accessor = field(clone.out, "AccessorID")!;
    expect(accessor).toMatch(/^[0-9a-f-]{36}$/);
    expect(accessor).not.toBe(id);
    expect(clone.out).toMatch(/\nDescription: {6}copy\nLocal: {12}false\nCreate Time: .*\nPolicies:\n {3}\S+ - kv-app\nService Identities:\n {3}web \(Datacenters: dc1\)\n$/);
    const tokens = JSON.parse((await run(["token", "list", "-format", "json"])).out) as Token[];
    expect(tokens.map((t) => t.Description).sort()).toEqual(["Anonymous Token", "Bootstrap Token (Global Management)", "app", "copy"]);
    expect(JSON.parse((await run(["token", "clone", "-id", "anonymous", "-format", "json"])).out)).toMatchObject({ Description: "" });
  });

  test("usage errors name the flag; unknown tokens and malformed identities exit 1", async () => {
    const { run } = await managedCli();
    const id = await created(run, "token", "-description", "app");
    const fails = (err: string) => ({ code: 1, out: "", err: `${err}\n` });
    expect(await run(["token", "update", "-description", "x"])).toEqual(fails("Cannot update a token without specifying the -id parameter"));
    expect(await run(["token", "clone"])).toEqual(fails("Cannot update a token without specifying the -id parameter"));
    expect(await run(["token", "update", "-id", "ffffffff-ffff"])).toEqual(fails("Error determining token ID: No such token ID with prefix: ffffffff-ffff"));
    expect(await run(["token", "clone", "-id", "ffffffff-ffff"])).toEqual(fails("Error determining token ID: No such token ID with prefix: ffffffff-ffff"));
    expect(await run(["token", "update", "-id", id, "-node-identity", "n1:dc1:x"])).toEqual(fails('Malformed -node-identity argument: "n1:dc1:x"'));
    expect(await run(["token", "update", "-id", id, "-role-id", "abc"])).toEqual(fails("Error resolving role ID abc: No such role ID with prefix: abc"));
    expect(await run(["token", "update", "-id", id, "-upgrade-legacy"])).toEqual(fails("Can't use -upgrade-legacy on a non-legacy token"));
    const missing = "ffffffff-ffff-ffff-ffff-ffffffffffff";
    expect(await run(["token", "update", "-id", missing])).toEqual(fails("Error when retrieving current token: Unexpected response code: 403 (ACL not found)"));
    expect(await run(["token", "update", "-id", id, "-policy-name", "nope"])).toMatchObject({ code: 1, err: expect.stringMatching(new RegExp(`^Failed to update token ${id}: Unexpected response code: 400 \\(.+\\)\\n$`)) });
    expect(await run(["token", "update", "-id", id, "-merge-roles=maybe"])).toMatchObject({ code: 1, err: expect.stringContaining('invalid boolean value "maybe" for flag -merge-roles') });
  });
});
