/**
 * User events (Consul's agent/event_endpoint.go): PUT /v1/event/fire/:name[?node=&service=&tag=] with
 * the payload as the body, and GET /v1/event/list[?name=] of the events this agent received, blocking
 * on `?index` (derived from the newest event's ID) like Consul.
 */
import { Buffer } from "node:buffer";
import type { Hono } from "hono";
import { compileGoRegexp } from "../connect/index.ts";
import type { UserEventView } from "../model/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { BODY_LIMITS, readBodyBytes } from "./body.ts";
import { goUint64Of } from "../lib/index.ts";
import { parseReadOptions } from "./query_options.ts";
import { requestAuthorizer } from "./acl_agent_rules.ts";
import { query } from "./request.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";

const eventBody = (e: UserEventView) => ({ ...e, Payload: e.Payload === null ? null : Buffer.from(e.Payload).toString("base64") });
const UNAVAILABLE = "User events are not available on this agent";
/** How src/agent's user events word a refusal of an event over the size limit. */
const EVENT_TOO_LARGE = "User event exceeds the size limit";

export function mountEvents(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/event/fire/:name", async (c) => {
    if (!deps.events) return textError(c, 500, UNAVAILABLE);
    const name = c.req.param("name");
    if (!name) return textError(c, 400, "Missing name");
    const filters = { nodeFilter: query(c, "node") ?? "", serviceFilter: query(c, "service") ?? "", tagFilter: query(c, "tag") ?? "" };
    if (filters.tagFilter && !filters.serviceFilter) return textError(c, 400, "Cannot provide tag filter without service filter");
    for (const [flag, re] of [["node", filters.nodeFilter], ["service", filters.serviceFilter], ["tag", filters.tagFilter]] as const) {
      try {
        if (re) compileGoRegexp(re);
      } catch (err) {
        return textError(c, 400, `Invalid ${flag} filter ${JSON.stringify(re)}: ${(err as Error).message}`);
      }
    }
    try {
      const body = await readBodyBytes(c, BODY_LIMITS.event);
      const event = await deps.events.fire({ name, payload: body.length ? body : null, ...filters });
      return jsonResponse(c, eventBody(event));
    } catch (err) {
      // The event layer's refusal of an event over serf's size limit is the request's fault (Consul: 500).
      if (err instanceof Error && err.message.startsWith(EVENT_TOO_LARGE)) return textError(c, 400, err.message);
      return errorResponse(c, err);
    }
  });

  app.get("/v1/event/list", async (c) => {
    if (!deps.events) return textError(c, 500, UNAVAILABLE);
    let options;
    try {
      options = parseReadOptions(c, deps.random ?? (() => 0.5));
    } catch (err) {
      return errorResponse(c, err);
    }
    const name = query(c, "name") ?? "";
    let listed = deps.events.list(name);
    // Consul blocks while the index is the one the client already has (all 64 bits of it: see eventIndex).
    const deadline = options.maxWaitMs;
    const asked = options.minIndex > 0 ? BigInt(goUint64Of(query(c, "index") ?? "0") ?? 0) : 0n;
    if (asked > 0n && listed.index === asked) {
      const outcome = await deps.events.waitForEvent(deadline, c.req.raw.signal);
      if (outcome === "changed") listed = deps.events.list(name);
    }
    // With ACLs, only the events the token may read (Consul's filterEvents: event:read on the name).
    const a = await requestAuthorizer(c, deps);
    if (a instanceof Response) return a;
    const visible = a ? listed.events.filter((e) => a.check("event", "read", e.Name) === "allow") : listed.events;
    c.header("X-Consul-Index", String(listed.index));
    return jsonResponse(c, visible.map(eventBody));
  });
}
