/**
 * Pieces shared by the local-agent routes (agent_services.ts, agent_checks.ts, agent_health.ts): the
 * answer when there is no local agent, error mapping, body decoding and `?enable=` parsing, worded as
 * Consul 1.8's agent/agent_endpoint.go and agent/http.go answer.
 */
import type { Context } from "hono";
import { parseGoBool, type JsonValue } from "../lib/index.ts";
import type { HttpApiDeps, LocalAgentApi } from "./deps.ts";
import { decodeMessage, jsonBody } from "./route_params.ts";
import { clientStatusOf, errorResponse } from "./respond.ts";
import { query } from "./request.ts";

/** What every local-agent route answers (500) when the HTTP API was built without a local agent. */
export const LOCAL_AGENT_UNAVAILABLE = "The local agent is not available on this HTTP server";

type Handler = (c: Context, agent: LocalAgentApi) => Response | Promise<Response>;

/** Wraps a route handler so that it runs only with a local agent, answering 500 otherwise. */
export function withLocalAgent(deps: HttpApiDeps, handler: Handler): (c: Context) => Response | Promise<Response> {
  return (c) => (deps.localAgent ? handler(c, deps.localAgent) : plain(c, 500, LOCAL_AGENT_UNAVAILABLE));
}

/**
 * A plain-text answer the way Consul's handlers write one (`resp.WriteHeader(code); fmt.Fprint(resp, msg)`):
 * the bare message, no newline added, with the content type Go's server sniffs for text.
 */
export function plain(c: Context, status: number, message: string): Response {
  return c.body(message, status as 400, { "Content-Type": "text/plain; charset=utf-8" });
}

/** The empty 200 Consul's agent write endpoints answer (their handlers return `nil, nil`). */
export function emptyOk(c: Context): Response {
  return c.body(null, 200);
}

/** The `kind` of a refusal from the local agent (src/agent's AgentError), or undefined for any other error. */
export function refusalKind(err: unknown): "bad-request" | "not-found" | undefined {
  const kind = err instanceof Error ? (err as { kind?: unknown }).kind : undefined;
  return kind === "bad-request" || kind === "not-found" ? kind : undefined;
}

/**
 * Answers a failed LocalAgentApi call through errorResponse: kind "bad-request" -> 400, "not-found" ->
 * 404 (Consul's BadRequestError / NotFoundError), anything else -> 500 (as agent/http.go's handleErr does
 * for an untyped error). The body is the bare message.
 */
export function failure(c: Context, err: unknown): Response {
  return errorResponse(c, err, plain);
}

/** Runs a local-agent write (sync, or a promise it waits for) and answers an empty 200, or the mapped failure. */
export function write(c: Context, fn: () => unknown): Response | Promise<Response> {
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    return failure(c, err);
  }
  return result instanceof Promise ? result.then(() => emptyOk(c), (err: unknown) => failure(c, err)) : emptyOk(c);
}

/**
 * Reads the request body as Consul's decodeBody does (Go's json.Decoder): an empty body answers
 * 400 "Request decode failed: EOF", bad JSON 400 "Request decode failed: <Go's scanner message>". A top-level
 * `null` reads as `{}`, since Go's decoder leaves the target struct untouched.
 */
export async function readBody(c: Context): Promise<JsonValue | Response> {
  try {
    const value = await jsonBody(c);
    return value === null ? {} : value;
  } catch (err) {
    if (clientStatusOf(err) !== undefined) return failure(c, err);
    return plain(c, 400, `Request decode failed: ${decodeMessage(err)}`);
  }
}

/**
 * `?enable=` of the maintenance endpoints (AgentNodeMaintenance / AgentServiceMaintenance): required
 * (400 "Missing value for enable"), parsed with Go's strconv.ParseBool (400 `Invalid value for enable: "x"`,
 * the raw value %q-quoted). `?enable` without a value is present but invalid.
 */
export function enableParam(c: Context): boolean | Response {
  const raw = query(c, "enable");
  if (raw === undefined) return plain(c, 400, "Missing value for enable");
  const enable = parseGoBool(raw);
  return enable ?? plain(c, 400, `Invalid value for enable: ${JSON.stringify(raw)}`);
}
