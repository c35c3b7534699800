/**
 * The legacy ACL API and rules translation end to end (in-process server with ACLs, default deny).
 */
import { describe, expect, test } from "bun:test";
import { aclCluster as cluster } from "../../test/harness/acl_cluster.ts";

describe("legacy ACL endpoints (Consul 1.8 /v1/acl/create and friends)", () => {
  test("create, info, update, clone, list, destroy; a legacy client token is enforced by its legacy rules", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;

    const created = await call("PUT", "/v1/acl/create", root, { Name: "app", Rules: `key "app/" { policy = "write" }` });
    expect(created.status).toBe(200);
    expect(Object.keys(created.json)).toEqual(["ID"]);
    const app = created.json.ID as string;

    const info = await call("GET", `/v1/acl/info/${app}`);
    expect(info.status).toBe(200);
    expect(info.json).toEqual([{ ID: app, Name: "app", Type: "client", Rules: `key "app/" { policy = "write" }`, CreateIndex: expect.any(Number), ModifyIndex: expect.any(Number) }]);
    expect(Object.keys(info.json[0] as object)).toEqual(["ID", "Name", "Type", "Rules", "CreateIndex", "ModifyIndex"]);

    // Legacy `key "app/"` is a prefix rule.
    expect((await call("PUT", "/v1/kv/app/deep/x", app, "v")).json).toBe(true);
    expect((await call("PUT", "/v1/kv/other", app, "v")).status).toBe(403);
    expect((await call("GET", "/v1/acl/list", app)).text).toBe("Permission denied\n");

    // Visible to the new API as a legacy token, without an exposed Type.
    const self = await call("GET", "/v1/acl/token/self", app);
    expect(self.json).toMatchObject({ SecretID: app, Description: "app", Rules: `key "app/" { policy = "write" }`, CreateTime: "0001-01-01T00:00:00Z" });
    expect("Type" in self.json).toBe(false);
    const stubs = (await call("GET", "/v1/acl/tokens", root)).json as unknown as { AccessorID: string; Legacy: boolean }[];
    expect(stubs.find((t) => t.AccessorID === self.json.AccessorID)?.Legacy).toBe(true);

    const updated = await call("PUT", "/v1/acl/update", root, { ID: app, Name: "app2", Type: "management" });
    expect(updated.json).toEqual({ ID: app });
    expect((await call("GET", `/v1/acl/info/${app}`)).json).toMatchObject([{ Name: "app2", Type: "management", Rules: "" }]);
    expect((await call("PUT", "/v1/kv/other", app, "v")).json).toBe(true); // management now
    expect((await call("GET", "/v1/acl/token/self", app)).json.AccessorID).toBe(self.json.AccessorID);

    const clone = await call("PUT", `/v1/acl/clone/${app}`, root);
    expect(clone.status).toBe(200);
    expect(clone.json.ID).not.toBe(app);
    expect((await call("GET", `/v1/acl/info/${clone.json.ID}`)).json).toMatchObject([{ Name: "app2", Type: "management" }]);

    const list = await call("GET", "/v1/acl/list", root);
    expect(list.status).toBe(200);
    expect((list.json as unknown as { ID: string }[]).map((a) => a.ID).sort()).toEqual([app, clone.json.ID].sort()); // neither anonymous nor the bootstrap token

    expect((await call("PUT", `/v1/acl/destroy/${app}`, root)).json).toBe(true);
    expect((await call("GET", `/v1/acl/info/${app}`)).json).toEqual([]);
    expect((await call("PUT", `/v1/acl/destroy/${app}`, root)).json).toBe(true); // idempotent
    expect((await call("PUT", "/v1/kv/app/x", app, "v")).text).toBe("ACL not found\n");
  });

  test("Consul's refusals, with nothing written", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    const modern = (await call("PUT", "/v1/acl/token", root, { Description: "modern" })).json;
    const before = (await call("GET", "/v1/acl/tokens", root)).json.length;

    const answers = async (method: string, path: string, token: string | undefined, body?: unknown) => {
      const r = await call(method, path, token, body);
      return [r.status, r.text];
    };
    expect(await answers("PUT", "/v1/acl/update", root, { Name: "x" })).toEqual([400, "ACL ID must be set\n"]);
    expect(await answers("PUT", "/v1/acl/create", root, { Type: "root" })).toEqual([400, "Invalid ACL Type\n"]);
    expect(await answers("PUT", "/v1/acl/create", root, { Rules: `key "" { policy = "nope" }` })).toEqual([400, `ACL rule compilation failed: Invalid key policy: segment "", policy "nope"\n`]);
    expect(await answers("PUT", "/v1/acl/create", root, "{not json")).toEqual([400, expect.stringMatching(/^Request decode failed: /)]);
    expect(await answers("PUT", "/v1/acl/update", root, { ID: modern.SecretID, Name: "x" })).toEqual([400, "Cannot use legacy endpoint to modify a non-legacy token\n"]);
    expect(await answers("PUT", "/v1/acl/update", root, { ID: root, Name: "x" })).toEqual([400, "Cannot use legacy endpoint to modify a non-legacy token\n"]);
    expect(await answers("PUT", "/v1/acl/create", root, { ID: "manage" })).toEqual([403, "Permission denied: Cannot modify root ACL\n"]);
    expect(await answers("PUT", "/v1/acl/destroy/anonymous", root)).toEqual([403, "Permission denied: Cannot delete anonymous token\n"]);
    expect(await answers("PUT", `/v1/acl/clone/${modern.SecretID}`, root)).toEqual([403, "Permission denied\n"]);
    expect(await answers("PUT", "/v1/acl/clone/no-such-secret", root)).toEqual([403, "Permission denied\n"]);
    expect(await answers("PUT", "/v1/acl/create", undefined, { Name: "x" })).toEqual([403, "Permission denied\n"]); // anonymous, default deny
    expect(await answers("PUT", "/v1/acl/destroy/x", undefined)).toEqual([403, "Permission denied\n"]);
    expect((await call("GET", "/v1/acl/tokens", root)).json.length).toBe(before);
    expect((await call("GET", `/v1/acl/info/${modern.SecretID}`)).json).toEqual([]);
    expect((await call("GET", "/v1/acl/info/not-a-uuid")).json).toEqual([]);
  });

  test("rules translation: raw HCL text out, acl:read needed, 400 for text that is not HCL", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    const r = await call("POST", "/v1/acl/rules/translate", root, `agent "" {\n\tpolicy = "read"\n}\nservice "web" { policy = "write" }`);
    expect([r.status, r.text]).toEqual([200, `agent_prefix "" {\n  policy = "read"\n}\n\nservice_prefix "web" {\n  policy = "write"\n}`]);
    expect((await call("POST", "/v1/acl/rules/translate", root, `key "x" = {}`)).status).toBe(400);
    expect([(await call("POST", "/v1/acl/rules/translate", undefined, `key "" {}`)).status, (await call("POST", "/v1/acl/rules/translate", undefined, `key "" {}`)).text]).toEqual([403, "Permission denied\n"]);

    const legacy = (await call("PUT", "/v1/acl/create", root, { Name: "l", Rules: `key "a/" { policy = "read" }` })).json.ID as string;
    const accessor = (await call("GET", "/v1/acl/token/self", legacy)).json.AccessorID as string;
    const byToken = await call("GET", `/v1/acl/rules/translate/${accessor}`, root);
    expect([byToken.status, byToken.text]).toEqual([200, `key_prefix "a/" {\n  policy = "read"\n}`]);
    const modern = (await call("PUT", "/v1/acl/token", root, { Description: "m" })).json.AccessorID as string;
    expect([(await call("GET", `/v1/acl/rules/translate/${modern}`, root)).status, (await call("GET", `/v1/acl/rules/translate/${modern}`, root)).text]).toEqual([500, "The specified token does not have any rules set\n"]);
    expect((await call("GET", "/v1/acl/rules/translate/00000000-0000-4000-8000-000000000999", root)).text).toBe("ACL not found\n");
    expect((await call("GET", `/v1/acl/rules/translate/${accessor}`)).status).toBe(403);
  });

  test("with ACLs off the legacy routes answer 401 ACL support disabled", async () => {
    const { call } = await cluster(false);
    for (const [method, path] of [["PUT", "/v1/acl/create"], ["GET", "/v1/acl/list"], ["GET", "/v1/acl/info/x"], ["POST", "/v1/acl/rules/translate"]] as const) {
      const r = await call(method, path);
      expect([r.status, r.text]).toEqual([401, "ACL support disabled\n"]);
    }
  });
});
