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
import { streamSSE } from "hono/streaming";
import type { Clock } from "../platform/index.ts";
import type { CheckServiceNode, NodeInfo, ServiceSummary } from "../model/index.ts";
import { assetNamed } from "./assets.ts";
import { Layout } from "./layout.tsx";
import { runLiveTopic, type LiveTopic } from "./live.ts";
import { InstancesLive, InstancesPage } from "./instances_page.tsx";
import { NodesLive, NodesPage, parseNodesQuery } from "./nodes_page.tsx";
import { parseServicesQuery, ServicesLive, ServicesPage } from "./services_page.tsx";

export interface UiDeps {
  /** This agent's datacenter: where /ui/ leads. */
  readonly datacenter: string;
  /** Base path with leading and trailing slash ("/ui/"). */
  readonly contentPath: string;
  /** Every known datacenter, nearest first. */
  datacenters(): readonly string[] | Promise<readonly string[]>;
  /**
   * The service summaries of `dc` (GET /v1/internal/ui/services) and their index, as the holder of
   * `token` (undefined: the agent's default token); with `wait`, a blocking read past `minIndex`.
   */
  services(dc: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<readonly ServiceSummary[]>>;
  /** A service's instances with their checks (GET /v1/health/service/:name), as `services` reads. */
  instances(dc: string, service: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<readonly CheckServiceNode[]>>;
  /** Every node of `dc` with its services and checks (GET /v1/internal/ui/nodes), as `services` reads. */
  nodes(dc: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<readonly NodeInfo[]>>;
  /** Times the live streams' heartbeats and push gaps. */
  readonly clock: Clock;
}

export interface Indexed<T> {
  readonly value: T;
  readonly index: number;
}

export interface BlockingWait {
  readonly minIndex: number;
  readonly maxWaitMs: number;
  readonly signal: AbortSignal;
}

/** How often a live stream sends a comment line, so that proxies keep it open. */
const HEARTBEAT_MS = 5_000;

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

  /** The datacenters for the switcher, the one asked for included even when unknown (its read then fails in words). */
  const switcher = async (dc: string) => {
    const list = [...await deps.datacenters()];
    if (!list.includes(dc)) list.push(dc);
    return list;
  };

  app.get(`${base}:dc/services`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const datacenters = await switcher(dc);
    let read: Indexed<readonly ServiceSummary[]>;
    try {
      read = await deps.services(dc, token(c));
    } catch (err) {
      return failure(c, dc, datacenters, err);
    }
    return html(c, <ServicesPage frame={{ base, dc, datacenters }} all={read.value} query={parseServicesQuery((k) => c.req.query(k))} index={read.index} />);
  });

  // Consul's service URL leads to its instances.
  app.get(`${base}:dc/services/:service`, (c) => c.redirect(`${base}${c.req.param("dc")}/services/${encodeURIComponent(c.req.param("service") ?? "")}/instances`, 302));
  app.get(`${base}:dc/services/:service/instances`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const service = c.req.param("service") ?? "";
    const datacenters = await switcher(dc);
    let read: Indexed<readonly CheckServiceNode[]>;
    try {
      read = await deps.instances(dc, service, token(c));
    } catch (err) {
      return failure(c, dc, datacenters, err);
    }
    return html(c, <InstancesPage frame={{ base, dc, datacenters }} service={service} all={read.value} index={read.index} />);
  });

  app.get(`${base}:dc/nodes`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const datacenters = await switcher(dc);
    let read: Indexed<readonly NodeInfo[]>;
    try {
      read = await deps.nodes(dc, token(c));
    } catch (err) {
      return failure(c, dc, datacenters, err);
    }
    return html(c, <NodesPage frame={{ base, dc, datacenters }} all={read.value} query={parseNodesQuery((k) => c.req.query(k))} index={read.index} />);
  });

  // A page's live stream (server-sent events): `topic` and the page's own query; resumes after
  // Last-Event-ID, else after `since` (the index the page was rendered at).
  app.get(`${base}events`, (c) => {
    const dc = c.req.query("dc") ?? deps.datacenter;
    const topic = liveTopic(c.req.query("topic") ?? "", dc, token(c), (k) => c.req.query(k));
    if (!topic) return c.text(`unknown live topic ${JSON.stringify(c.req.query("topic") ?? "")}`, 400);
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
  /** The live topics: each page's read, re-rendered with the page's own query. */
  const liveTopic = (name: string, dc: string, who: string | undefined, get: (k: string) => string | undefined): LiveTopic<unknown> | undefined => {
    if (name === "services") {
      const query = parseServicesQuery(get);
      return {
        event: name, read: (minIndex, maxWaitMs, signal) => deps.services(dc, who, { minIndex, maxWaitMs, signal }),
        render: async (all) => String(await String(<ServicesLive base={base} dc={dc} all={all as readonly ServiceSummary[]} query={query} />)),
      };
    }
    if (name === "instances") {
      const service = get("service") ?? "";
      return {
        event: name, read: (minIndex, maxWaitMs, signal) => deps.instances(dc, service, who, { minIndex, maxWaitMs, signal }),
        render: async (all) => String(await String(<InstancesLive dc={dc} service={service} all={all as readonly CheckServiceNode[]} />)),
      };
    }
    if (name === "nodes") {
      const query = parseNodesQuery(get);
      return {
        event: name, read: (minIndex, maxWaitMs, signal) => deps.nodes(dc, who, { minIndex, maxWaitMs, signal }),
        render: async (all) => String(await String(<NodesLive base={base} dc={dc} all={all as readonly NodeInfo[]} query={query} />)),
      };
    }
    return undefined;
  };
  return app;
}
