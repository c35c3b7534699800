import type { Context } from "hono";
import { query } from "./request.ts";

/**
 * Writes `body` as JSON the way Consul does: compact by default, indented with `?pretty`,
 * `Content-Type: application/json`.
 */
export function jsonResponse(c: Context, body: unknown, status = 200): Response {
  const pretty = query(c, "pretty") !== undefined;
  const text = pretty ? JSON.stringify(body, null, 4) + "\n" : JSON.stringify(body);
  return c.body(text, status as 200, { "Content-Type": "application/json" });
}

/** A plain-text error the way Consul writes them (status code plus a message line). */
export function textError(c: Context, status: number, message: string): Response {
  return c.body(message.endsWith("\n") ? message : message + "\n", status as 400, { "Content-Type": "text/plain; charset=utf-8" });
}
