/**
 * The auth method, binding rule, login and logout routes over a real state store (no ACL enforcement
 * here: that is the servers', tested in src/acl and src/main/acl_auth_api.test.ts).
 */
import { beforeEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import type { ReadQuery } from "../model/index.ts";
import { aclAuthMethodList, aclTokenGetBySecret, createStateStore, isAclAuthRead, runAclAuthRead, WatchSet, type StateCommand, type StateStore } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { mountAcl } from "./acl.ts";
import { mountAclAuthMethods } from "./acl_auth_methods.ts";
import type { HttpApiDeps, StateAccess } from "./deps.ts";

let store: StateStore;
let writes: StateCommand[];
let ids: number;

function api(datacenter = "dc1") {
  let index = 0;
  const state: StateAccess = {
    async read(q: ReadQuery) {
      const ws = new WatchSet();
      let value: unknown;
      if (isAclAuthRead(q)) value = runAclAuthRead(store, ws, q).value;
      else if (q.type === "acl-write-context") value = { policies: [], roles: [], authMethods: aclAuthMethodList(store, ws).value, tokens: [] };
      else if (q.type === "acl-token-self") value = aclTokenGetBySecret(store, ws, q.secret).value;
      else throw new Error(`unexpected read ${q.type}`);
      return { value, meta: { index: 1, knownLeader: true, lastContactMs: 0 } } as never;
    },
    async write(cmd) {
      writes.push(cmd);
      return store.apply(++index, cmd);
    },
  };
  const deps = {
    agent: { datacenter, primaryDatacenter: "dc1" }, state, acl: { enabled: true },
    newId: () => `00000000-aaaa-4000-8000-${String(++ids).padStart(12, "0")}`,
  } as unknown as HttpApiDeps;
  const app = new Hono();
  mountAcl(app, deps);
  mountAclAuthMethods(app, deps);
  return async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await app.request(path, { method, ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}), ...(token ? { headers: { "X-Consul-Token": token } } : {}) });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  };
}

beforeEach(() => {
  store = createStateStore({ clock: simClock() });
  writes = [];
  ids = 0;
});

describe("auth methods over HTTP", () => {
  test("create, read, update (type kept), list stubs without Config, delete; missing → 404", async () => {
    const call = api();
    const created = await call("PUT", "/v1/acl/auth-method", { Name: "k8s", Type: "kubernetes", Description: "d", MaxTokenTTL: "10m", Config: { Host: "https://k8s:443" } });
    expect(created.status).toBe(200);
    expect(created.json).toEqual({ Name: "k8s", Type: "kubernetes", Description: "d", MaxTokenTTL: "10m0s", Config: { Host: "https://k8s:443" }, CreateIndex: 1, ModifyIndex: 1 });
    const updated = await call("PUT", "/v1/acl/auth-method/k8s", { Description: "e", DisplayName: "K" });
    expect(updated.json).toEqual({ Name: "k8s", Type: "kubernetes", DisplayName: "K", Description: "e", Config: null, CreateIndex: 1, ModifyIndex: 2 });
    expect((await call("GET", "/v1/acl/auth-method/K8S")).json).toMatchObject({ Name: "k8s", Description: "e" });
    expect((await call("GET", "/v1/acl/auth-methods")).json).toEqual([{ Name: "k8s", Type: "kubernetes", DisplayName: "K", Description: "e", CreateIndex: 1, ModifyIndex: 2 }]);
    expect((await call("DELETE", "/v1/acl/auth-method/k8s")).json).toBe(true);
    expect(await call("GET", "/v1/acl/auth-method/k8s")).toEqual({ status: 404, text: "", json: undefined });
    expect((await call("DELETE", "/v1/acl/auth-method/k8s")).json).toBe(true); // missing: still true
    expect((await call("GET", "/v1/acl/auth-methods")).json).toEqual([]);
  });

  test("bad input is refused with Consul's text and writes nothing", async () => {
    const call = api();
    await call("PUT", "/v1/acl/auth-method", { Name: "k8s", Type: "kubernetes" });
    writes = [];
    const refused = async (method: string, path: string, body: unknown) => {
      const r = await call(method, path, body);
      return [r.status, r.text];
    };
    expect(await refused("PUT", "/v1/acl/auth-method/k8s", { Type: "jwt" })).toEqual([400, "the Type field of an Auth Method is immutable\n"]);
    expect(await refused("PUT", "/v1/acl/auth-method", { Name: "x", Type: "ldap" })).toEqual([400, "Invalid Auth Method: Type should be one of: [jwt kubernetes]\n"]);
    expect(await refused("PUT", "/v1/acl/auth-method", { Type: "jwt" })).toEqual([400, "Invalid Auth Method: no Name is set\n"]);
    expect(await refused("PUT", "/v1/acl/auth-method/k8s", { Name: "other" })).toEqual([400, "AuthMethod Name in URL and payload do not match\n"]);
    expect(await refused("PUT", "/v1/acl/auth-method", { Name: 5, Type: "jwt" })).toEqual([400, expect.stringMatching(/^AuthMethod decoding failed: /)]);
    expect(await refused("GET", "/v1/acl/auth-method/", undefined)).toEqual([400, "Missing auth method name\n"]);
    expect(writes).toEqual([]);
  });

  test("TokenLocality global only in the primary datacenter", async () => {
    const call = api("dc2");
    expect((await call("PUT", "/v1/acl/auth-method", { Name: "j", Type: "jwt", TokenLocality: "global" })).text).toBe("Invalid Auth Method: TokenLocality 'global' can only be used in the primary datacenter\n");
    expect((await call("PUT", "/v1/acl/auth-method", { Name: "j", Type: "jwt", TokenLocality: "local" })).json).toMatchObject({ TokenLocality: "local" });
  });
});

