/**
 * The ACL HTTP API of Consul 1.8 (agent/acl_endpoint.go): bootstrap, replication status, tokens
 * (create, read, self, update, delete, clone, list). Policies and roles are in acl_policies.ts. With
 * ACLs off every route answers 401 "ACL support disabled". A write is prepared here from the state the
 * servers hold (the `acl-write-context` read, which needs acl:write) with src/acl's builders, proposed
 * with the request's token, and answered with the stored object read back. Refusals Consul answers
 * 500 (validation) are 400 with its text; a missing token or policy is 403 "ACL not found".
 */
import type { Context, Hono } from "hono";
import {
  AclRequestError, buildBootstrapToken, buildTokenClone, buildTokenCreate, buildTokenUpdate, isUuid, type AclLookup, type AclRequestContext, type TokenInput,
} from "../acl/index.ts";
import { decodeGoStruct, GoError, parseGoDuration, parseGoJson, slice, struct, type GoType, type JsonValue } from "../lib/index.ts";
import type { AclTokenRecord, ReadQuery, ReadValue } from "../model/index.ts";
import type { StateCommand } from "../state/index.ts";
import { readBodyText } from "./body.ts";
import type { HttpApiDeps } from "./deps.ts";
import { tokenJson, tokenStubJson } from "./acl_output.ts";
import { parseReadOptions, type ReadOptions } from "./query_options.ts";
import { serveRead, STATE_UNAVAILABLE, stateRefusal } from "./read_route.ts";
import { query, requestToken } from "./request.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";

export const ACL_DISABLED = "ACL support disabled";
export const ACL_NOT_FOUND = "ACL not found";

const LINK = slice(struct("structs.ACLTokenPolicyLink", { ID: "string", Name: "string" }));
const SERVICE_IDENTITIES = slice(struct("structs.ACLServiceIdentity", { ServiceName: "string", Datacenters: slice("string") }));
const NODE_IDENTITIES = slice(struct("structs.ACLNodeIdentity", { NodeName: "string", Datacenter: "string" }));
/** time.Duration, or a Go duration string (ACLToken.UnmarshalJSON); nanoseconds. */
const TTL: GoType = { custom: { goName: "time.Duration", decode: (v: JsonValue) => (typeof v === "string" ? parseGoDuration(v) : typeof v === "number" ? Math.trunc(v) : undefined) } };
const TOKEN_BODY = struct("structs.ACLToken", {
  AccessorID: "string", SecretID: "string", Description: "string", Policies: LINK, Roles: LINK, ServiceIdentities: SERVICE_IDENTITIES,
  NodeIdentities: NODE_IDENTITIES, Local: "bool", AuthMethod: "string", ExpirationTime: "string", ExpirationTTL: TTL, Rules: "string", Type: "string",
}).struct;

/** A body decoded as `what` (Consul's "<What> decoding failed: ..."), or the 400 to answer. */
export async function decodeAclBody<T>(c: Context, what: string, shape: Parameters<typeof decodeGoStruct>[1]): Promise<T | Response> {
  try {
    const text = await readBodyText(c);
    return decodeGoStruct<T>(text.trim() === "" ? null : parseGoJson(text), shape);
  } catch (err) {
    if (err instanceof GoError) return textError(c, 400, `${what} decoding failed: ${err.message}`);
    return errorResponse(c, err);
  }
}

/**
 * Where an ACL write (and the reads that prepare it and read it back) goes: `?dc=` when given, else in a
 * secondary datacenter the primary, which holds the global ACL objects (Consul forwards ACL writes
 * there), except for a `local` token, which lives where it is made. Undefined: this datacenter.
 */
export function aclDc(c: Context, deps: HttpApiDeps, local = false): string | undefined {
  return aclWhere(c, deps, local).dc;
}

/** A datacenter chosen by aclDc (an object, so that "this datacenter", undefined, is not mistaken for "not given"). */
export interface AclWhere {
  readonly dc: string | undefined;
}

export function aclWhere(c: Context, deps: HttpApiDeps, local = false): AclWhere {
  const primary = deps.agent.primaryDatacenter;
  return { dc: query(c, "dc") || (!local && primary && primary !== deps.agent.datacenter ? primary : undefined) };
}

/**
 * One read made for a route (not blocking), answered as the read's value; an error is answered as
 * errorResponse does. A `consistent` read (the read-back of a write) is made where the write went (`dc`).
 */
