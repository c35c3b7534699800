/**
 * The session endpoints (Consul's agent/session_endpoint.go and agent/consul/session_endpoint.go, v1.8):
 * PUT /v1/session/create, /destroy/:id and /renew/:id; GET /v1/session/info/:id, /node/:node and /list.
 * The session ID is chosen here (deps.newId), before the write, as Consul's leader does before Raft.
 */
import type { Context, Hono } from "hono";
import { DEFAULT_LOCK_DELAY_NS, SERF_CHECK_ID, SESSION_TTL_MAX_MS, SESSION_TTL_MIN_MS, type ServiceCheckRef } from "../model/index.ts";
import type { SessionCreate } from "../state/index.ts";
import { decodeGoStruct, formatGoDuration, GoError, parseGoDuration, parseGoJson, slice, struct, type JsonValue } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { BadRequestError, parseReadOptions } from "./query_options.ts";
import { readBodyText } from "./body.ts";
import { FIELD_LIMITS, tooLong } from "./field_limits.ts";
import { serveRead, serveWrite } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { badPath, decodeMessage, otherMethodsNotAllowed, pathTail } from "./route_params.ts";
import { requestToken } from "./request.ts";

/** Consul's lockDelayMinThreshold: a lock delay below 1000 (ns) is taken to be in seconds. */
const LOCK_DELAY_MIN_THRESHOLD = 1000;
const SECOND_NS = 1_000_000_000;

const SESSION = struct("structs.Session", {
  Name: "string", Node: "string", LockDelay: "any", Behavior: "string", TTL: "string",
  NodeChecks: slice("string"), ServiceChecks: slice(struct("structs.ServiceCheck", { ID: "string", Namespace: "string" })),
  Checks: slice("string"),
}).struct;

interface RawSession {
  Name?: string; Node?: string; LockDelay?: JsonValue; Behavior?: string; TTL?: string;
  NodeChecks?: string[] | null; ServiceChecks?: { ID?: string; Namespace?: string }[] | null; Checks?: string[] | null;
}

/** Session.UnmarshalJSON's LockDelay: a Go duration string or a number of ns; below 1000 means seconds. */
function lockDelayOf(v: JsonValue | undefined): number {
  if (v === undefined || v === null) return DEFAULT_LOCK_DELAY_NS;
  // A number past int64 nanoseconds has no Go duration (its float-to-int conversion is undefined).
  if (typeof v === "number" && !(Math.abs(v) < 2 ** 63)) throw new BadRequestError(`Request decode failed: LockDelay ${v} is out of range`);
  const ns = typeof v === "string" ? parseGoDuration(v) : typeof v === "number" ? Math.trunc(v) : 0;
  const out = ns < LOCK_DELAY_MIN_THRESHOLD ? ns * SECOND_NS : ns;
  // What the log carries must be an exact integer; the state clamps the delay to 60 s anyway.
  if (!Number.isSafeInteger(out)) throw new BadRequestError(`Request decode failed: LockDelay ${typeof v === "number" ? v : JSON.stringify(v)} is out of range`);
  return out;
}

/**
 * The session a create request asks for, over Consul's defaults (the agent's node, the serfHealth
 * check, a 15 s lock delay, "release"), with fixupEmptySessionChecks: an empty `Checks` empties
 * `NodeChecks` too; the default `Checks` yields to `NodeChecks`; an empty `NodeChecks` drops `Checks`.
 * Causeway keeps no separate deprecated `Checks` list: what remains of it leads `NodeChecks`.
 * Throws GoError for an undecodable body, BadRequestError for Session.Apply's refusals.
 */
