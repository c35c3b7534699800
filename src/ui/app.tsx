/** @jsxImportSource hono/jsx */
/**
 * The web UI (issue 21) as a Hono app under `contentPath` (ui_config.content_path, "/ui/" by default):
 * the frame every page module (pages.ts) mounts into: security headers on every answer (a
 * Content-Security-Policy allowing only this origin: no CDN, no inline script), the embedded assets,
 * the redirects to the local datacenter, and the one live stream (server-sent events) per page.
 *
 * Pages read and write through the agent's own /v1 API in process, as the holder of the
 * `causeway-token` cookie, else with the agent's default token.
 */
import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import { streamSSE } from "hono/streaming";
import { buildAssets } from "./assets.ts";
import { Layout } from "./layout.tsx";
import { runLiveTopic } from "./live.ts";
import { ApiError, TOKEN_COOKIE, type ApiCall, type BlockingWait, type UiContext, type UiDeps } from "./page.ts";
import { PAGES } from "./pages.ts";
import { preferencesOf } from "./settings_page.tsx";

export { ApiError, TOKEN_COOKIE, type ApiCall, type BlockingWait, type Indexed, type UiDeps } from "./page.ts";

/** How often a live stream sends a comment line, so that proxies keep it open. */
const HEARTBEAT_MS = 5_000;

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

/**
 * Whether a form post comes from the UI's own pages: no Origin (a non-browser client, or an old
 * browser's same-site form), the browser's own `Sec-Fetch-Site: same-origin` (a page cannot forge it),
 * or an Origin naming the Host, or the X-Forwarded-Host a reverse proxy that rewrites Host passes on.
 */
export function sameOrigin(h: { readonly origin?: string | undefined; readonly host?: string | undefined; readonly fetchSite?: string | undefined; readonly forwardedHost?: string | undefined }): boolean {
  if (h.origin === undefined) return true;
  if (h.fetchSite !== undefined) return h.fetchSite === "same-origin";
  try {
    const host = new URL(h.origin).host;
    return host === h.host || (h.forwardedHost !== undefined && host === h.forwardedHost.split(",")[0]!.trim());
  } catch {
    return false;
  }
}

/** "/ui" or "ui/" -> "/ui/". */
export function normalizeContentPath(p: string): string {
  const trimmed = p.trim().replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? "/" : `/${trimmed}/`;
}

/** `path` with `dc` (when not the local one) and the blocking parameters of `wait` added to its query. */
export function apiPath(path: string, dc: string | undefined, local: string, wait?: BlockingWait): string {
  const extra: string[] = [];
  if (dc && dc !== local) extra.push(`dc=${encodeURIComponent(dc)}`);
  if (wait) extra.push(`index=${wait.minIndex}`, `wait=${Math.max(0, Math.round(wait.maxWaitMs))}ms`);
  if (extra.length === 0) return path;
  return `${path}${path.includes("?") ? "&" : "?"}${extra.join("&")}`;
}

/** Consul's answer for a discovery chain while Connect is not enabled (no CA configuration yet). */
const CONNECT_OFF = /no cluster ca config setup/i;

/** The status a failure is shown with: unknown datacenter 404, permission 403, else the API's own or 500. */
export function failureStatus(err: unknown): number {
  const message = (err as Error)?.message ?? String(err);
  if (/no path to datacenter/i.test(message)) return 404;
  if (/permission denied|acl not found/i.test(message)) return 403;
  return err instanceof ApiError && err.status >= 400 ? err.status : 500;
}

/**
 * Whether `path` (a /v1 path, its query after "?") stays what it says once parsed as a URL. The UI
 * builds API paths from what readers typed (keys, names); one with a "." or ".." segment (also as
 * "%2e%2e") would be resolved to another endpoint than the page meant.
 */
export function canonicalApiPath(path: string): boolean {
  const p = path.split("?")[0]!;
  try {
    return new URL(`http://ui.internal${p}`).pathname === p;
  } catch {
    return false;
  }
}