export async function readOnce<Q extends ReadQuery>(c: Context, deps: HttpApiDeps, q: Q, consistent = false, where?: AclWhere): Promise<ReadValue<Q> | Response> {
  if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
  const dc = where ? where.dc : consistent ? aclDc(c, deps) : undefined;
  try {
    const base = parseReadOptions(c, () => 0.5);
    const options: ReadOptions = { ...base, minIndex: 0, maxWaitMs: 0, ...(consistent ? { consistency: "consistent" as const } : {}), ...(dc !== undefined ? { datacenter: dc } : {}) };
    return (await deps.state.read(q, options)).value;
  } catch (err) {
    return errorResponse(c, err);
  }
}

/** The builders' view of the state, from an acl-write-context read. */
export async function writeContext(c: Context, deps: HttpApiDeps, ids: readonly string[], where = aclWhere(c, deps)): Promise<AclRequestContext | Response> {
  const ctx = await readOnce(c, deps, { type: "acl-write-context", ids: ids.filter((x) => x !== "") }, false, where);
  if (ctx instanceof Response) return ctx;
  const lower = (s: string) => s.toLowerCase();
  const lookup: AclLookup = {
    tokenByAccessor: (id) => ctx.tokens.find((t) => lower(t.AccessorID) === lower(id)),
    tokenBySecret: (s) => ctx.tokens.find((t) => t.SecretID === s),
    policyById: (id) => ctx.policies.find((p) => lower(p.ID) === lower(id)),
    policyByName: (n) => ctx.policies.find((p) => lower(p.Name) === lower(n)),
    roleById: (id) => ctx.roles.find((r) => lower(r.ID) === lower(id)),
    roleByName: (n) => ctx.roles.find((r) => lower(r.Name) === lower(n)),
    authMethod: (n) => ctx.authMethods.find((m) => lower(m.Name) === lower(n)),
  };
  const newId = deps.newId;
  if (!newId) return textError(c, 500, "this agent cannot generate IDs");
  return { lookup, newUuid: newId, now: nowOf(deps) };
}

/** Wall-clock ms for CreateTime and expiry. */
const nowOf = (deps: HttpApiDeps) => deps.now ?? (() => deps.clock?.now() ?? 0);

/** Proposes `command` in `dc` with the request's token; a refusal is 400 with its text. Undefined when it was applied. */
export async function writeAcl(c: Context, deps: HttpApiDeps, command: StateCommand, where = aclWhere(c, deps)): Promise<Response | undefined> {
  if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
  try {
    const r = await deps.state.write(command, where.dc, requestToken(c));
    return r.type === "error" ? stateRefusal(c, r.error) : undefined;
  } catch (err) {
    return errorResponse(c, err);
  }
}

/** An AclRequestError (Consul's 500 validation refusals) as 400; anything else as errorResponse answers it. */
export const builderRefusal = (c: Context, err: unknown) => (err instanceof AclRequestError ? textError(c, 400, err.message) : errorResponse(c, err));

type TokenBody = Omit<TokenInput, "ExpirationTTLMs"> & { ExpirationTTL?: number };
const tokenInput = (b: TokenBody): TokenInput => {
  const { ExpirationTTL, ...rest } = b;
  return { ...rest, ...(ExpirationTTL ? { ExpirationTTLMs: ExpirationTTL / 1e6 } : {}) };
};

