/**
 * The ACL system end to end in one process: the HTTP API over the agent's StateAccess, the server's
 * State service and its replicated state with ACL enforcement (default deny), on a consensus of one.
 */
import { describe, expect, test } from "bun:test";
import { aclCluster as cluster } from "../../test/harness/acl_cluster.ts";

describe("ACLs through the HTTP API", () => {
  test("bootstrap once; a management token makes a policy and a token; that token is enforced on KV; default deny for anonymous", async () => {
    const { call } = await cluster();
    const boot = await call("PUT", "/v1/acl/bootstrap");
    expect(boot.status).toBe(200);
    expect(boot.json).toMatchObject({ Description: "Bootstrap Token (Global Management)", Policies: [{ ID: "00000000-0000-0000-0000-000000000001", Name: "global-management" }], Local: false });
    expect(boot.json.ID).toBe(boot.json.SecretID);
    const again = await call("PUT", "/v1/acl/bootstrap");
    expect([again.status, again.text]).toEqual([403, expect.stringMatching(/^Permission denied: ACL bootstrap no longer allowed \(reset index: \d+\)\n$/)]);
    const root = boot.json.SecretID as string;

    const policy = await call("PUT", "/v1/acl/policy", root, { Name: "kv-app", Rules: `key_prefix "app/" { policy = "write" }` });
    expect(policy.status).toBe(200);
    expect(policy.json).toMatchObject({ Name: "kv-app", Datacenters: null });
    expect((await call("PUT", "/v1/acl/policy", root, { Name: "bad", Rules: `key "x" { policy = "nope" }` })).text).toBe('Invalid key policy: segment "x", policy "nope"\n');
    const token = await call("PUT", "/v1/acl/token", root, { Description: "app", Policies: [{ Name: "kv-app" }] });
    expect(token.status).toBe(200);
    expect(token.json.Policies).toEqual([{ ID: policy.json.ID, Name: "kv-app" }]);
    const app = token.json.SecretID as string;

    expect((await call("PUT", "/v1/kv/app/x", app, "v")).json).toBe(true);
    expect([(await call("PUT", "/v1/kv/other", app, "v")).status, (await call("PUT", "/v1/kv/other", app, "v")).text]).toEqual([403, "Permission denied\n"]);
    expect((await call("PUT", "/v1/kv/other", root, "v")).json).toBe(true);
    const listed = await call("GET", "/v1/kv/?recurse", app);
    expect(listed.json.map((e: { Key: string }) => e.Key)).toEqual(["app/x"]);
    expect((await call("PUT", "/v1/kv/app/y", undefined, "v")).status).toBe(403); // anonymous, default deny
    expect([(await call("GET", "/v1/kv/app/x", "no-such-secret")).status, (await call("GET", "/v1/kv/app/x", "no-such-secret")).text]).toEqual([403, "ACL not found\n"]);

    expect((await call("GET", "/v1/acl/token/self", app)).json).toMatchObject({ Description: "app", SecretID: app });
    expect((await call("GET", "/v1/acl/tokens", app)).status).toBe(403);
    const tokens = await call("GET", "/v1/acl/tokens", root);
    expect(tokens.json.map((t: { Description: string }) => t.Description).sort()).toEqual(["Anonymous Token", "Bootstrap Token (Global Management)", "app"]);
    expect(tokens.json.every((t: Record<string, unknown>) => !("SecretID" in t) && t.Legacy === false)).toBe(true);
  });

  test("token update, clone and delete; policies and roles by name; missing objects as Consul 1.8 answers them", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    const p = (await call("PUT", "/v1/acl/policy", root, { Name: "ops", Rules: `operator = "read"` })).json;
    const role = await call("PUT", "/v1/acl/role", root, { Name: "dev", Policies: [{ ID: p.ID }] });
    expect(role.json).toMatchObject({ Name: "dev", Policies: [{ ID: p.ID, Name: "ops" }] });
    const t = (await call("PUT", "/v1/acl/token", root, { Description: "t", Roles: [{ Name: "dev" }] })).json;
    const updated = await call("PUT", `/v1/acl/token/${t.AccessorID}`, root, { Description: "t2", Roles: [{ Name: "dev" }] });
    expect(updated.json).toMatchObject({ AccessorID: t.AccessorID, SecretID: t.SecretID, Description: "t2", CreateTime: t.CreateTime });
    expect((await call("PUT", `/v1/acl/token/${t.AccessorID}`, root, { AccessorID: "x" })).text).toBe("Token Accessor ID in URL and payload do not match\n");
    const clone = await call("PUT", `/v1/acl/token/${t.AccessorID}/clone`, root, { Description: "copy" });
    expect(clone.json).toMatchObject({ Description: "copy", Roles: [{ Name: "dev" }] });
    expect(clone.json.AccessorID).not.toBe(t.AccessorID);
    expect((await call("DELETE", `/v1/acl/token/${clone.json.AccessorID}`, root)).json).toBe(true);
    expect([(await call("GET", `/v1/acl/token/${clone.json.AccessorID}`, root)).status, (await call("GET", `/v1/acl/token/${clone.json.AccessorID}`, root)).text]).toEqual([403, "ACL not found\n"]);
    expect((await call("GET", "/v1/acl/policy/name/ops", root)).json).toMatchObject({ ID: p.ID, Rules: `operator = "read"` });
    expect((await call("GET", "/v1/acl/policy/name/nope", root)).status).toBe(403);
    expect((await call("GET", "/v1/acl/role/name/dev", root)).json).toMatchObject({ ID: role.json.ID });
    expect([(await call("GET", "/v1/acl/role/name/nope", root)).status, (await call("GET", "/v1/acl/role/name/nope", root)).text]).toEqual([404, ""]);
    expect((await call("GET", "/v1/acl/policies", root)).json.map((x: { Name: string }) => x.Name).sort()).toEqual(["global-management", "ops"]);
    expect((await call("DELETE", "/v1/acl/policy/00000000-0000-0000-0000-000000000001", root)).text).toBe("Deletion of the builtin global-management policy is not permitted\n");
  });

  test("agent endpoints: agent:read for /v1/agent/self, operator for the CA configuration, agent_master locally, unknown tokens 403", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    const p = (await call("PUT", "/v1/acl/policy", root, { Name: "agent-read", Rules: `agent_prefix "" { policy = "read" }` })).json;
    const reader = (await call("PUT", "/v1/acl/token", root, { Policies: [{ ID: p.ID }] })).json.SecretID as string;
    expect((await call("GET", "/v1/agent/self", reader)).status).toBe(200);
    expect((await call("GET", "/v1/agent/self")).status).toBe(403); // anonymous, default deny
    expect((await call("GET", "/v1/agent/self", "am")).status).toBe(200); // agent_master, resolved locally
    expect([(await call("GET", "/v1/agent/self", "nope")).status, (await call("GET", "/v1/agent/self", "nope")).text]).toEqual([403, "ACL not found\n"]);
    expect([(await call("PUT", "/v1/connect/ca/configuration", reader, {})).status, (await call("PUT", "/v1/connect/ca/configuration", reader, {})).text]).toEqual([403, "Permission denied\n"]);
    expect((await call("PUT", "/v1/agent/leave", reader)).status).toBe(403);
  });

  test("with ACLs off every ACL route answers 401 ACL support disabled", async () => {
    const { call } = await cluster(false);
    for (const [method, path] of [["PUT", "/v1/acl/bootstrap"], ["GET", "/v1/acl/tokens"], ["GET", "/v1/acl/policy/name/x"], ["GET", "/v1/acl/replication"]]) {
      expect([(await call(method!, path!)).status, (await call(method!, path!)).text]).toEqual([401, "ACL support disabled\n"]);
    }
  });

  test("intentions under default deny: authorize needs service:write on the target and denies without a match; check denies too", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    const web = (await call("PUT", "/v1/acl/token", root, { ServiceIdentities: [{ ServiceName: "web" }] })).json.SecretID as string;
    const uri = "spiffe://11111111-2222-3333-4444-555555555555.consul/ns/default/dc/dc1/svc/api";
    const authorize = (token: string, Target: string) => call("POST", "/v1/agent/connect/authorize", token, { Target, ClientCertURI: uri });
    expect(await authorize(web, "db")).toMatchObject({ status: 403, text: "Permission denied\n" });
    expect((await authorize(web, "web")).json).toEqual({ Authorized: false, Reason: "Default behavior configured by ACLs" });
    expect((await call("POST", "/v1/connect/intentions", root, { SourceName: "api", DestinationName: "web", Action: "allow" })).status).toBe(200);
    expect((await authorize(web, "web")).json).toMatchObject({ Authorized: true });
    expect((await call("GET", "/v1/connect/intentions/check?source=other&destination=web", root)).json).toEqual({ Allowed: false });
  });
});