export function createUi(given: UiDeps): Hono {
  // Every call of the API, pages' own included, goes through the canonical-path check.
  const deps: UiDeps = {
    ...given,
    api: (call) => canonicalApiPath(call.path)
      ? given.api(call)
      : Promise.resolve(new Response(`refused: the API path ${JSON.stringify(call.path.split("?")[0])} is not canonical`, { status: 400 })),
  };
  const base = normalizeContentPath(deps.contentPath);
  const assets = buildAssets(PAGES);
  const app = new Hono();
  app.use("*", async (c, next) => {
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
    // Forms post to the UI with the reader's cookie: refuse (before any handler) a write another site's page started.
    const fromHere = sameOrigin({ origin: c.req.header("Origin"), host: c.req.header("Host"), fetchSite: c.req.header("Sec-Fetch-Site"), forwardedHost: c.req.header("X-Forwarded-Host") });
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && !fromHere) {
      return c.text("cross-site request refused: the Origin header names another site", 403);
    }
    await next();
  });

  const switcher = async (dc: string) => {
    const list = [...await deps.datacenters()];
    if (!list.includes(dc)) list.push(dc);
    return list;
  };
  const call: UiContext["call"] = async (o) => {
    const res = await deps.api({ ...o, path: apiPath(o.path, o.dc, deps.datacenter) } as ApiCall);
    const text = await res.text();
    if (res.status < 200 || res.status > 299) throw new ApiError(res.status, text.trim() || `HTTP ${res.status}`);
    return { status: res.status, text, index: Number(res.headers.get("X-Consul-Index") ?? "0") || 0 };
  };
  const ctx: UiContext = {
    deps, base, switcher, call,
    token: (c) => getCookie(c, TOKEN_COOKIE) || undefined,
    frame: async (c, dc) => ({ base, dc, datacenters: await switcher(dc), assets: { style: assets.style.name, client: assets.client.name }, ...preferencesOf(c) }),
    // Pages are the reader's view as their token sees it (a token page shows its secret): never cached.
    html: async (c, page, status = 200) => {
      c.header("Cache-Control", "no-store");
      return c.html(`<!DOCTYPE html>${await String(page)}`, status as 200);
    },
    cookie: (c, maxAgeS) => ({
      path: base, sameSite: "Strict", httpOnly: true,
      // Over TLS (here, or at a proxy that says so) the cookie is never sent in the clear.
      secure: new URL(c.req.url).protocol === "https:" || c.req.header("X-Forwarded-Proto") === "https",
      ...(maxAgeS !== undefined ? { maxAge: maxAgeS } : {}),
    }),
    async read(path, dc, token, wait) {
      const r = await call({ path: apiPath(path, undefined, deps.datacenter, wait), dc, token, ...(wait ? { signal: wait.signal } : {}) });
      return { value: JSON.parse(r.text), index: r.index };
    },
    async failure(c: Context, dc: string, err: unknown, section = "services") {
      const message = (err as Error)?.message ?? String(err);
      if (CONNECT_OFF.test(message)) {
        // Not a failure of the agent: the servers compile discovery chains only with Connect on (Consul's
        // "no cluster ca config setup"). Said as the page's content, 200.
        return ctx.html(c, (
          <Layout {...await ctx.frame(c, dc)} section={section} title="Connect is not enabled">
            <p role="status">
              Routing and failover come from the discovery chain, which the servers of {dc} compile only with Connect
              enabled: set <code>{'"connect": { "enabled": true }'}</code> in their configuration.
            </p>
          </Layout>
        ));
      }
      const status = failureStatus(err);
      return ctx.html(c, (
        <Layout {...await ctx.frame(c, dc)} section={section} title="Something went wrong">
          <p role="alert">{status === 404 && /no path to datacenter/i.test(message) ? `There is no datacenter called ${dc}.` : status === 403 ? "Your token may not do this." : `The agent could not answer: ${message}`}</p>
        </Layout>
      ), status);
    },
  };

  app.get(`${base}assets/:file`, (c) => {
    const asset = assets.named(c.req.param("file") ?? "");
    if (!asset) return c.text("Not found", 404);
    c.header("Content-Type", asset.contentType);
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    return c.body(asset.body);
  });

  app.get(base.replace(/\/$/, "") || "/", (c) => c.redirect(`${base}${deps.datacenter}/services`, 302));
  if (base !== "/") {
    app.get(base, (c) => c.redirect(`${base}${deps.datacenter}/services`, 302));
    // Consul sends the root of the HTTP port to the UI too.
    app.get("/", (c) => c.redirect(base, 302));
  }

  for (const page of PAGES) page.routes(app, ctx);

  // A page's live stream (server-sent events): `topic` and the page's own query; resumes after
  // Last-Event-ID, else after `since` (the index the page was rendered at).
  app.get(`${base}events`, async (c) => {
    const dc = c.req.query("dc") ?? deps.datacenter;
    const name = c.req.query("topic") ?? "";
    const factory = PAGES.map((p) => (p.topics && Object.hasOwn(p.topics, name) ? p.topics[name] : undefined)).find((f) => f !== undefined);
    const topic = factory?.(ctx, dc, ctx.token(c), (k) => c.req.query(k));
    if (!topic) return c.text(`unknown live topic ${JSON.stringify(name)}`, 400);
    // A read that fails now (a token deleted since, a datacenter gone) is answered as an error, which
    // ends the browser's EventSource for good instead of having it reconnect every few seconds.
    try {
      await topic.read(0, 0, c.req.raw.signal);
    } catch (err) {
      return c.text((err as Error)?.message ?? String(err), failureStatus(err) as 400);
    }
    const since = Number(c.req.header("Last-Event-ID") ?? c.req.query("since") ?? "0");
    return streamSSE(c, async (stream) => {
      const done = new AbortController();
      stream.onAbort(() => done.abort());
      const stopHeartbeat = deps.clock.setInterval(HEARTBEAT_MS, () => void stream.write(": hb\n\n").catch(() => done.abort()));
      try {
        await stream.writeSSE({ event: "open", data: "live" });
        await runLiveTopic({
          topic,
          since: Number.isFinite(since) && since >= 0 ? since : 0,
          signal: done.signal, clock: deps.clock,
          push: (p) => stream.writeSSE(p),
        });
      } catch {
        // The read failed (the client reconnects and retries) or the client went away.
      } finally {
        stopHeartbeat();
      }
    });
  });
  return app;
}
