/**
 * Query parameters parsed once per request. Hono's `c.req.query(name)` scans the URL on every call,
 * and a route reads up to ten parameters (dc, stale, consistent, index, wait, cas, flags, ...): that
 * scanning alone was 5% of a KV write's CPU.
 */
import type { Context } from "hono";

const parsed = new WeakMap<Request, URLSearchParams>();

function paramsOf(c: Context): URLSearchParams {
  let p = parsed.get(c.req.raw);
  if (!p) {
    p = new URL(c.req.url).searchParams;
    parsed.set(c.req.raw, p);
  }
  return p;
}

/** The first value of `name` ("" when present without a value), or undefined when absent. */
export function query(c: Context, name: string): string | undefined {
  return paramsOf(c).get(name) ?? undefined;
}

/** Every value of a repeatable parameter (`?tag=a&tag=b`), in order. */
export function queryAll(c: Context, name: string): string[] {
  return paramsOf(c).getAll(name);
}

/**
 * The ACL token a request carries (Consul's parseTokenInternal): `?token=`, else the `X-Consul-Token`
 * header, else `Authorization: Bearer <token>` (scheme in any case, the first word after it); the first
 * non-empty one wins. Undefined when none: the agent's default token applies then.
 */
export function requestToken(c: Context): string | undefined {
  const fromQuery = query(c, "token");
  if (fromQuery) return fromQuery;
  const header = c.req.header("x-consul-token");
  if (header) return header;
  const auth = c.req.header("authorization");
  const m = auth ? /^bearer\s+(\S+)/i.exec(auth.trim()) : null;
  return m ? m[1] : undefined;
}
