/**
 * The common frame of every route over the replicated state: Consul's read options in, X-Consul-*
 * headers out, 400 for bad options, 500 with the message for a failed read or write.
 */
import type { Context } from "hono";
import type { StateCommand, StateResult } from "../state/index.ts";
import type { HttpApiDeps, StateAccess } from "./deps.ts";
import { BadRequestError, parseReadOptions, setQueryMeta, type ReadOptions } from "./query_options.ts";
import type { ReadQuery, ReadValue } from "../model/index.ts";
import { textError } from "./respond.ts";
import { query } from "./request.ts";

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
    options = parseReadOptions(c, deps.random ?? (() => 0.5));
  } catch (err) {
    if (err instanceof BadRequestError) return textError(c, 400, err.message);
    throw err;
  }
  const query = build(options);
  if (query instanceof Response) return query;
  let out: Awaited<ReturnType<StateAccess["read"]>>;
  try {
    out = await deps.state.read(query, options);
  } catch (err) {
    return textError(c, 500, messageOf(err));
  }
  setQueryMeta(c, out.meta);
  return respond(out.value as ReadValue<Q>, options);
}

/**
 * Runs a write for a route; `respond` renders the result. A result of type "error" (the state store
 * refused the command, nothing was written) answers 500 with its message, as Consul does for errors
 * from its RPC layer; routes that owe the client a 400 validate before writing.
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
    result = await deps.state.write(command, query(c, "dc") || undefined);
  } catch (err) {
    return textError(c, 500, messageOf(err));
  }
  if (result.type === "error") return textError(c, 500, result.error);
  return respond(result);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Whether a query parameter is present (Go's `_, ok := params[name]`), with or without a value. */
export function hasParam(c: Context, name: string): boolean {
  return query(c, name) !== undefined;
}

/** Parses an unsigned integer query parameter; undefined when absent, a 400 Response when malformed. */
export function uintParam(c: Context, name: string): number | undefined | Response {
  const raw = query(c, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) return textError(c, 400, `Invalid ${name} value ${JSON.stringify(raw)}: must be an unsigned integer`);
  return Number(raw);
}