export function mountAcl(app: Hono, deps: HttpApiDeps): void {
  const on = deps.acl?.enabled === true;
  // Every ACL route answers 401 with ACLs off (checkACLDisabled).
  app.use("/v1/acl/*", async (c, next) => (on ? next() : textError(c, 401, ACL_DISABLED)));

  // The leader's replication routine answers (a primary: not enabled); ?dc= asks another datacenter's.
  app.get("/v1/acl/replication", (c) => serveRead(c, deps, () => ({ type: "acl-replication-status" }), (v) => jsonResponse(c, v)));

  app.put("/v1/acl/bootstrap", async (c) => {
    if (!deps.newId) return textError(c, 500, "this agent cannot generate IDs");
    const token = buildBootstrapToken({ newUuid: deps.newId, now: nowOf(deps) });
    const refused = await writeAcl(c, deps, { type: "acl-bootstrap", token, resetIndex: 0 });
    if (refused) return refused;
    const stored = await readOnce(c, deps, { type: "acl-token-self", secret: token.SecretID }, true);
    if (stored instanceof Response) return stored;
    return stored ? jsonResponse(c, { ID: stored.SecretID, ...tokenJson(stored) }) : textError(c, 500, "the bootstrap token was not stored");
  });

  app.put("/v1/acl/token", (c) => writeToken(c, deps, undefined));
  app.get("/v1/acl/token/self", async (c) => {
    const secret = requestToken(c) ?? "";
    const t = await readOnce(c, deps, { type: "acl-token-self", secret });
    if (t instanceof Response) return t;
    return t ? jsonResponse(c, tokenJson(t)) : textError(c, 403, ACL_NOT_FOUND);
  });
  app.get("/v1/acl/tokens", (c) =>
    serveRead(c, deps, () => ({
      type: "acl-token-list", ...(query(c, "policy") ? { policy: query(c, "policy") } : {}), ...(query(c, "role") ? { role: query(c, "role") } : {}),
      ...(query(c, "authmethod") ? { authMethod: query(c, "authmethod") } : {}),
    }), (v) => jsonResponse(c, v.map(tokenStubJson))));
  app.get("/v1/acl/token/:id", (c) =>
    serveRead(c, deps, () => ({ type: "acl-token-get", accessor: c.req.param("id") }), (t) => (t ? jsonResponse(c, tokenJson(t)) : textError(c, 403, ACL_NOT_FOUND))));
  app.put("/v1/acl/token/:id", (c) => writeToken(c, deps, c.req.param("id")));
  app.delete("/v1/acl/token/:id", async (c) => {
    const id = c.req.param("id");
    if (!isUuid(id)) return textError(c, 400, "Accessor ID is missing or an invalid UUID");
    if (requestToken(c) !== undefined) {
      const self = await readOnce(c, deps, { type: "acl-token-self", secret: requestToken(c)! });
      if (!(self instanceof Response) && self && self.AccessorID.toLowerCase() === id.toLowerCase()) return textError(c, 400, "Deletion of the request's authorization token is not permitted");
    }
    // A local token is deleted where it lives; any other in the primary (Consul's TokenDelete forwarding).
    const here = aclDc(c, deps) === undefined ? undefined : await readOnce(c, deps, { type: "acl-token-get", accessor: id }, false, aclWhere(c, deps, true));
    if (here instanceof Response) return here;
    const refused = await writeAcl(c, deps, { type: "acl-token", op: "delete", accessorIds: [id] }, aclWhere(c, deps, here?.Local === true));
    return refused ?? jsonResponse(c, true);
  });
  app.put("/v1/acl/token/:id/clone", async (c) => {
    const body = await decodeAclBody<{ Description?: string }>(c, "Token", struct("structs.ACLToken", { Description: "string" }).struct);
    if (body instanceof Response) return body;
    const ctx = await writeContext(c, deps, [c.req.param("id")]);
    if (ctx instanceof Response) return ctx;
    const source = ctx.lookup.tokenByAccessor(c.req.param("id"));
    if (!source) return textError(c, 403, ACL_NOT_FOUND);
    let token;
    try {
      token = buildTokenClone(source, body.Description, ctx);
    } catch (err) {
      return builderRefusal(c, err);
    }
    return storeToken(c, deps, token);
  });
}

/** Create (no `accessor`) or update a token from the request body. */
async function writeToken(c: Context, deps: HttpApiDeps, accessor: string | undefined): Promise<Response> {
  const body = await decodeAclBody<TokenBody>(c, "Token", TOKEN_BODY);
  if (body instanceof Response) return body;
  if (accessor !== undefined && body.AccessorID && body.AccessorID !== accessor) return textError(c, 400, "Token Accessor ID in URL and payload do not match");
  const input = tokenInput({ ...body, ...(accessor !== undefined ? { AccessorID: accessor } : {}) });
  const ctx = await writeContext(c, deps, [input.AccessorID ?? "", input.SecretID ?? ""], aclWhere(c, deps, input.Local === true));
  if (ctx instanceof Response) return ctx;
  let token;
  try {
    token = accessor === undefined ? buildTokenCreate(input, ctx) : buildTokenUpdate(input, ctx);
  } catch (err) {
    return builderRefusal(c, err);
  }
  return storeToken(c, deps, token);
}

async function storeToken(c: Context, deps: HttpApiDeps, token: Omit<AclTokenRecord, "CreateIndex" | "ModifyIndex">): Promise<Response> {
  const where = aclWhere(c, deps, token.Local);
  const refused = await writeAcl(c, deps, { type: "acl-token", op: "set", tokens: [token] }, where);
  if (refused) return refused;
  const stored = await readOnce(c, deps, { type: "acl-token-get", accessor: token.AccessorID }, true, where);
  if (stored instanceof Response) return stored;
  return stored ? jsonResponse(c, tokenJson(stored)) : textError(c, 500, "the token was not stored");
}