describe("binding rules over HTTP", () => {
  test("create, read, update, list by method, delete; deleting the method deletes its rules", async () => {
    const call = api();
    await call("PUT", "/v1/acl/auth-method", { Name: "k8s", Type: "kubernetes" });
    await call("PUT", "/v1/acl/auth-method", { Name: "other", Type: "kubernetes" });
    const r = await call("PUT", "/v1/acl/binding-rule", { AuthMethod: "k8s", Selector: "serviceaccount.namespace == default", BindType: "service", BindName: "${serviceaccount.name}" });
    expect(r.json).toEqual({
      ID: "00000000-aaaa-4000-8000-000000000001", Description: "", AuthMethod: "k8s", Selector: "serviceaccount.namespace == default", BindType: "service",
      BindName: "${serviceaccount.name}", CreateIndex: 3, ModifyIndex: 3,
    });
    const id = r.json.ID as string;
    const r2 = (await call("PUT", "/v1/acl/binding-rule", { AuthMethod: "other", BindType: "role", BindName: "ops" })).json.ID as string;
    expect((await call("PUT", `/v1/acl/binding-rule/${id}`, { BindType: "role", BindName: "admins", Description: "x" })).json).toMatchObject({ ID: id, AuthMethod: "k8s", BindType: "role", CreateIndex: 3, ModifyIndex: 5 });
    expect((await call("GET", `/v1/acl/binding-rule/${id}`)).json).toMatchObject({ Description: "x" });
    expect((await call("GET", "/v1/acl/binding-rules?authmethod=k8s")).json.map((x: { ID: string }) => x.ID)).toEqual([id]);
    expect((await call("GET", "/v1/acl/binding-rules")).json.map((x: { ID: string }) => x.ID)).toEqual([id, r2]);
    const del = await call("DELETE", `/v1/acl/binding-rule/${r2}`);
    expect([del.status, del.text]).toEqual([200, "true"]);
    expect((await call("GET", `/v1/acl/binding-rule/${r2}`)).status).toBe(404);
    await call("DELETE", "/v1/acl/auth-method/k8s");
    expect((await call("GET", "/v1/acl/binding-rules")).json).toEqual([]);
  });

  test("bad input is refused with Consul's text and writes nothing", async () => {
    const call = api();
    await call("PUT", "/v1/acl/auth-method", { Name: "k8s", Type: "kubernetes" });
    writes = [];
    const text = async (method: string, path: string, body: unknown) => (await call(method, path, body)).text;
    const ok = { AuthMethod: "k8s", BindType: "service", BindName: "web" };
    expect(await text("PUT", "/v1/acl/binding-rule", { ...ok, AuthMethod: "nope" })).toBe('cannot find auth method with name "nope"\n');
    expect(await text("PUT", "/v1/acl/binding-rule", { ...ok, BindType: "user" })).toBe('Invalid Binding Rule: unknown BindType "user"\n');
    expect(await text("PUT", "/v1/acl/binding-rule", { ...ok, BindName: "" })).toBe("Invalid Binding Rule: no BindName is set\n");
    expect(await text("PUT", "/v1/acl/binding-rule", { ...ok, Selector: "serviceaccount.nope == x" })).toMatch(/^invalid Binding Rule: Selector is invalid: /);
    expect(await text("PUT", "/v1/acl/binding-rule", { ...ok, ID: "00000000-aaaa-4000-8000-000000000009" })).toBe("BindingRule ID in URL and payload do not match\n");
    expect(await text("PUT", "/v1/acl/binding-rule/00000000-aaaa-4000-8000-000000000009", ok)).toBe("cannot find binding rule 00000000-aaaa-4000-8000-000000000009\n");
    expect(await text("DELETE", "/v1/acl/binding-rule/", undefined)).toBe("Missing binding rule ID\n");
    expect(writes).toEqual([]);
  });
});

