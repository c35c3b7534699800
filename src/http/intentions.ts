/**
 * The intention endpoints (Consul 1.8 agent/intentions_endpoint.go over the Intention RPCs of
 * agent/consul/intention_endpoint.go): GET /v1/connect/intentions[?filter=] (list, highest precedence
 * first), POST /v1/connect/intentions (create; answers {"ID"}), GET / PUT / DELETE
 * /v1/connect/intentions/:id. /match, /check and /v1/agent/connect/authorize are in intentions_query.ts.
 *
 * A write is prepared here as Consul's leader prepares it before Raft: the new ID (deps.newId), "now"
 * (deps.now, else deps.clock), existence and duplicate checks against a read of every intention. Status
 * codes: refusals from Intention.Apply (validation, duplicates, a missing intention), which Consul answers
 * 500, are 400 with the message, as they are the request's fault; a body that does not decode is 400
 * ("Request decode failed: ..." on PUT, and on POST "Failed to decode request body: ...", which Consul 1.8
 * answers 500). Other failures go through errorResponse.
 */
import type { Context, Hono } from "hono";
import {
  checkIntentionDelete,
  checkIntentionDuplicate,
  decodeIntentionBody,
  IntentionError,
  map,
  prepareIntentionCreate,
  prepareIntentionUpdate,
  type Filter,
  type Intention,
  type IntentionBody,
  type Schema,
} from "../connect/index.ts";
import { GoError, parseGoJson } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { mountIntentionQueries } from "./intentions_query.ts";
import type { ReadOptions } from "./query_options.ts";
import { readBodyText } from "./body.ts";
import { serveRead, serveWrite, STATE_UNAVAILABLE } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { query } from "./request.ts";
import { applyFilter, badPath, filterParam, otherMethodsNotAllowed, pathTail } from "./route_params.ts";

const PREFIX = "/v1/connect/intentions/";

/** The ?filter= selectors of structs.Intention (CreatedAt, UpdatedAt, Hash and the raft indexes are `bexpr:"-"`). */
export const INTENTION_SCHEMA: Schema = {
  ID: "string",
  Description: "string",
  SourceNS: "string",
  SourceName: "string",
  DestinationNS: "string",
  DestinationName: "string",
  SourceType: "string",
  Action: "string",
  DefaultAddr: "string",
  DefaultPort: "int",
  Meta: map("string"),
  Precedence: "int",
};

/**
 * go-memdb's UUIDFieldIndex (parseString with enforceLength), which rejects an ID before any lookup of the
 * intentions table; the state store wraps it as "failed intention lookup: <err>". Undefined when `id`
 * can be looked up.
 */
export function intentionIdError(id: string): string | undefined {
  const wrap = (m: string) => `failed intention lookup: ${m}`;
  if (new TextEncoder().encode(id).length !== 36) return wrap("UUID must be 36 characters");
  const hyphens = id.split("-").length - 1;
  if (hyphens > 4) return wrap(`UUID should have maximum of 4 "-"; got ${hyphens}`);
  const hex = id.replaceAll("-", "");
  if (hex.length % 2 !== 0) return wrap("Input (without hyphens) must be even length");
  for (const ch of hex) {
    if (!/[0-9a-fA-F]/.test(ch)) return wrap(`Invalid UUID: encoding/hex: invalid byte: U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")} '${ch}'`);
  }
  return undefined;
}

/** "now" for CreatedAt / UpdatedAt: deps.now, else the injected clock's wall time. */
function nowOf(deps: HttpApiDeps): (() => number) | undefined {
  if (deps.now) return deps.now;
  const clock = deps.clock;
  return clock ? () => clock.now() : undefined;
}

/** A non-blocking read of every intention (the leader's view, as Intention.Apply has it). */
async function allIntentions(deps: HttpApiDeps, c: Context): Promise<readonly Intention[]> {
  const options: ReadOptions = { datacenter: query(c, "dc") || undefined, consistency: "default", minIndex: 0, maxWaitMs: 0 };
  return (await deps.state!.read({ type: "intention-list" }, options)).value;
}

/** How an IntentionError (or a read failure) is answered; `decodePrefix` names the route's decode wording. */
function failure(c: Context, err: unknown, decodePrefix: string): Response {
  if (err instanceof GoError) return textError(c, 400, `${decodePrefix}${err.message}`);
  if (err instanceof IntentionError) return textError(c, 400, err.code === "decode" ? `${decodePrefix}${err.message}` : err.message);
  return errorResponse(c, err);
}

