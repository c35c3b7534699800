/**
 * Auth methods, binding rules, login and logout end to end in one process (test/harness/acl_cluster.ts):
 * the HTTP API, the server's enforcement (acl:read to read, acl:write to write) and the replicated state.
 */
import { describe, expect, test } from "bun:test";
import { aclCluster as cluster } from "../../test/harness/acl_cluster.ts";

describe("ACL auth methods and binding rules through the HTTP API", () => {
  test("CRUD with a management token; acl:read may read but not write; anonymous may do neither", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    const method = await call("PUT", "/v1/acl/auth-method", root, { Name: "k8s", Type: "kubernetes", Description: "cluster", Config: { Host: "https://k8s:443" } });
    expect(method.status).toBe(200);
    expect(method.json).toMatchObject({ Name: "k8s", Type: "kubernetes", Description: "cluster", Config: { Host: "https://k8s:443" } });
    const rule = await call("PUT", "/v1/acl/binding-rule", root, { AuthMethod: "k8s", BindType: "service", BindName: "${serviceaccount.name}" });
    expect(rule.json).toMatchObject({ AuthMethod: "k8s", BindType: "service", BindName: "${serviceaccount.name}", Selector: "" });

    const p = (await call("PUT", "/v1/acl/policy", root, { Name: "acl-read", Rules: `acl = "read"` })).json;
    const reader = (await call("PUT", "/v1/acl/token", root, { Policies: [{ ID: p.ID }] })).json.SecretID as string;
    expect((await call("GET", "/v1/acl/auth-methods", reader)).json).toEqual([{ Name: "k8s", Type: "kubernetes", Description: "cluster", CreateIndex: method.json.CreateIndex, ModifyIndex: method.json.ModifyIndex }]);
    expect((await call("GET", `/v1/acl/binding-rule/${rule.json.ID}`, reader)).json).toEqual(rule.json);
    expect((await call("GET", "/v1/acl/binding-rules?authmethod=k8s", reader)).json).toEqual([rule.json]);
    const denied = await call("PUT", "/v1/acl/auth-method/k8s", reader, { Description: "mine" });
    expect([denied.status, denied.text]).toEqual([403, "Permission denied\n"]);
    expect((await call("DELETE", `/v1/acl/binding-rule/${rule.json.ID}`, reader)).status).toBe(403);
    expect((await call("GET", "/v1/acl/auth-method/k8s")).status).toBe(403); // anonymous, default deny
    expect((await call("GET", "/v1/acl/binding-rules")).status).toBe(403);

    expect((await call("GET", "/v1/acl/auth-method/nope", root)).status).toBe(404);
    expect((await call("GET", "/v1/acl/binding-rule/00000000-aaaa-4000-8000-000000000009", root)).status).toBe(404);
    expect((await call("PUT", "/v1/acl/auth-method/k8s", root, { Type: "jwt" })).text).toBe("the Type field of an Auth Method is immutable\n");
    expect((await call("PUT", "/v1/acl/binding-rule", root, { AuthMethod: "nope", BindType: "service", BindName: "x" })).text).toBe('cannot find auth method with name "nope"\n');
  });

  test("deleting a method deletes its binding rules and the tokens it made", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    await call("PUT", "/v1/acl/auth-method", root, { Name: "k8s", Type: "kubernetes" });
    await call("PUT", "/v1/acl/binding-rule", root, { AuthMethod: "k8s", BindType: "role", BindName: "ops" });
    const made = await call("PUT", "/v1/acl/token", root, { Description: "from k8s", AuthMethod: "k8s", Local: true });
    expect(made.json).toMatchObject({ AuthMethod: "k8s" });
    expect((await call("GET", "/v1/acl/tokens?authmethod=k8s", root)).json.map((t: { Description: string }) => t.Description)).toEqual(["from k8s"]);
    expect((await call("DELETE", "/v1/acl/auth-method/k8s", root)).json).toBe(true);
    expect((await call("GET", "/v1/acl/binding-rules", root)).json).toEqual([]);
    expect((await call("GET", `/v1/acl/token/${made.json.AccessorID}`, root)).status).toBe(403); // ACL not found
    expect((await call("GET", "/v1/acl/auth-methods", root)).json).toEqual([]);
  });

  test("login is refused naming the method's type; logout keeps Consul's checks", async () => {
    const { call } = await cluster();
    const root = (await call("PUT", "/v1/acl/bootstrap")).json.SecretID as string;
    await call("PUT", "/v1/acl/auth-method", root, { Name: "jwt-m", Type: "jwt" });
    const login = await call("POST", "/v1/acl/login", undefined, { AuthMethod: "jwt-m", BearerToken: "x.y.z" });
    expect([login.status, login.text]).toEqual([500, 'auth method validator for "jwt-m" could not be initialized: login with auth method type "jwt" is not supported by this build\n']);
    expect((await call("POST", "/v1/acl/login", undefined, { AuthMethod: "nope", BearerToken: "x" })).status).toBe(403);
    expect((await call("POST", "/v1/acl/logout", root)).text).toBe("Permission denied\n");
    expect((await call("POST", "/v1/acl/logout", "unknown-secret")).status).toBe(403);
  });

  test("with ACLs off the auth method, binding rule, login and logout routes answer 401", async () => {
    const { call } = await cluster(false);
    for (const [method, path] of [["GET", "/v1/acl/auth-methods"], ["PUT", "/v1/acl/auth-method"], ["GET", "/v1/acl/binding-rules"], ["POST", "/v1/acl/login"], ["POST", "/v1/acl/logout"]]) {
      const r = await call(method!, path!);
      expect([r.status, r.text]).toEqual([401, "ACL support disabled\n"]);
    }
  });
});
