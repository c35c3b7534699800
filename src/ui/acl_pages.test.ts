import { describe, expect, test } from "bun:test";
import { GLOBAL_MANAGEMENT_POLICY_ID } from "../model/index.ts";
import { systemClock } from "../platform/index.ts";
import { fakeApi, type FakeRoute } from "../../test/harness/ui_api.ts";
import type { PolicyView, RoleView, TokenView } from "./acl_access.ts";
import { createUi, TOKEN_COOKIE } from "./app.tsx";

const MGMT = "mgmt-secret";
const RO = "ro-secret";
const P_RO = "11111111-1111-4111-8111-111111111111";
const R_OPS = "44444444-4444-4444-8444-444444444444";
const A_MGMT = "aaaaaaaa-0000-4000-8000-000000000001";
const A_RO = "aaaaaaaa-0000-4000-8000-000000000002";

const tokenView = (o: Partial<TokenView>): TokenView => ({ AccessorID: "", Description: "", Local: false, CreateIndex: 1, ModifyIndex: 1, ...o });
const TOKENS: Record<string, TokenView> = {
  [MGMT]: tokenView({ AccessorID: A_MGMT, SecretID: MGMT, Description: "Master Token", Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "global-management" }] }),
  [RO]: tokenView({ AccessorID: A_RO, SecretID: RO, Description: "reader", Policies: [{ ID: P_RO, Name: "acl-read" }], Local: true }),
};
const POLICIES: PolicyView[] = [
  { ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "global-management", Description: "Builtin Policy that grants unlimited access", Rules: 'acl = "write"', Datacenters: null, CreateIndex: 2, ModifyIndex: 2 },
  { ID: P_RO, Name: "acl-read", Description: "reads ACLs", Rules: 'acl = "read"', Datacenters: ["dc1"], CreateIndex: 3, ModifyIndex: 7 },
];
const ROLES: RoleView[] = [{ ID: R_OPS, Name: "ops", Description: "operators", Policies: [{ ID: P_RO, Name: "acl-read" }], CreateIndex: 4, ModifyIndex: 4 }];

const stub = ({ SecretID: _s, ...t }: TokenView) => t;
const denied = { status: 403, text: "Permission denied" };
/** A write the fake API lets only the management token make. */
const write = (answer: unknown): FakeRoute => (_u, call) => (call.token === MGMT ? { json: answer } : denied);

function ui(over: Record<string, FakeRoute> = {}, contentPath = "/ui/") {
  const fake = fakeApi({
    "GET /v1/acl/token/self": (_u, call) => (call.token && TOKENS[call.token] ? { json: TOKENS[call.token] } : { status: 403, text: "ACL not found" }),
    "GET /v1/acl/tokens": () => ({ json: Object.values(TOKENS).map(stub) }),
    "GET /v1/acl/token/*": (u, call) => {
      const t = Object.values(TOKENS).find((x) => u.pathname.endsWith(x.AccessorID));
      return t ? { json: call.token === MGMT ? t : { ...t, SecretID: "<hidden>" } } : { status: 403, text: "ACL not found" };
    },
    "GET /v1/acl/policies": () => ({ json: POLICIES.map(({ Rules: _r, ...p }) => p) }),
    "GET /v1/acl/policy/*": (u) => {
      const p = POLICIES.find((x) => u.pathname.endsWith(x.ID));
      return p ? { json: p } : { status: 403, text: "ACL not found" };
    },
    "GET /v1/acl/roles": () => ({ json: ROLES }),
    "GET /v1/acl/role/*": (u) => (u.pathname.endsWith(R_OPS) ? { json: ROLES[0] } : { status: 404, text: "" }),
    "PUT /v1/acl/policy": write({ ...POLICIES[1], ID: "new-policy-id" }),
    "PUT /v1/acl/policy/*": write(POLICIES[1]),
    "PUT /v1/acl/role": write({ ...ROLES[0], ID: "new-role-id" }),
    "PUT /v1/acl/token": write({ ...TOKENS[RO], AccessorID: "new-token-id" }),
    "DELETE /v1/acl/policy/*": write(true),
    ...over,
  });
  const app = createUi({ datacenter: "dc1", contentPath, datacenters: () => ["dc1", "dc2"], api: fake.api, clock: systemClock() });
  const writes = () => fake.calls.filter((c) => c.method !== "GET");
  return { app, calls: fake.calls, writes };
}

