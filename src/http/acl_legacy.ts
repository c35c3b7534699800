/**
 * Consul 1.8's legacy ACL API (agent/acl_endpoint_legacy.go) and rules translation
 * (agent/acl_endpoint.go ACLRulesTranslate*). Legacy tokens are tokens with a legacy Type, shown as
 * `structs.ACL` `{ID (the secret), Name, Type, Rules, CreateIndex, ModifyIndex}`:
 *
 * - PUT /v1/acl/create, /v1/acl/update: acl:write; answer `{"ID": secret}`. Update needs an ID (400
 *   `ACL ID must be set`); create takes one or makes one. Validation refusals (`Invalid ACL Type`,
 *   `Cannot use legacy endpoint to modify a non-legacy token`, `ACL rule compilation failed: ...`) are
 *   400 with Consul's text, as this API answers its builders' refusals; the root names are 403.
 * - PUT /v1/acl/destroy/:id: acl:write; `true`, also for an unknown secret; `anonymous` is 403.
 * - GET /v1/acl/info/:id: no ACL needed (holding the secret is enough); `[acl]`, or `[]` for an unknown
 *   or non-legacy token. Blocking.
 * - PUT /v1/acl/clone/:id: acl:write; a source that is unknown or not legacy is 403 `Permission denied`.
 * - GET /v1/acl/list: acl:write; every legacy token. Blocking.
 * - POST /v1/acl/rules/translate: acl:read (on this agent's resolver); the body's legacy rules in the
 *   current syntax, as raw text; unparseable text is 400.
 * - GET /v1/acl/rules/translate/:accessor: acl:read; a missing token is 403 `ACL not found`, one
 *   without Rules 500 `The specified token does not have any rules set`.
 *
 * Nothing is written unless every check passed; secrets are never logged.
 */
import type { Context, Hono } from "hono";
import { AclPermissionError, buildLegacySet, checkLegacyDelete, legacyAcl, TranslateError, translateLegacyRules, type LegacyAclInput } from "../acl/index.ts";
import { decodeGoStruct, GoError, parseGoJson, struct } from "../lib/index.ts";
import { ACL_NOT_FOUND, builderRefusal, readOnce, writeAcl, writeContext } from "./acl.ts";
import { requestAuthorizer } from "./acl_agent_rules.ts";
import { legacyAclJson } from "./acl_output.ts";
import { readBodyText } from "./body.ts";
import type { HttpApiDeps } from "./deps.ts";
import { serveRead } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";

const ACL_BODY = struct("structs.ACL", { ID: "string", Name: "string", Type: "string", Rules: "string" }).struct;
const PERMISSION_DENIED = "Permission denied";

/** The optional body of create/update (`Request decode failed: ...` when it is not a structs.ACL). */
async function legacyBody(c: Context): Promise<LegacyAclInput | Response> {
  try {
    const text = await readBodyText(c);
    return decodeGoStruct<LegacyAclInput>(text.trim() === "" ? null : parseGoJson(text), ACL_BODY);
  } catch (err) {
    if (err instanceof GoError) return textError(c, 400, `Request decode failed: ${err.message}`);
    return errorResponse(c, err);
  }
}

/** A refusal from src/acl's legacy builders: 403 for permission, else as builderRefusal answers it. */
const refusal = (c: Context, err: unknown) => (err instanceof AclPermissionError ? textError(c, 403, err.message) : builderRefusal(c, err));

/** ACL.Apply "set": the token built from `input` (after the acl:write check that writeContext makes) and stored. */
async function legacySet(c: Context, deps: HttpApiDeps, input: LegacyAclInput): Promise<Response> {
  const ctx = await writeContext(c, deps, input.ID ? [input.ID] : []);
  if (ctx instanceof Response) return ctx;
  let token;
  try {
    token = buildLegacySet(input, ctx);
  } catch (err) {
    return refusal(c, err);
  }
  return (await writeAcl(c, deps, { type: "acl-token", op: "set", tokens: [token] })) ?? jsonResponse(c, { ID: token.SecretID });
}

async function createOrUpdate(c: Context, deps: HttpApiDeps, update: boolean): Promise<Response> {
  const body = await legacyBody(c);
  if (body instanceof Response) return body;
  if (update && !body.ID) return textError(c, 400, "ACL ID must be set");
  return legacySet(c, deps, body);
}

