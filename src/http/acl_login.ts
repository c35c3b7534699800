/**
 * `POST /v1/acl/login` and `POST /v1/acl/logout` (Consul 1.8 agent/acl_endpoint.go ACLLogin/ACLLogout,
 * agent/consul/acl_endpoint.go Login/Logout). This build stores auth methods but cannot verify a
 * bearer token against any of them (no Kubernetes TokenReview, no JWT key sources), so:
 *
 * - login: a body that does not decode is 400 `Failed to decode request body:: …` (Consul's text, with
 *   its double colon); an unknown method is 403 `ACL not found` (Login's acl.ErrNotFound); a known one
 *   is refused with **500** `auth method validator for "<name>" could not be initialized: login with
 *   auth method type "<type>" is not supported by this build`. That is what Consul answers when a
 *   method's validator cannot be built (server.go loadAuthMethodValidator, an error the HTTP layer
 *   maps to 500), the closest of its behaviours to a method this server cannot use. No token is made.
 * - logout: Consul's checks are kept: no token, or an unknown one, is 403 `ACL not found`; a token not
 *   made by an auth method is 403 `Permission denied`. A token that names an auth method (it can only
 *   come from elsewhere, since login is refused here) is not deleted: 500 naming the method, pointing
 *   at `DELETE /v1/acl/token/:accessor`, because deleting it would need a write this token may not have.
 */
import type { Hono } from "hono";
import { decodeGoStruct, GoError, map, parseGoJson, struct } from "../lib/index.ts";
import { ACL_NOT_FOUND, readOnce } from "./acl.ts";
import { readBodyText } from "./body.ts";
import type { HttpApiDeps } from "./deps.ts";
import { requestToken } from "./request.ts";
import { errorResponse, textError } from "./respond.ts";

const LOGIN_BODY = struct("structs.ACLLoginParams", { AuthMethod: "string", BearerToken: "string", Meta: map("string") }).struct;

/** The refusal of a login through a stored method of `type`. */
export const loginUnsupported = (name: string, type: string) =>
  `auth method validator for ${JSON.stringify(name)} could not be initialized: login with auth method type ${JSON.stringify(type)} is not supported by this build`;

export function mountAclLogin(app: Hono, deps: HttpApiDeps): void {
  app.post("/v1/acl/login", async (c) => {
    let body: { AuthMethod?: string };
    try {
      const text = await readBodyText(c);
      body = decodeGoStruct(text.trim() === "" ? null : parseGoJson(text), LOGIN_BODY);
    } catch (err) {
      if (err instanceof GoError) return textError(c, 400, `Failed to decode request body:: ${err.message}`);
      return errorResponse(c, err);
    }
    const method = await readOnce(c, deps, { type: "auth-method-login", name: body.AuthMethod ?? "" });
    if (method instanceof Response) return method;
    if (!method) return textError(c, 403, ACL_NOT_FOUND);
    return textError(c, 500, loginUnsupported(method.Name, method.Type));
  });

  app.post("/v1/acl/logout", async (c) => {
    const secret = requestToken(c);
    if (!secret) return textError(c, 403, ACL_NOT_FOUND);
    const token = await readOnce(c, deps, { type: "acl-token-self", secret });
    if (token instanceof Response) return token;
    if (!token) return textError(c, 403, ACL_NOT_FOUND);
    if (!token.AuthMethod) return textError(c, 403, "Permission denied");
    return textError(c, 500, `logout is not supported by this build (login through auth method ${JSON.stringify(token.AuthMethod)} is not supported); delete the token with DELETE /v1/acl/token/:accessor`);
  });
}
