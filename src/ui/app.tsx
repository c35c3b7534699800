/** @jsxImportSource hono/jsx */
/**
 * The web UI (issue 21) as a Hono app under `contentPath` (ui_config.content_path, "/ui/" by default):
 * server-rendered pages with Consul's URL scheme, the embedded assets, and security headers on every
 * answer (a Content-Security-Policy allowing only this origin: no CDN, no inline script).
 *
 * Reads go through UiDeps with the token from the `causeway-token` cookie, else the agent's default.
 */
import { Hono, type Context } from "hono";
import { getCookie } from "hono/cookie";
import type { ServiceSummary } from "../model/index.ts";
import { assetNamed } from "./assets.ts";
import { Layout } from "./layout.tsx";
import { parseServicesQuery, ServicesPage } from "./services_page.tsx";

export interface UiDeps {
  /** This agent's datacenter: where /ui/ leads. */
  readonly datacenter: string;
  /** Base path with leading and trailing slash ("/ui/"). */
  readonly contentPath: string;
  /** Every known datacenter, nearest first. */
  datacenters(): readonly string[] | Promise<readonly string[]>;
  /** The service summaries of `dc` (GET /v1/internal/ui/services) as the holder of `token` (undefined: the agent's default token). */
  services(dc: string, token: string | undefined): Promise<readonly ServiceSummary[]>;
}

export const TOKEN_COOKIE = "causeway-token";

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

/** "/ui" or "ui/" -> "/ui/". */
export function normalizeContentPath(p: string): string {
  const trimmed = p.trim().replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? "/" : `/${trimmed}/`;
}

export function createUi(deps: UiDeps): Hono {
  const base = normalizeContentPath(deps.contentPath);
  const app = new Hono();
  app.use("*", async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
  });

  const html = async (c: Context, page: unknown, status = 200) => c.html(`<!DOCTYPE html>${await String(page)}`, status as 200);
  const token = (c: Context) => getCookie(c, TOKEN_COOKIE) || undefined;

  /** A failed read as a page: unknown datacenter 404, permission 403, anything else 500, in words. */
  const failure = async (c: Context, dc: string, datacenters: readonly string[], err: unknown) => {
    const message = (err as Error)?.message ?? String(err);
    const status = /no path to datacenter/i.test(message) ? 404 : /permission denied|acl not found/i.test(message) ? 403 : 500;
    return html(c, (
      <Layout base={base} dc={dc} datacenters={datacenters} section="services" title="Something went wrong">
        <p role="alert">{status === 404 ? `There is no datacenter called ${dc}.` : status === 403 ? "Your token may not read this." : `The agent could not answer: ${message}`}</p>
      </Layout>
    ), status);
  };

  app.get(`${base}assets/:file`, (c) => {
    const asset = assetNamed(c.req.param("file") ?? "");
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

  app.get(`${base}:dc/services`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const datacenters = [...await deps.datacenters()];
    if (!datacenters.includes(dc)) datacenters.push(dc);
    let all: readonly ServiceSummary[];
    try {
      all = await deps.services(dc, token(c));
    } catch (err) {
      return failure(c, dc, datacenters, err);
    }
    return html(c, <ServicesPage frame={{ base, dc, datacenters }} all={all} query={parseServicesQuery((k) => c.req.query(k))} />);
  });
  return app;
}