/** The request's authorizer must grant acl:read (Consul checks it on the agent's resolver); undefined when it does. */
async function needAclRead(c: Context, deps: HttpApiDeps): Promise<Response | undefined> {
  const a = await requestAuthorizer(c, deps);
  if (a instanceof Response) return a;
  return a && a.check("acl", "read") !== "allow" ? textError(c, 403, PERMISSION_DENIED) : undefined;
}

/** Translated rules as raw text (Consul writes the bytes as they are, no JSON, no trailing newline). */
const rawText = (c: Context, text: string) => c.body(text, 200, { "Content-Type": "text/plain; charset=utf-8" });

export function mountAclLegacy(app: Hono, deps: HttpApiDeps): void {
  const missing = (c: Context) => textError(c, 400, "Missing ACL");

  app.put("/v1/acl/create", (c) => createOrUpdate(c, deps, false));
  app.put("/v1/acl/update", (c) => createOrUpdate(c, deps, true));

  app.put("/v1/acl/destroy/", missing);
  app.put("/v1/acl/destroy/:id", async (c) => {
    const secret = c.req.param("id");
    const ctx = await writeContext(c, deps, [secret]);
    if (ctx instanceof Response) return ctx;
    try {
      checkLegacyDelete(secret);
    } catch (err) {
      return refusal(c, err);
    }
    const token = ctx.lookup.tokenBySecret(secret);
    if (!token) return jsonResponse(c, true);
    return (await writeAcl(c, deps, { type: "acl-token", op: "delete", accessorIds: [token.AccessorID] })) ?? jsonResponse(c, true);
  });

  app.get("/v1/acl/info/", missing);
  app.get("/v1/acl/info/:id", (c) =>
    serveRead(c, deps, () => ({ type: "acl-token-self", secret: c.req.param("id") }), (t) => {
      const acl = t ? legacyAcl(t) : undefined;
      return jsonResponse(c, acl ? [legacyAclJson(acl)] : []);
    }));

  app.put("/v1/acl/clone/", missing);
  app.put("/v1/acl/clone/:id", async (c) => {
    const ctx = await writeContext(c, deps, [c.req.param("id")]);
    if (ctx instanceof Response) return ctx;
    const source = ctx.lookup.tokenBySecret(c.req.param("id"));
    const acl = source ? legacyAcl(source) : undefined;
    // Unknown and not convertible look the same: 403 (Consul cannot tell a 404 from a 403 here).
    if (!acl) return textError(c, 403, PERMISSION_DENIED);
    return legacySet(c, deps, { Name: acl.Name, Type: acl.Type, Rules: acl.Rules });
  });

  app.get("/v1/acl/list", async (c) => {
    // ACL.List needs acl:write; the token list alone needs only acl:read.
    const allowed = await readOnce(c, deps, { type: "acl-write-context", ids: [] });
    if (allowed instanceof Response) return allowed;
    return serveRead(c, deps, () => ({ type: "acl-token-list" }), (tokens) =>
      jsonResponse(c, tokens.flatMap((t) => {
        const acl = legacyAcl(t);
        return acl ? [legacyAclJson(acl)] : [];
      })));
  });

  app.post("/v1/acl/rules/translate", async (c) => {
    const denied = await needAclRead(c, deps);
    if (denied) return denied;
    let text: string;
    try {
      text = await readBodyText(c);
    } catch (err) {
      return errorResponse(c, err);
    }
    try {
      return rawText(c, translateLegacyRules(text));
    } catch (err) {
      return err instanceof TranslateError ? textError(c, 400, err.message) : errorResponse(c, err);
    }
  });

  app.get("/v1/acl/rules/translate/", (c) => textError(c, 400, "Missing token ID"));
  app.get("/v1/acl/rules/translate/:accessor", async (c) => {
    const t = await readOnce(c, deps, { type: "acl-token-get", accessor: c.req.param("accessor") });
    if (t instanceof Response) return t;
    if (!t) return textError(c, 403, ACL_NOT_FOUND);
    if (!t.Rules) return textError(c, 500, "The specified token does not have any rules set");
    try {
      return rawText(c, translateLegacyRules(t.Rules));
    } catch (err) {
      return err instanceof TranslateError ? textError(c, 500, `Failed to parse legacy rules: ${err.message}`) : errorResponse(c, err);
    }
  });
}