const as = (secret: string | undefined, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(secret ? { Cookie: `${TOKEN_COOKIE}=${secret}` } : {}), ...(init.headers ?? {}) } });
const post = (secret: string | undefined, fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) body.append(k, x);
  return as(secret, { method: "POST", body, headers: { "Content-Type": "application/x-www-form-urlencoded" } });
};
const main = (html: string) => /<main[^>]*>([\s\S]*)<\/main>/.exec(html)?.[1] ?? "";

describe("ACL login and logout", () => {

  test("without a token every ACL page asks to log in and comes back to itself; a write without one is refused (403)", async () => {
    const { app, writes } = ui();
    for (const page of ["tokens", "policies", "roles", `policies/${P_RO}`]) {
      const res = await app.request(`/ui/dc1/acls/${page}`);
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain("Log in with an ACL token to see this page.");
      expect(html).toContain('<form method="post" action="/ui/dc1/acls/login"');
      expect(html).toContain(`<input type="hidden" name="next" value="/ui/dc1/acls/${page}"/>`);
      expect(html).toContain('<label for="acl-login-token">Token SecretID</label>');
    }
    expect((await app.request("/ui/dc1/acls")).headers.get("Location")).toBe("/ui/dc1/acls/tokens");
    const write = await app.request("/ui/dc1/acls/policies/create", post(undefined, { name: "p", rules: "" }));
    expect(write.status).toBe(403);
    expect(await write.text()).toContain("Log in with an ACL token to see this page.");
    expect(writes()).toEqual([]);
  });

  test("an accepted token is kept in an HttpOnly, SameSite=Strict cookie and the reader goes back (303)", async () => {
    const { app, calls } = ui();
    const res = await app.request("/ui/dc1/acls/login", post(undefined, { token: ` ${MGMT} `, next: "/ui/dc1/acls/roles" }));
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/ui/dc1/acls/roles");
    expect(res.headers.get("Set-Cookie")).toBe(`${TOKEN_COOKIE}=${MGMT}; Path=/ui/; HttpOnly; SameSite=Strict`);
    expect(calls.some((c) => c.path === "/v1/acl/token/self" && c.token === MGMT)).toBe(true);
    const offsite = await app.request("/ui/dc1/acls/login", post(undefined, { token: MGMT, next: "https://elsewhere.example/" }));
    expect(offsite.headers.get("Location")).toBe("/ui/dc1/acls/tokens");
  });

  test("a refused token is said in words (403) and sets nothing; an empty one names the field (400)", async () => {
    const { app } = ui();
    const res = await app.request("/ui/dc1/acls/login", post(undefined, { token: "wrong" }));
    expect(res.status).toBe(403);
    expect(res.headers.get("Set-Cookie")).toBeNull();
    expect(await res.text()).toContain("This token was not accepted: the agent answered &quot;ACL not found&quot;. Nothing was saved.");
    const empty = await app.request("/ui/dc1/acls/login", post(undefined, { token: "  " }));
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("Token SecretID: paste the SecretID of a token.");
  });

  test("logout clears the cookie; a saved token that is no longer accepted asks for a new login (403)", async () => {
    const { app } = ui();
    const out = await app.request("/ui/dc1/acls/logout", post(MGMT, {}));
    expect(out.status).toBe(303);
    expect(out.headers.get("Location")).toBe("/ui/dc1/acls/login?loggedout=1");
    expect(out.headers.get("Set-Cookie")).toMatch(new RegExp(`^${TOKEN_COOKIE}=; Max-Age=0; Path=/ui/`));
    expect(await (await app.request("/ui/dc1/acls/login?loggedout=1")).text()).toContain("You are logged out");
    const stale = await app.request("/ui/dc1/acls/tokens", as("deleted-secret"));
    expect(stale.status).toBe(403);
    expect(await stale.text()).toContain("Your saved token was not accepted");
  });

  test("with ACLs off every ACL page explains how to turn them on (200)", async () => {
    const off: FakeRoute = () => ({ status: 401, text: "ACL support disabled" });
    const { app } = ui(Object.fromEntries(["token/self", "tokens", "policies", "roles", "token/*", "policy/*", "role/*"].map((p) => [`GET /v1/acl/${p}`, off])));
    for (const page of ["tokens", "policies", "roles", "login", "tokens/create", `roles/${R_OPS}`]) {
      const res = await app.request(`/ui/dc1/acls/${page}`, as(MGMT));
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain("<title>Access controls are off – dc1 – Causeway</title>");
      expect(html).toContain("ACLs are disabled in dc1");
      expect(html).toContain("acl {\n  enabled = true");
    }
  });
});