async function decodeBody(c: Context): Promise<IntentionBody> {
  return decodeIntentionBody(parseGoJson(await readBodyText(c)));
}

/** The ID after the prefix, or the Response for a bad escape. */
function idOf(c: Context): string | Response {
  const id = pathTail(c, PREFIX);
  return id === undefined ? badPath(c) : id;
}

export function mountIntentions(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/connect/intentions", (c) => {
    let filter: Filter | undefined;
    return serveRead(c, deps, () => {
      const f = filterParam(c, INTENTION_SCHEMA);
      if (f instanceof Response) return f;
      filter = f;
      return { type: "intention-list" };
    }, async (intentions) => jsonResponse(c, await applyFilter(c, intentions, filter)));
  });

  app.post("/v1/connect/intentions", async (c) => {
    const decodePrefix = "Failed to decode request body: ";
    let body: IntentionBody;
    try {
      body = await decodeBody(c);
    } catch (err) {
      return failure(c, err, decodePrefix);
    }
    const now = nowOf(deps);
    if (!deps.newId || !now) return textError(c, 500, "Intention IDs cannot be generated on this agent");
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    let intention: Intention;
    try {
      const existing = await allIntentions(deps, c);
      // Intention.Apply draws UUIDs until one is unused.
      let id = deps.newId();
      for (let tries = 0; tries < 5 && existing.some((x) => x.ID === id); tries++) id = deps.newId();
      intention = prepareIntentionCreate(body, id, { nowMs: now() });
      checkIntentionDuplicate(existing, intention);
    } catch (err) {
      return failure(c, err, decodePrefix);
    }
    return serveWrite(c, deps, { type: "intention", op: "upsert", intention }, () => jsonResponse(c, { ID: intention.ID }));
  });

  // Hono's wildcard routes below also match the bare path, which Consul serves for GET and POST only.
  app.all("/v1/connect/intentions", (c) => textError(c, 405, `method ${c.req.method} not allowed`));
  mountIntentionQueries(app, deps);

  app.get(`${PREFIX}*`, (c) =>
    serveRead(c, deps, () => {
      const id = idOf(c);
      if (id instanceof Response) return id;
      // Consul answers 400 when the lookup error mentions a UUID, 500 otherwise (IntentionSpecificGet); all
      // of them are the request's fault, so 400 here.
      const bad = intentionIdError(id);
      if (bad !== undefined) return textError(c, 400, bad);
      return { type: "intention-get", id };
    }, (intention) => (intention ? jsonResponse(c, intention) : textError(c, 404, "Intention not found"))));

  app.put(`${PREFIX}*`, async (c) => {
    const id = idOf(c);
    if (id instanceof Response) return id;
    const decodePrefix = "Request decode failed: ";
    let body: IntentionBody;
    try {
      body = await decodeBody(c);
    } catch (err) {
      return failure(c, err, decodePrefix);
    }
    const now = nowOf(deps);
    if (!now) return textError(c, 500, "Intention writes are not available on this agent");
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    const bad = intentionIdError(id);
    if (bad !== undefined) return textError(c, 400, `Intention lookup failed: ${bad}`);
    let intention: Intention;
    try {
      const existing = await allIntentions(deps, c);
      intention = prepareIntentionUpdate(body, id, existing.find((x) => x.ID === id), { nowMs: now() });
      checkIntentionDuplicate(existing, intention);
    } catch (err) {
      return failure(c, err, decodePrefix);
    }
    return serveWrite(c, deps, { type: "intention", op: "upsert", intention }, () => jsonResponse(c, { ID: id }));
  });

  app.delete(`${PREFIX}*`, async (c) => {
    const id = idOf(c);
    if (id instanceof Response) return id;
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    const bad = intentionIdError(id);
    if (bad !== undefined) return textError(c, 400, `Intention lookup failed: ${bad}`);
    try {
      const existing = await allIntentions(deps, c);
      checkIntentionDelete(id, existing.find((x) => x.ID === id));
    } catch (err) {
      return failure(c, err, "");
    }
    return serveWrite(c, deps, { type: "intention", op: "delete", id }, () => jsonResponse(c, true));
  });
  otherMethodsNotAllowed(app, `${PREFIX}*`);
}