describe("login and logout", () => {
  test("login: a known method is refused naming its type (500); an unknown one is 403 ACL not found; a bad body 400", async () => {
    const call = api();
    await call("PUT", "/v1/acl/auth-method", { Name: "k8s", Type: "kubernetes", Config: { ServiceAccountJWT: "secret" } });
    writes = [];
    const known = await call("POST", "/v1/acl/login", { AuthMethod: "k8s", BearerToken: "jwt" });
    expect([known.status, known.text]).toEqual([500, 'auth method validator for "k8s" could not be initialized: login with auth method type "kubernetes" is not supported by this build\n']);
    expect(await call("POST", "/v1/acl/login", { AuthMethod: "nope", BearerToken: "jwt" })).toMatchObject({ status: 403, text: "ACL not found\n" });
    expect((await call("POST", "/v1/acl/login", "{")).text).toMatch(/^Failed to decode request body:: /);
    expect(writes).toEqual([]);
  });

  test("logout: no token or an unknown one 403 ACL not found; a token not from a login 403 Permission denied; a login token is not deleted", async () => {
    const call = api();
    await call("PUT", "/v1/acl/auth-method", { Name: "k8s", Type: "kubernetes" });
    store.apply(10, {
      type: "acl-token", op: "set", tokens: [
        { AccessorID: "a1", SecretID: "plain", Description: "", Local: false, CreateTime: "2020-01-01T00:00:00Z", Hash: "h" },
        { AccessorID: "a2", SecretID: "login", Description: "", Local: true, AuthMethod: "k8s", CreateTime: "2020-01-01T00:00:00Z", Hash: "h" },
      ],
    });
    writes = [];
    expect(await call("POST", "/v1/acl/logout")).toMatchObject({ status: 403, text: "ACL not found\n" });
    expect(await call("POST", "/v1/acl/logout", undefined, "unknown")).toMatchObject({ status: 403, text: "ACL not found\n" });
    expect(await call("POST", "/v1/acl/logout", undefined, "plain")).toMatchObject({ status: 403, text: "Permission denied\n" });
    const login = await call("POST", "/v1/acl/logout", undefined, "login");
    expect([login.status, login.text]).toEqual([500, expect.stringContaining('logout is not supported by this build (login through auth method "k8s" is not supported)')]);
    expect(writes).toEqual([]);
  });
});
