/**
 * The common frame of every route over the replicated state: Consul's read options in, X-Consul-*
 * headers out, 400 for bad options, errorResponse for a failed read or write.
 */
import { goUint64Of, type Uint64 } from "../lib/index.ts";
import type { Context } from "hono";
import type { StateCommand, StateResult } from "../state/index.ts";
import type { HttpApiDeps, StateAccess } from "./deps.ts";
import { parseReadOptions, setQueryMeta, type ReadOptions } from "./query_options.ts";
import type { ReadQuery, ReadValue } from "../model/index.ts";
import { errorResponse, INTERNAL_ERROR, textError } from "./respond.ts";
import { query, requestToken } from "./request.ts";

/** Said when the agent has no way to the replicated state. */
export const STATE_UNAVAILABLE = "The replicated state is not available on this agent";

export type Reply = Response | Promise<Response>;

/**
 * Runs a read for a route: `build` turns the request (and its parsed options) into a read, or returns
 * a Response to answer at once (a 400 for a bad parameter); `respond` renders the value, after the
 * X-Consul-* headers are set.
 */
export async function serveRead<Q extends ReadQuery>(
  c: Context,
  deps: HttpApiDeps,
  build: (options: ReadOptions) => Q | Response,
  respond: (value: ReadValue<Q>, options: ReadOptions) => Reply,
): Promise<Response> {
  if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
  let options: ReadOptions;
  try {
    // The request's signal aborts when the client disconnects (Bun, Deno): its blocking wait ends then,
    // instead of holding a watch until ?wait runs out.
    options = { ...parseReadOptions(c, deps.random ?? (() => 0.5)), signal: c.req.raw.signal };
  } catch (err) {
    return errorResponse(c, err);
  }
  const query = build(options);
  if (query instanceof Response) return query;
  let out: Awaited<ReturnType<StateAccess["read"]>>;
  try {
    out = await deps.state.read(query, options);
  } catch (err) {
    return errorResponse(c, err);
  }
  setQueryMeta(c, out.meta);
  try {
    return await respond(out.value as ReadValue<Q>, options);
  } catch (err) {
    return errorResponse(c, err);
  }
}

/**
 * Runs a write for a route; `respond` renders the result. A result of type "error" (the state store
 * refused the command, nothing was written) is answered by stateRefusal; a failed write by errorResponse.
 */
export async function serveWrite(
  c: Context,
  deps: HttpApiDeps,
  command: StateCommand,
  respond: (result: Exclude<StateResult, { type: "error" }>) => Reply,
): Promise<Response> {
  if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
  let result: StateResult;
  try {
    result = await deps.state.write(command, query(c, "dc") || undefined, requestToken(c));
  } catch (err) {
    return errorResponse(c, err);
  }
  if (result.type === "error") return stateRefusal(c, result.error);
  return respond(result);
}

/**
 * The answer for a command the state store refused (nothing was written). Consul answers its state
 * store's refusals with 500; they are caused by the request (a missing node or session, a stale
 * index, a check in critical state), so Causeway answers 400 with the message. The store's own
 * failures ("internal error: ...") stay 500, without internal detail.
 */
export function stateRefusal(c: Context, message: string): Response {
  if (message.startsWith("internal error")) return textError(c, 500, INTERNAL_ERROR);
  return textError(c, 400, message);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Whether a query parameter is present (Go's `_, ok := params[name]`), with or without a value. */
export function hasParam(c: Context, name: string): boolean {
  return query(c, name) !== undefined;
}

/** Parses an unsigned integer query parameter; undefined when absent, a 400 Response when malformed. */
export function uintParam(c: Context, name: string): Uint64 | undefined | Response {
  const raw = query(c, name);
  if (raw === undefined) return undefined;
  const n = goUint64Of(raw);
  if (n === undefined) return textError(c, 400, `Invalid ${name} value ${JSON.stringify(raw)}: must be an unsigned 64-bit integer`);
  return n;
}
