/** @jsxImportSource hono/jsx */
/**
 * A node's pages (Consul's /ui/:dc/nodes/:name, which leads to its health checks): the tabs
 * health-checks (/v1/health/node/:n, live), service-instances (/v1/catalog/node/:n with the node's
 * checks), round-trip-time (/v1/coordinate/nodes, distances as serf computes them), lock-sessions
 * (/v1/session/node/:n, live; each with a Destroy form that posts here and redirects back, 303) and
 * metadata. A node the catalog does not know is a 404 page in words. Reads and writes go through the
 * agent's own /v1 API as the reader's token.
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { CoordinateEntry, HealthCheck, NodeServices, Session } from "../model/index.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import { DETAIL_CSS } from "./node_checks.tsx";
import { roundTripTimes } from "./node_rtt.ts";
import {
  isNodeTab, nodeHref, NodeChecksLive, NodeInstances, NodeMetadata, NodeRtt, NodeSessionsLive, NodeTabs, type NodeTab,
} from "./node_views.tsx";
import type { UiContext, UiPageModule } from "./page.ts";

const enc = encodeURIComponent;
const catalogPath = (node: string) => `/v1/catalog/node/${enc(node)}`;
const checksPath = (node: string) => `/v1/health/node/${enc(node)}`;
const sessionsPath = (node: string) => `/v1/session/node/${enc(node)}`;

/** Consul's session IDs are UUIDs; the destroy form's `id` must be one. */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The live stream of a tab (only health-checks and lock-sessions are live). */
function liveOf(base: string, dc: string, node: string, tab: NodeTab, index: number, full: string | undefined) {
  const common = `dc=${enc(dc)}&node=${enc(node)}`;
  if (tab === "health-checks") return { url: `${base}events?topic=node-checks&${common}${full ? `&full=${enc(full)}` : ""}`, index };
  if (tab === "lock-sessions") return { url: `${base}events?topic=node-sessions&${common}`, index };
  return undefined;
}

/** A page in words with `status`: a missing node, an unknown tab, a bad form field. */
async function message(ctx: UiContext, c: Context, dc: string, title: string, text: string, status: number) {
  return ctx.html(c, <Layout {...await ctx.frame(c, dc)} section="nodes" title={title}><p role="alert">{text}</p></Layout>, status);
}

/** What one tab of `node` shows, read through the API; the index is the tab's live read's. */
async function tabContent(ctx: UiContext, c: Context, dc: string, ns: NodeServices, tab: NodeTab): Promise<{ body: Child; index: number }> {
  const token = ctx.token(c);
  const { base } = ctx;
  const name = ns.Node.Node;
  switch (tab) {
    case "health-checks": {
      const r = await ctx.read<HealthCheck[]>(checksPath(name), dc, token);
      return { body: <NodeChecksLive base={base} dc={dc} node={name} checks={r.value} full={c.req.query("full")} />, index: r.index };
    }
    case "service-instances": {
      const r = await ctx.read<HealthCheck[]>(checksPath(name), dc, token);
      const services = Object.values(ns.Services).sort((a, b) => a.Service.localeCompare(b.Service) || a.ID.localeCompare(b.ID));
      return { body: <NodeInstances base={base} dc={dc} node={ns.Node} services={services} checks={r.value} />, index: r.index };
    }
    case "round-trip-time": {
      const r = await ctx.read<CoordinateEntry[]>("/v1/coordinate/nodes", dc, token);
      return { body: <NodeRtt base={base} dc={dc} node={name} rtt={roundTripTimes(r.value, name)} />, index: r.index };
    }
    case "lock-sessions": {
      const r = await ctx.read<Session[]>(sessionsPath(name), dc, token);
      const destroyed = c.req.query("destroyed");
      return {
        body: (
          <>
            {destroyed ? <p class="detail-notice" role="status" id="destroyed">{`Session ${destroyed} destroyed.`}</p> : null}
            <NodeSessionsLive base={base} dc={dc} node={name} sessions={r.value} />
          </>
        ),
        index: r.index,
      };
    }
    case "metadata":
      return { body: <NodeMetadata node={ns.Node} />, index: 0 };
  }
}

