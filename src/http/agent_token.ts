/**
 * `PUT /v1/agent/token/<name>` (Consul 1.8 agent/agent_endpoint.go AgentToken): replaces one of the
 * agent's tokens with the body's `Token`. ACLs off: 401 "ACL support disabled"; agent:write on this
 * node is checked by acl_agent_rules.ts before the route runs; an unknown name: 404 `Token "<name>" is
 * unknown`; a body that does not decode: 400 "Request decode failed: ..."; a token that cannot be
 * persisted: 500 "Failed to persist tokens - ..." and nothing changes. Success is an empty 200.
 */
import type { Context, Hono } from "hono";
import { ownEntry } from "../lib/index.ts";
import { ACL_DISABLED } from "./acl.ts";
import { emptyOk, plain, readBody } from "./agent_local.ts";
import type { HttpApiDeps } from "./deps.ts";
import { textError } from "./respond.ts";

export type AgentTokenName = "default" | "agent" | "agentMaster" | "replication";

/** The names the route takes (1.8's and the legacy ones), and the token each sets. */
export const AGENT_TOKEN_PATH_NAMES: Readonly<Record<string, AgentTokenName>> = {
  default: "default", acl_token: "default",
  agent: "agent", acl_agent_token: "agent",
  agent_master: "agentMaster", acl_agent_master_token: "agentMaster",
  replication: "replication", acl_replication_token: "replication",
};

async function setToken(c: Context, deps: HttpApiDeps): Promise<Response> {
  if (!deps.acl?.enabled || !deps.agentTokens) return textError(c, 401, ACL_DISABLED);
  const body = await readBody(c);
  if (body instanceof Response) return body;
  const token = typeof body === "object" && body !== null && !Array.isArray(body) ? body.Token ?? "" : undefined;
  if (typeof token !== "string") return plain(c, 400, "Request decode failed: Token must be a string");
  const pathName = c.req.param("name") ?? "";
  const name = ownEntry(AGENT_TOKEN_PATH_NAMES, pathName);
  if (!name) return plain(c, 404, `Token "${pathName}" is unknown`);
  try {
    deps.agentTokens.set(name, token);
  } catch (err) {
    return plain(c, 500, `Failed to persist tokens - ${(err as Error).message}`);
  }
  deps.agentTokens.onUpdated?.(pathName);
  return emptyOk(c);
}

export function mountAgentToken(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/agent/token/:name", (c) => setToken(c, deps));
}