describe("ACL tokens, policies and roles", () => {
  test("tokens: AccessorID, description, policies, roles and scope; never a SecretID; write links for a management token", async () => {
    const { app } = ui();
    const html = await (await app.request("/ui/dc1/acls/tokens", as(MGMT))).text();
    expect(html).toContain("<caption>Tokens in dc1: 2 of 2</caption>");
    expect([...html.matchAll(/<tr data-token="([^"]+)">/g)].map((m) => m[1])).toEqual([A_MGMT, A_RO]);
    expect(html).toMatch(new RegExp(`<tr data-token="${A_RO}">.*<td>reader</td><td><a href="/ui/dc1/acls/policies/${P_RO}">acl-read</a></td><td>none</td><td>local</td>`));
    expect(html).toContain(`<code>${A_MGMT}</code></a> (your token)`);
    expect(html).not.toContain(MGMT.replace("-secret", ""));
    expect(html).toContain("Using token ");
    expect(html).toContain("may change ACLs");
    expect(html).toContain('href="/ui/dc1/acls/tokens/create">Create a token</a>');
    expect(html).toContain('<th scope="col">Accessor ID</th>');
  });

  test("a token's page shows its SecretID behind a show control; a reader the API hides it from is told so", async () => {
    const { app } = ui();
    const mgmt = await (await app.request(`/ui/dc1/acls/tokens/${A_RO}`, as(MGMT))).text();
    expect(mgmt).toContain(`<details class="acl-secret"><summary>Show the Secret ID</summary><code id="acl-secret-id">${RO}</code></details>`);
    expect(mgmt).toContain('<h2 id="acl-edit-token">Edit this token</h2>');
    expect(mgmt).toContain(`action="/ui/dc1/acls/tokens/${A_RO}/delete"`);
    const ro = await (await app.request(`/ui/dc1/acls/tokens/${A_MGMT}`, as(RO))).text();
    expect(ro).toContain("hidden: only a token that may write ACLs sees it");
    expect(ro).not.toContain("Edit this token");
  });

  test("a read-only token sees no write buttons or forms, and a forged write gets the API's 403 in words", async () => {
    const { app, writes } = ui();
    for (const page of ["tokens", "policies", "roles", `policies/${P_RO}`, `roles/${R_OPS}`, `tokens/${A_RO}`]) {
      const html = main(await (await app.request(`/ui/dc1/acls/${page}`, as(RO))).text());
      expect(html).toContain("may not change ACLs (read only)");
      expect(html).not.toMatch(/Create a|<textarea|type="checkbox"|\/delete"/);
      expect([...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1])).toEqual(["/ui/dc1/acls/logout"]);
    }
    expect((await app.request("/ui/dc1/acls/policies/create", as(RO))).status).toBe(403);
    const forged = await app.request("/ui/dc1/acls/policies/create", post(RO, { name: "evil", rules: 'acl = "write"' }));
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("Your token may not do this: the agent answered &quot;Permission denied&quot;.");
    expect(writes()).toEqual([{ method: "PUT", path: "/v1/acl/policy", token: RO, body: JSON.stringify({ Name: "evil", Description: "", Rules: 'acl = "write"', Datacenters: [] }) }]);
  });

  test("policies: list, create (303 to the new policy), bad input names the field (400) and writes nothing", async () => {
    const { app, writes } = ui();
    const list = await (await app.request("/ui/dc1/acls/policies", as(MGMT))).text();
    expect(list).toMatch(/<tr data-policy="acl-read">.*<td>reads ACLs<\/td><td>dc1<\/td><\/tr>/);
    expect(list).toMatch(/<tr data-policy="global-management">.*<td>all<\/td><\/tr>/);
    const bad = await app.request("/ui/dc1/acls/policies/create", post(MGMT, { name: "bad name", rules: "" }));
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Name: use 1 to 128 letters");
    const badRules = await app.request("/ui/dc1/acls/policies/create", post(MGMT, { name: "p", rules: "acl = " }));
    expect(badRules.status).toBe(400);
    expect(await badRules.text()).toMatch(/<p role="alert" class="acl-error" id="acl-form-error">Rules: /);
    expect(writes()).toEqual([]);
    const ok = await app.request("/ui/dc1/acls/policies/create", post(MGMT, { name: "web", description: "web team", rules: 'service "web" { policy = "write" }', datacenters: ["dc2"] }));
    expect(ok.status).toBe(303);
    expect(ok.headers.get("Location")).toBe("/ui/dc1/acls/policies/new-policy-id?saved=1");
    expect(JSON.parse(writes()[0]!.body!)).toEqual({ Name: "web", Description: "web team", Rules: 'service "web" { policy = "write" }', Datacenters: ["dc2"] });
  });

  test("a policy's editor: its rules, datacenters, the tokens using it; an edit of a changed policy is refused (409)", async () => {
    const { app, writes } = ui({ "GET /v1/acl/tokens": (u) => ({ json: u.searchParams.get("policy") === P_RO ? [stub(TOKENS[RO]!)] : [] }) });
    const html = await (await app.request(`/ui/dc1/acls/policies/${P_RO}`, as(MGMT))).text();
    expect(html).toContain("<title>Policy acl-read – dc1 – Causeway</title>");
    expect(html).toContain('<textarea id="policy-rules" name="rules" rows="12" spellcheck="false">\nacl = &quot;read&quot;</textarea>');
    expect(html).toContain('<input type="checkbox" name="datacenters" value="dc1" checked=""/> dc1');
    expect(html).toContain('<input type="hidden" name="modify_index" value="7"/>');
    expect(html).toContain(`<caption>Tokens using acl-read: 1</caption>`);
    const stale = await app.request(`/ui/dc1/acls/policies/${P_RO}`, post(MGMT, { name: "acl-read", rules: 'acl = "write"', modify_index: "5" }));
    expect(stale.status).toBe(409);
    expect(await stale.text()).toContain("This policy changed since you opened it (index 5→7)");
    expect(writes()).toEqual([]);
    const saved = await app.request(`/ui/dc1/acls/policies/${P_RO}`, post(MGMT, { name: "acl-read", rules: 'acl = "write"', modify_index: "7" }));
    expect(saved.status).toBe(303);
    expect(writes()[0]).toMatchObject({ method: "PUT", path: `/v1/acl/policy/${P_RO}` });
    const unconfirmed = await app.request(`/ui/dc1/acls/policies/${P_RO}/delete`, post(MGMT, {}));
    expect(unconfirmed.status).toBe(400);
    expect(await unconfirmed.text()).toContain("Confirm: tick the box");
    const deleted = await app.request(`/ui/dc1/acls/policies/${P_RO}/delete`, post(MGMT, { confirm: "yes" }));
    expect(deleted.headers.get("Location")).toBe("/ui/dc1/acls/policies?deleted=acl-read");
  });

  test("roles: list with policies; create posts the chosen policies by ID; a missing role is 404 in words", async () => {
    const { app, writes } = ui();
    const list = await (await app.request("/ui/dc1/acls/roles", as(MGMT))).text();
    expect(list).toMatch(new RegExp(`<tr data-role="ops">.*<td>operators</td><td><a href="/ui/dc1/acls/policies/${P_RO}">acl-read</a></td><td>none</td>`));
    const form = await (await app.request("/ui/dc1/acls/roles/create", as(MGMT))).text();
    expect(form).toContain(`<label><input type="checkbox" name="policies" value="${P_RO}"/> acl-read</label>`);
    const res = await app.request("/ui/dc1/acls/roles/create", post(MGMT, { name: "ops2", description: "more", policies: [P_RO] }));
    expect(res.headers.get("Location")).toBe("/ui/dc1/acls/roles/new-role-id?saved=1");
    expect(JSON.parse(writes()[0]!.body!)).toEqual({ Name: "ops2", Description: "more", Policies: [{ ID: P_RO }] });
    const missing = await app.request("/ui/dc1/acls/roles/55555555-5555-4555-8555-555555555555", as(MGMT));
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain("There is no such role in dc1.");
  });

  test("a token is created from the form (policies, roles, local), and every link keeps the content path", async () => {
    const { app, writes } = ui({}, "/console/");
    const res = await app.request("/console/dc1/acls/tokens/create", post(MGMT, { description: "ci", policies: P_RO, roles: R_OPS, local: "on" }));
    expect(res.headers.get("Location")).toBe("/console/dc1/acls/tokens/new-token-id?saved=1");
    expect(JSON.parse(writes()[0]!.body!)).toEqual({ Description: "ci", Policies: [{ ID: P_RO }], Roles: [{ ID: R_OPS }], Local: true });
    const html = await (await app.request("/console/dc1/acls/tokens", as(MGMT))).text();
    const hrefs = [...html.matchAll(/(?:href|action)="([^"]+)"/g)].map((m) => m[1]!);
    expect(hrefs.filter((h) => !h.startsWith("/console/") && h !== "#content")).toEqual([]);
  });
});
