/**
 * User events (Consul's agent/event_endpoint.go): PUT /v1/event/fire/:name[?node=&service=&tag=] with
 * the payload as the body, and GET /v1/event/list[?name=] of the events this agent received, blocking
 * on `?index` (derived from the newest event's ID) like Consul.
 */
import { Buffer } from "node:buffer";
import type { Hono } from "hono";
import { compileGoRegexp } from "../connect/index.ts";
import { eventListIndex, type UserEventView } from "../model/index.ts";
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
    // With ACLs, only the events the token may read (Consul's filterEvents: event:read on the name); the
    // index is that of the visible list, as Consul computes it after filtering, so that an event the token
    // cannot read neither moves it nor wakes the reader.
    const a = await requestAuthorizer(c, deps);
    if (a instanceof Response) return a;
    const visibleList = () => {
      const all = deps.events!.list(name).events;
      const events = a ? all.filter((e) => a.check("event", "read", e.Name) === "allow") : all;
      return { events, index: eventListIndex(events) };
    };
    let visible = visibleList();
    // Consul blocks while the index is the one the client already has (all 64 bits of it: see eventIndex).
    const asked = options.minIndex > 0 ? BigInt(goUint64Of(query(c, "index") ?? "0") ?? 0) : 0n;
    // An event the client does not see (another name, or unreadable) wakes the wait without moving the
    // index: wait again for what is left of the time (once only without a clock to measure it by).
    const clock = deps.clock;
    const deadline = (clock?.monotonic() ?? 0) + options.maxWaitMs;
    let left = options.maxWaitMs;
    while (asked > 0n && visible.index === asked && left > 0) {
      if ((await deps.events.waitForEvent(left, c.req.raw.signal)) !== "changed") break;
      visible = visibleList();
      left = clock ? deadline - clock.monotonic() : 0;
    }
    c.header("X-Consul-Index", String(visible.index));
    return jsonResponse(c, visible.events.map(eventBody));
  });
}
