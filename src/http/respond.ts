import type { Context } from "hono";
import { FilterTooExpensiveError } from "../connect/index.ts";
import { stringifyExact } from "../lib/index.ts";
import { BadRequestError } from "./query_options.ts";
import { query } from "./request.ts";

/**
 * Writes `body` as JSON the way Consul does: compact by default, indented with `?pretty`,
 * `Content-Type: application/json`.
 */
export function jsonResponse(c: Context, body: unknown, status = 200): Response {
  const pretty = query(c, "pretty") !== undefined;
  const text = pretty ? stringifyExact(body, 4) + "\n" : stringifyExact(body);
  return c.body(text, status as 200, { "Content-Type": "application/json" });
}

/** A plain-text error the way Consul writes them (status code plus a message line). */
export function textError(c: Context, status: number, message: string): Response {
  return c.body(message.endsWith("\n") ? message : message + "\n", status as 400, { "Content-Type": "text/plain; charset=utf-8" });
}

/**
 * gRPC codes (as ConnectError carries them) that put the fault on the request: InvalidArgument,
 * NotFound, AlreadyExists, OutOfRange. An internal RPC refusing a request with one is a 400.
 */
const REQUEST_FAULT_CODES: ReadonlySet<number> = new Set([3, 5, 6, 11]);

/**
 * The HTTP status an error asks for: its own numeric `statusCode` in 400..499, or 400 for an RPC error
 * (ConnectError) whose code puts the fault on the request; else undefined.
 */
export function clientStatusOf(err: unknown): number | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  if ((err as Error).name === "ConnectError" && REQUEST_FAULT_CODES.has((err as { code?: unknown }).code as number)) return 400;
  // PermissionDenied: an ACL refusal, 403 as Consul answers it.
  if ((err as Error).name === "ConnectError" && (err as { code?: unknown }).code === 7) return 403;
  if (!Object.hasOwn(err, "statusCode")) return undefined;
  const status = (err as { statusCode: unknown }).statusCode;
  return typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 499 ? status : undefined;
}

/** An error's message for the client: an RPC error's own words, without gRPC's "[code]" prefix. */
function ownMessage(err: Error): string {
  const raw = (err as { rawMessage?: unknown }).rawMessage;
  return typeof raw === "string" ? raw : err.message;
}

/** JavaScript's own error types: their messages describe our code, not the request. */
const RUNTIME_ERRORS: readonly (abstract new (...args: never[]) => Error)[] = [TypeError, ReferenceError, SyntaxError, RangeError, EvalError, URIError];

/** Said instead of a runtime error's text. */
export const INTERNAL_ERROR = "Internal error while serving the request (details are in the agent's log)";

/**
 * The message of a server-side failure as the client may read it: an RPC error's own words (without
 * gRPC's "[code]" prefix), with no URL, file path or stack in it; a JavaScript runtime error (TypeError
 * and kin) is never quoted.
 */
export function safeErrorMessage(err: unknown): string {
  if (!(err instanceof Error)) return typeof err === "string" && err !== "" ? scrub(err) : INTERNAL_ERROR;
  if (RUNTIME_ERRORS.some((t) => err.constructor === t) || err.name === "AbortError") return INTERNAL_ERROR;
  const message = scrub(ownMessage(err));
  return message === "" ? INTERNAL_ERROR : message;
}

function scrub(message: string): string {
  return message
    .split("\n")
    .filter((line) => !/^\s+at\s/.test(line))
    .join("\n")
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*/gi, "[address]")
    .replace(/(^|[\s'"(=])(?:[a-z]:)?\/(?:[\w.@+~-]+\/)+[\w.@+~-]*(?::\d+)*/gi, "$1[path]")
    .trim();
}

/**
 * The one answer for a thrown error, used by every route (and the app's onError): an error with its
 * own `statusCode` in 400..499 answers that status with its message (413 also closes the connection
 * when the body was left unread); BadRequestError and the agent's "bad-request" / "not-found" refusals
 * answer 400 / 404; anything else is a 500 whose message went through safeErrorMessage. `write` formats
 * the answer (textError unless the route writes Consul's bare agent-endpoint messages).
 */
export function errorResponse(c: Context, err: unknown, write: ErrorWriter = textError): Response {
  const status = clientStatusOf(err);
  if (status !== undefined) {
    const res = write(c, status, ownMessage(err as Error));
    if (status === 413 && (err as Error).name === "RequestTooLargeError") res.headers.set("Connection", "close");
    return res;
  }
  if (err instanceof BadRequestError) return write(c, 400, err.message);
  if (err instanceof FilterTooExpensiveError) return write(c, 400, err.message);
  const kind = err instanceof Error ? (err as { kind?: unknown }).kind : undefined;
  if (kind === "bad-request" || kind === "not-found") return write(c, kind === "bad-request" ? 400 : 404, (err as Error).message);
  if (isNoPath(err)) return write(c, 400, NO_PATH_TO_DATACENTER);
  serverErrors.set(c.req.raw, err);
  return write(c, 500, safeErrorMessage(err));
}

/**
 * Consul's structs.ErrNoDCPath, as the RPC layer words it for a datacenter no server knows (src/rpc
 * forward.ts). Consul answers it 500; a datacenter that is not known is the request's fault, so 400.
 */
export const NO_PATH_TO_DATACENTER = "No path to datacenter";

const isNoPath = (err: unknown) => err instanceof Error && ownMessage(err) === NO_PATH_TO_DATACENTER;

/** The error behind each 500 errorResponse wrote, by request, for the app to log once. */
const serverErrors = new WeakMap<Request, unknown>();

/** The error errorResponse answered this request's 500 for, if it did. */
export function serverErrorOf(c: Context): unknown {
  return serverErrors.get(c.req.raw);
}

/** How an error answer is written: textError (a message line), or the local-agent routes' bare message. */
export type ErrorWriter = (c: Context, status: number, message: string) => Response;