export function NodePage(props: { readonly frame: PageFrame; readonly ns: NodeServices; readonly tab: NodeTab; readonly index: number; readonly full?: string | undefined; readonly children?: Child }) {
  const { frame, ns, tab, index, full } = props;
  const { base, dc } = frame;
  return (
    <Layout {...frame} section="nodes" title={ns.Node.Node} live={liveOf(base, dc, ns.Node.Node, tab, index, full)}>
      <NodeTabs base={base} dc={dc} node={ns.Node} current={tab} />
      {props.children}
      <p><a href={`${nodeHref(base, dc, ns.Node.Node, tab)}${full ? `?full=${enc(full)}` : ""}`}>Refresh</a></p>
    </Layout>
  );
}

export const nodeDetailPages: UiPageModule = {
  routes(app, ctx) {
    const { base } = ctx;
    app.get(`${base}:dc/nodes/:name`, (c) => c.redirect(nodeHref(base, c.req.param("dc") ?? "", c.req.param("name") ?? "", "health-checks"), 302));
    app.get(`${base}:dc/nodes/:name/:tab`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      const name = c.req.param("name") ?? "";
      const tab = c.req.param("tab") ?? "";
      if (!isNodeTab(tab)) return message(ctx, c, dc, "Page not found", `A node has no page called ${tab}.`, 404);
      let ns: NodeServices | null;
      let content: { body: Child; index: number };
      try {
        ns = (await ctx.read<NodeServices | null>(catalogPath(name), dc, ctx.token(c))).value;
        if (!ns) return message(ctx, c, dc, "Node not found", `There is no node called ${name} in ${dc}.`, 404);
        content = await tabContent(ctx, c, dc, ns, tab);
      } catch (err) {
        return ctx.failure(c, dc, err, "nodes");
      }
      const full = tab === "health-checks" ? c.req.query("full") : undefined;
      return ctx.html(c, <NodePage frame={await ctx.frame(c, dc)} ns={ns} tab={tab} index={content.index} full={full}>{content.body}</NodePage>);
    });
    // A session's Destroy button: PUT /v1/session/destroy/:id, then back to the list (303).
    app.post(`${base}:dc/nodes/:name/lock-sessions/destroy`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      const name = c.req.param("name") ?? "";
      const form = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
      const id = typeof form["id"] === "string" ? form["id"] : "";
      if (!SESSION_ID.test(id)) {
        return message(ctx, c, dc, "Session not destroyed", `The field id must be a session ID (a UUID such as 0c9c4c7e-3a3b-4b8e-9f1a-2d1e5c6b7a80); got ${JSON.stringify(id)}. Nothing was changed.`, 400);
      }
      try {
        await ctx.call({ method: "PUT", path: `/v1/session/destroy/${enc(id)}`, dc, token: ctx.token(c) });
      } catch (err) {
        return ctx.failure(c, dc, err, "nodes");
      }
      return c.redirect(`${nodeHref(base, dc, name, "lock-sessions")}?destroyed=${enc(id)}`, 303);
    });
  },
  topics: {
    "node-checks": (ctx, dc, token, get) => {
      const node = get("node") ?? "";
      const full = get("full");
      return {
        read: (minIndex, maxWaitMs, signal) => ctx.read<HealthCheck[]>(checksPath(node), dc, token, { minIndex, maxWaitMs, signal }),
        render: async (checks) => String(await String(<NodeChecksLive base={ctx.base} dc={dc} node={node} checks={checks as HealthCheck[]} full={full} />)),
      };
    },
    "node-sessions": (ctx, dc, token, get) => {
      const node = get("node") ?? "";
      return {
        read: (minIndex, maxWaitMs, signal) => ctx.read<Session[]>(sessionsPath(node), dc, token, { minIndex, maxWaitMs, signal }),
        render: async (sessions) => String(await String(<NodeSessionsLive base={ctx.base} dc={dc} node={node} sessions={sessions as Session[]} />)),
      };
    },
  },
  css: DETAIL_CSS,
};
