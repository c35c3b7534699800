/**
 * Request pieces shared by the catalog, health, session and txn routes, parsed the way Consul's
 * agent/http.go does: the name after a route prefix (Go's decoded URL.Path, `strings.TrimPrefix`),
 * `?node-meta=k:v` (parseMetaFilter / ParseMetaPair), `?tag` (repeatable), `?filter` (bexpr), and a
 * JSON body read with Go's decoder.
 */
import type { Context, Hono } from "hono";
import { compileFilter, FilterError, filterListAsync, filterRecordAsync, type Filter, type Schema } from "../connect/index.ts";
import { decodeGoStruct, GoError, parseGoJson, setOwn, type GoStruct, type JsonValue } from "../lib/index.ts";
import type { NodeMetaFilter } from "../model/index.ts";
import { yieldToEventLoop } from "../platform/index.ts";
import { readBodyText } from "./body.ts";
import { errorResponse, textError } from "./respond.ts";
import { query, queryAll } from "./request.ts";

/**
 * The decoded path after `prefix` (percent-escapes, `%2F` included, decoded once as Go's URL.Path is);
 * undefined when the escaping is invalid.
 */
export function pathTail(c: Context, prefix: string): string | undefined {
  const raw = new URL(c.req.url).pathname;
  if (!raw.startsWith(prefix)) return "";
  try {
    return decodeURIComponent(raw.slice(prefix.length));
  } catch {
    return undefined;
  }
}

/** Answers a bad percent-escape in the path (Go's server refuses such a URL before routing). */
export const badPath = (c: Context): Response => textError(c, 400, "Invalid URL escape in the request path");

/** `?node-meta=key:value`, repeatable; a pair without ":" filters on an empty value. Undefined when absent. */
export function nodeMetaParam(c: Context): NodeMetaFilter | undefined {
  const pairs = queryAll(c, "node-meta");
  if (!pairs.length) return undefined;
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf(":");
    const [k, v] = at < 0 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)];
    setOwn(out, k, v);
  }
  return out;
}

/**
 * `?near=<node>` as a read's `near` field to spread into it (Consul's parseSource): "_agent" is the local
 * agent's node; absent or empty gives {} (no sort).
 */
export function nearParam(c: Context, agentNode: string): { near?: string } {
  const near = query(c, "near");
  if (!near) return {};
  return { near: near === "_agent" ? agentNode : near };
}

/** `?tag=`, repeatable (all must match); undefined when absent. `?tag` with no value is the tag "". */
export function tagsParam(c: Context): readonly string[] | undefined {
  const tags = queryAll(c, "tag");
  return tags.length ? tags : undefined;
}

/**
 * Compiles `?filter=` against `schema`: undefined when absent or empty, a 400 Response with Consul's
 * wording when the expression is bad (Consul 1.8 answers 500 here; we answer 400 for bad input).
 */
export function filterParam(c: Context, schema: Schema): Filter | undefined | Response {
  const expr = query(c, "filter");
  if (!expr) return undefined;
  try {
    return compileFilter(expr, schema);
  } catch (err) {
    if (err instanceof FilterError) return textError(c, 400, `Failed to create boolean expression evaluator: ${err.message}`);
    throw err;
  }
}

/**
 * Reads the body (up to the JSON body limit, RequestTooLargeError past it) and parses its first JSON
 * value with Go's decoder; GoError on bad JSON.
 */
export async function jsonBody(c: Context): Promise<JsonValue> {
  return parseGoJson(await readBodyText(c));
}

/**
 * The request body decoded as Go struct `schema` (Consul's decodeBody), or the answer to give instead:
 * 400 "Request decode failed: ..." for a body Go would not decode, the error's answer otherwise.
 */
export async function goStructBody<R>(c: Context, schema: GoStruct): Promise<R | Response> {
  try {
    return decodeGoStruct<R>(await jsonBody(c), schema);
  } catch (err) {
    if (!(err instanceof GoError)) return errorResponse(c, err);
    return textError(c, 400, `Request decode failed: ${decodeMessage(err)}`);
  }
}

/** The message of a decode failure (GoError), rethrowing anything else. */
export function decodeMessage(err: unknown): string {
  if (err instanceof GoError) return err.message;
  throw err;
}

/**
 * Answers 405 for methods other than those already routed on `pattern` (a wildcard route, which the
 * app's not-found handler cannot recognise by path). Register after the route's own handlers.
 */
export function otherMethodsNotAllowed(app: Hono, pattern: string): void {
  app.all(pattern, (c) => textError(c, 405, `method ${c.req.method} not allowed`));
}

/**
 * The items `filter` keeps (all of them without one). Evaluated in slices that yield to the event loop,
 * so a heavy filter over a large catalog cannot stall the server, and given up when the client goes
 * away. Rejects with FilterTooExpensiveError past the work budget (answered 400 by errorResponse).
 */
export function applyFilter<T>(c: Context, items: readonly T[], filter: Filter | undefined): Promise<T[]> {
  return filterListAsync(items, filter, { yield: yieldToEventLoop, signal: c.req.raw.signal });
}

/** applyFilter for a map of items (agent services and checks, a node's services). */
export function applyRecordFilter<T>(c: Context, items: Readonly<Record<string, T>>, filter: Filter | undefined): Promise<Record<string, T>> {
  return filterRecordAsync(items, filter, { yield: yieldToEventLoop, signal: c.req.raw.signal });
}
