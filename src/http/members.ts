/**
 * Cluster membership endpoints of the agent API
 * (https://developer.hashicorp.com/consul/api-docs/agent#list-members and the join, leave and
 * force-leave sections), answering as Consul's agent/agent_endpoint.go does: AgentMembers, AgentJoin,
 * AgentLeave, AgentForceLeave.
 */
import type { Context, Hono } from "hono";
import type { Authorizer } from "../acl/index.ts";
import type { AgentInfo, MemberStatus, MemberView, MembershipApi } from "./deps.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { query } from "./request.ts";

/** serf.MemberStatus as an integer (hashicorp/serf serf/serf.go: StatusNone = 0 ... StatusFailed = 4). */
export const MEMBER_STATUS_CODES: Readonly<Record<MemberStatus, number>> = { none: 0, alive: 1, leaving: 2, left: 3, failed: 4 };

/**
 * The protocol ranges Consul reports for every member: memberlist protocol 1..5 speaking 2, serf
 * delegate protocol 2..5 speaking 4 (what a Consul 1.x agent with default config shows).
 */
const PROTOCOL_FIELDS = { ProtocolMin: 1, ProtocolMax: 5, ProtocolCur: 2, DelegateMin: 2, DelegateMax: 5, DelegateCur: 4 } as const;

/** `api.AllSegments`: the segment value `consul members` sends by default, meaning "every segment". */
const ALL_SEGMENTS = "_all";

/** structs.ErrSegmentsNotSupported: Consul CE answers this for any named segment. */
const SEGMENTS_NOT_SUPPORTED = "Network segments are not supported in this version of Consul";

/** What the routes answer (500) while gossip is not running. */
export const MEMBERSHIP_UNAVAILABLE = "Membership is not available: gossip is not running on this agent";

/** One member in Consul's `serf.Member` JSON shape (the API's `AgentMember`), field order included. */
export function memberBody(m: MemberView): Record<string, unknown> {
  return { Name: m.name, Addr: m.addr, Port: m.port, Tags: { ...m.tags }, Status: MEMBER_STATUS_CODES[m.status], ...PROTOCOL_FIELDS };
}

/**
 * GET /v1/agent/members[?wan=1][&segment=], PUT /v1/agent/join/<address>[?wan=1], PUT /v1/agent/leave,
 * PUT /v1/agent/force-leave/<node>[?prune][&wan].
 *
 * Quirks kept from Consul: `wan` on members and join counts only with a non-empty value (Go's
 * `Query().Get("wan") != ""`), while `prune` and `wan` on force-leave count by presence; a WAN member
 * list on a client agent is `null` (Agent.WANMembers returns nil there); errors are written as bare
 * text (errorResponse: 500 for a failure, 400 for force-leave of an unknown node, which Consul answers 500). `agent` (when given) tells a client from a server; without it the membership layer's own
 * answer for the WAN pool is served. Without `membership` every route answers 500 with
 * `MEMBERSHIP_UNAVAILABLE`.
 */
/**
 * `authorize`: the request's authorizer (undefined without ACLs) or the Response refusing it; with one,
 * members list only the nodes the token may read (Consul's filterMembers).
 */
export function mountMembers(
  app: Hono, membership: MembershipApi | undefined, agent?: Pick<AgentInfo, "server">, authorize?: (c: Context) => Promise<Authorizer | Response | undefined>,
): void {
  const isClient = agent !== undefined && !agent.server;

  app.get("/v1/agent/members", async (c) => {
    const a = authorize ? await authorize(c) : undefined;
    if (a instanceof Response) return a;
    const readable = (list: readonly MemberView[]) => (a ? list.filter((m) => a.check("node", "read", m.name) === "allow") : list);
    const wan = hasValue(c, "wan");
    const segment = query(c, "segment") ?? "";
    if (wan && segment !== "" && segment !== ALL_SEGMENTS) return consulError(c, 400, "Cannot provide a segment with wan=true");
    if (!membership) return consulError(c, 500, MEMBERSHIP_UNAVAILABLE);
    if (wan) return jsonResponse(c, isClient ? null : readable(membership.members(true)).map(memberBody));
    if (segment !== "" && segment !== ALL_SEGMENTS) return consulError(c, 400, SEGMENTS_NOT_SUPPORTED);
    return jsonResponse(c, readable(membership.members(false)).map(memberBody));
  });

  app.put("/v1/agent/join/:address{.+}", async (c) => {
    if (!membership) return consulError(c, 500, MEMBERSHIP_UNAVAILABLE);
    try {
      await membership.join(c.req.param("address"), hasValue(c, "wan"));
    } catch (err) {
      return errorResponse(c, err, consulError);
    }
    return c.body(null, 200);
  });
  methodNotAllowed(app, "/v1/agent/join/:address{.+}");

  app.put("/v1/agent/leave", async (c) => {
    if (!membership) return consulError(c, 500, MEMBERSHIP_UNAVAILABLE);
    try {
      await membership.leave();
    } catch (err) {
      return errorResponse(c, err, consulError);
    }
    return c.body(null, 200);
  });

  app.put("/v1/agent/force-leave/:node{.+}", async (c) => {
    if (!membership) return consulError(c, 500, MEMBERSHIP_UNAVAILABLE);
    const node = c.req.param("node");
    const prune = query(c, "prune") !== undefined;
    const wan = query(c, "wan") !== undefined;
    // Agent.ForceLeaveWAN / Agent.ForceLeave in agent/agent.go. Consul answers these refusals (and the
    // pool's own for a node it does not know) with 500; they are the request's fault, so 400 here.
    if (wan && isClient) return consulError(c, 400, "Must be a server to force-leave a node from the WAN cluster");
    if (!wan && !membership.members(false).some((m) => m.name === node)) return consulError(c, 400, noNode(node));
    try {
      await membership.forceLeave(node, { prune, wan });
    } catch (err) {
      if (err instanceof Error && err.message === noNode(node)) return consulError(c, 400, err.message);
      return errorResponse(c, err, consulError);
    }
    return c.body(null, 200);
  });
  methodNotAllowed(app, "/v1/agent/force-leave/:node{.+}");
}

/**
 * PUT /v1/agent/reload (Consul's AgentReload): reads the agent's configuration again and applies what can
 * change at run time; answers 200, or 500 with the reason the reload failed. Without `reload` (an agent
 * not started from a configuration), 500 saying so.
 */
export function mountAgentReload(app: Hono, reload: (() => Promise<void>) | undefined): void {
  app.put("/v1/agent/reload", async (c) => {
    if (!reload) return consulError(c, 500, "This agent cannot reload its configuration");
    try {
      await reload();
    } catch (err) {
      return errorResponse(c, err, consulError);
    }
    return c.body(null, 200);
  });
}

/** Consul's refusal for a node the pool does not know (agent.ForceLeave). */
const noNode = (node: string) => `agent: No node found with name '${node}'`;

/** Go's `req.URL.Query().Get(name) != ""`. */
function hasValue(c: Context, name: string): boolean {
  const value = query(c, name);
  return value !== undefined && value !== "";
}

/**
 * Parameterised paths are not caught by the app's 405 fallback (it compares literal paths), so each
 * answers other methods itself, in the same words.
 */
function methodNotAllowed(app: Hono, path: string): void {
  app.all(path, (c) => textError(c, 405, `method ${c.req.method} not allowed`));
}

/** Consul writes handler errors with `fmt.Fprint(resp, err.Error())`: the bare text, no newline. */
function consulError(c: Context, status: number, message: string): Response {
  return c.body(message, status as 500, { "Content-Type": "text/plain; charset=utf-8" });
}

