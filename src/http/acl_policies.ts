/**
 * ACL policies and roles over HTTP (Consul 1.8 agent/acl_endpoint.go): create, read by ID or name,
 * update, delete, list. A missing policy reads as 403 "ACL not found", a missing role as 404 with an
 * empty body, as in 1.8; deletes of missing objects answer true. Writes go through src/acl's builders
 * against the servers' state (acl.ts writeContext) and answer the stored object.
 */
import type { Context, Hono } from "hono";
import { buildPolicyWrite, buildRoleWrite, type PolicyInput, type RoleInput } from "../acl/index.ts";
import { slice, struct } from "../lib/index.ts";
import { builderRefusal, decodeAclBody, readOnce, writeAcl, writeContext, ACL_NOT_FOUND } from "./acl.ts";
import { policyJson, policyStubJson, roleJson } from "./acl_output.ts";
import type { HttpApiDeps } from "./deps.ts";
import { serveRead } from "./read_route.ts";
import { query } from "./request.ts";
import { jsonResponse, textError } from "./respond.ts";

const LINKS = slice(struct("structs.ACLRolePolicyLink", { ID: "string", Name: "string" }));
const POLICY_BODY = struct("structs.ACLPolicy", { ID: "string", Name: "string", Description: "string", Rules: "string", Datacenters: slice("string") }).struct;
const ROLE_BODY = struct("structs.ACLRole", {
  ID: "string", Name: "string", Description: "string", Policies: LINKS,
  ServiceIdentities: slice(struct("structs.ACLServiceIdentity", { ServiceName: "string", Datacenters: slice("string") })),
  NodeIdentities: slice(struct("structs.ACLNodeIdentity", { NodeName: "string", Datacenter: "string" })),
}).struct;

/** Create (no `id`) or update a policy. */
async function writePolicy(c: Context, deps: HttpApiDeps, id: string | undefined): Promise<Response> {
  const body = await decodeAclBody<PolicyInput>(c, "Policy", POLICY_BODY);
  if (body instanceof Response) return body;
  if (id === undefined && body.ID) return textError(c, 400, "Cannot specify the ID when creating a new policy");
  if (id !== undefined && body.ID && body.ID !== id) return textError(c, 400, "Policy ID in URL and payload do not match");
  const ctx = await writeContext(c, deps, []);
  if (ctx instanceof Response) return ctx;
  let policy;
  try {
    policy = buildPolicyWrite({ ...body, ...(id !== undefined ? { ID: id } : {}) }, ctx);
  } catch (err) {
    return builderRefusal(c, err);
  }
  const refused = await writeAcl(c, deps, { type: "acl-policy", op: "set", policies: [policy] });
  if (refused) return refused;
  const stored = await readOnce(c, deps, { type: "acl-policy-get", id: policy.ID }, true);
  if (stored instanceof Response) return stored;
  return stored ? jsonResponse(c, policyJson(stored)) : textError(c, 500, "the policy was not stored");
}

/** Create (no `id`) or update a role. */
async function writeRole(c: Context, deps: HttpApiDeps, id: string | undefined): Promise<Response> {
  const body = await decodeAclBody<RoleInput>(c, "Role", ROLE_BODY);
  if (body instanceof Response) return body;
  if ((id === undefined && body.ID) || (id !== undefined && body.ID && body.ID !== id)) return textError(c, 400, "Role ID in URL and payload do not match");
  const ctx = await writeContext(c, deps, []);
  if (ctx instanceof Response) return ctx;
  let role;
  try {
    role = buildRoleWrite({ ...body, ...(id !== undefined ? { ID: id } : {}) }, ctx);
  } catch (err) {
    return builderRefusal(c, err);
  }
  const refused = await writeAcl(c, deps, { type: "acl-role", op: "set", roles: [role] });
  if (refused) return refused;
  const stored = await readOnce(c, deps, { type: "acl-role-get", id: role.ID }, true);
  if (stored instanceof Response) return stored;
  return stored ? jsonResponse(c, roleJson(stored)) : textError(c, 500, "the role was not stored");
}

export function mountAclPolicies(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/acl/policy", (c) => writePolicy(c, deps, undefined));
  app.get("/v1/acl/policies", (c) => serveRead(c, deps, () => ({ type: "acl-policy-list" }), (v) => jsonResponse(c, v.map(policyStubJson))));
  app.get("/v1/acl/policy/name/:name", (c) =>
    serveRead(c, deps, () => ({ type: "acl-policy-get", name: c.req.param("name") }), (p) => (p ? jsonResponse(c, policyJson(p)) : textError(c, 403, ACL_NOT_FOUND))));
  app.get("/v1/acl/policy/:id", (c) =>
    serveRead(c, deps, () => ({ type: "acl-policy-get", id: c.req.param("id") }), (p) => (p ? jsonResponse(c, policyJson(p)) : textError(c, 403, ACL_NOT_FOUND))));
  app.put("/v1/acl/policy/:id", (c) => writePolicy(c, deps, c.req.param("id")));
  app.delete("/v1/acl/policy/:id", async (c) => (await writeAcl(c, deps, { type: "acl-policy", op: "delete", ids: [c.req.param("id")] })) ?? jsonResponse(c, true));

  app.put("/v1/acl/role", (c) => writeRole(c, deps, undefined));
  app.get("/v1/acl/roles", (c) =>
    serveRead(c, deps, () => ({ type: "acl-role-list", ...(query(c, "policy") ? { policy: query(c, "policy") } : {}) }), (v) => jsonResponse(c, v.map(roleJson))));
  app.get("/v1/acl/role/name/:name", (c) =>
    serveRead(c, deps, () => ({ type: "acl-role-get", name: c.req.param("name") }), (r) => (r ? jsonResponse(c, roleJson(r)) : c.body(null, 404))));
  app.get("/v1/acl/role/:id", (c) =>
    serveRead(c, deps, () => ({ type: "acl-role-get", id: c.req.param("id") }), (r) => (r ? jsonResponse(c, roleJson(r)) : c.body(null, 404))));
  app.put("/v1/acl/role/:id", (c) => writeRole(c, deps, c.req.param("id")));
  app.delete("/v1/acl/role/:id", async (c) => (await writeAcl(c, deps, { type: "acl-role", op: "delete", ids: [c.req.param("id")] })) ?? jsonResponse(c, true));
}