export function sessionCreateOf(body: string, nodeName: string, id: string): SessionCreate {
  const raw = body.length > 0 ? decodeGoStruct<RawSession>(parseGoJson(body), SESSION) : {};
  const lockDelay = lockDelayOf(raw.LockDelay);
  let checks = raw.Checks === undefined ? [SERF_CHECK_ID] : raw.Checks;
  let nodeChecks = raw.NodeChecks === undefined ? [SERF_CHECK_ID] : raw.NodeChecks;
  if (!checks || checks.length === 0) nodeChecks = [];
  else if (checks.length === 1 && checks[0] === SERF_CHECK_ID) checks = null;
  else if (!nodeChecks || nodeChecks.length === 0) checks = null;
  const node = raw.Node ?? nodeName;
  if (node === "") throw new BadRequestError("Must provide Node");
  const size = tooLong("Node name", node) ?? tooLong("Session name", raw.Name);
  if (size) throw new BadRequestError(size);
  if ((raw.Checks?.length ?? 0) + (raw.NodeChecks?.length ?? 0) + (raw.ServiceChecks?.length ?? 0) > FIELD_LIMITS.checks) {
    throw new BadRequestError(`Too many checks for one session (limit: ${FIELD_LIMITS.checks})`);
  }
  const behavior = raw.Behavior || "release";
  if (behavior !== "release" && behavior !== "delete") throw new BadRequestError(`Invalid Behavior setting '${behavior}'`);
  const ttl = raw.TTL ?? "";
  if (ttl !== "") {
    let ns: number;
    try {
      ns = parseGoDuration(ttl);
    } catch (err) {
      throw new BadRequestError(`Session TTL '${ttl}' invalid: ${(err as Error).message}`);
    }
    const [min, max] = [SESSION_TTL_MIN_MS * 1e6, SESSION_TTL_MAX_MS * 1e6];
    if (ns !== 0 && (ns < min || ns > max)) {
      // Consul formats the TTL with %d: nanoseconds.
      throw new BadRequestError(`Invalid Session TTL '${ns}', must be between [${formatGoDuration(min)}=${formatGoDuration(max)}]`);
    }
  }
  const serviceChecks: ServiceCheckRef[] | null = raw.ServiceChecks?.map((s) => ({ ID: s.ID ?? "", Namespace: s.Namespace ?? "" })) ?? null;
  return {
    ID: id,
    Name: raw.Name ?? "",
    Node: node,
    LockDelay: lockDelay,
    Behavior: behavior,
    TTL: ttl,
    NodeChecks: [...new Set([...(checks ?? []), ...(nodeChecks ?? [])])],
    ServiceChecks: serviceChecks,
  };
}

/** The session ID after `prefix`, or the 400 Consul answers ("Missing session"). */
function sessionId(c: Context, prefix: string): string | Response {
  const id = pathTail(c, prefix);
  if (id === undefined) return badPath(c);
  return id === "" ? textError(c, 400, "Missing session") : id;
}

export function mountSession(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/session/create", async (c) => {
    if (!deps.newId) return textError(c, 500, "Session IDs cannot be generated on this agent");
    let session: SessionCreate;
    try {
      session = sessionCreateOf(await readBodyText(c), deps.agent.nodeName, deps.newId());
    } catch (err) {
      if (err instanceof GoError) return textError(c, 400, `Request decode failed: ${decodeMessage(err)}`);
      return errorResponse(c, err);
    }
    return serveWrite(c, deps, { type: "session", op: "create", session }, (r) => jsonResponse(c, { ID: r.type === "session" ? r.id : session.ID }));
  });

  app.put("/v1/session/destroy/*", (c) => {
    const id = sessionId(c, "/v1/session/destroy/");
    if (id instanceof Response) return id;
    return serveWrite(c, deps, { type: "session", op: "destroy", id }, () => jsonResponse(c, true));
  });
  otherMethodsNotAllowed(app, "/v1/session/destroy/*");

  // Renewal resets the leader's TTL timer; it answers the session without X-Consul-* headers (Consul's
  // SessionRenew sets none) and 404 when the session does not exist.
  app.put("/v1/session/renew/*", async (c) => {
    let datacenter: string | undefined;
    try {
      datacenter = parseReadOptions(c, deps.random ?? (() => 0.5)).datacenter;
    } catch (err) {
      return errorResponse(c, err);
    }
    const id = sessionId(c, "/v1/session/renew/");
    if (id instanceof Response) return id;
    if (!deps.sessionRenewal) return textError(c, 500, "Session renewal is not available on this agent");
    let sessions;
    try {
      sessions = await deps.sessionRenewal.renewSession(id, datacenter, requestToken(c));
    } catch (err) {
      return errorResponse(c, err);
    }
    if (!sessions || sessions.length === 0) return textError(c, 404, `Session id '${id}' not found`);
    return jsonResponse(c, [...sessions]);
  });
  otherMethodsNotAllowed(app, "/v1/session/renew/*");

  app.get("/v1/session/info/*", (c) =>
    serveRead(c, deps, () => {
      const id = sessionId(c, "/v1/session/info/");
      return id instanceof Response ? id : { type: "session-info", id };
    }, (sessions) => jsonResponse(c, [...sessions])));
  otherMethodsNotAllowed(app, "/v1/session/info/*");

  app.get("/v1/session/node/*", (c) =>
    serveRead(c, deps, () => {
      const node = pathTail(c, "/v1/session/node/");
      if (node === undefined) return badPath(c);
      return node === "" ? textError(c, 400, "Missing node name") : { type: "session-node", node };
    }, (sessions) => jsonResponse(c, [...sessions])));
  otherMethodsNotAllowed(app, "/v1/session/node/*");

  app.get("/v1/session/list", (c) => serveRead(c, deps, () => ({ type: "session-list" }), (sessions) => jsonResponse(c, [...sessions])));
}
