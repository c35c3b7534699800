/** @jsxImportSource hono/jsx */
/**
 * A service instance's pages (Consul's /ui/:dc/services/:name/instances/:node/:id, which leads to its
 * health checks): the tabs health-checks (the node's and the instance's checks with their output, over
 * 4 KB truncated with a "Show all" link; live), upstreams and exposed-paths (a connect proxy's),
 * addresses and metadata. Read from /v1/health/service/:name as the reader's token; an instance that
 * is not there is a 404 page in words.
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { CheckServiceNode } from "../model/index.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import {
  InstanceAddresses, InstanceChecksLive, InstanceExposedPaths, InstanceMetadata, InstanceTabs, InstanceUpstreams, instanceTabHref, isInstanceTab,
  type InstanceTab,
} from "./instance_views.tsx";
import { instanceHref } from "./node_views.tsx";
import type { UiContext, UiPageModule } from "./page.ts";

const enc = encodeURIComponent;
const instancesPath = (service: string) => `/v1/health/service/${enc(service)}`;

/** The instance `id` of `service` on `node` among the service's instances. */
export function findInstance(all: readonly CheckServiceNode[], node: string, id: string): CheckServiceNode | undefined {
  return all.find((x) => x.Node.Node === node && x.Service.ID === id);
}

/** What one tab shows. */
function tabBody(base: string, dc: string, x: CheckServiceNode, tab: InstanceTab, full: string | undefined): Child {
  switch (tab) {
    case "health-checks": return <InstanceChecksLive base={base} dc={dc} x={x} full={full} />;
    case "upstreams": return <InstanceUpstreams dc={dc} x={x} />;
    case "exposed-paths": return <InstanceExposedPaths x={x} />;
    case "addresses": return <InstanceAddresses x={x} />;
    case "metadata": return <InstanceMetadata x={x} />;
  }
}

export function InstancePage(props: { readonly frame: PageFrame; readonly x: CheckServiceNode; readonly tab: InstanceTab; readonly index: number; readonly full?: string | undefined }) {
  const { frame, x, tab, index, full } = props;
  const { base, dc } = frame;
  const q = `dc=${enc(dc)}&service=${enc(x.Service.Service)}&node=${enc(x.Node.Node)}&id=${enc(x.Service.ID)}${full ? `&full=${enc(full)}` : ""}`;
  const live = tab === "health-checks" ? { url: `${base}events?topic=instance-checks&${q}`, index } : undefined;
  return (
    <Layout {...frame} section="services" title={x.Service.ID} live={live}>
      <InstanceTabs base={base} dc={dc} x={x} current={tab} />
      {tabBody(base, dc, x, tab, full)}
      <p><a href={`${instanceTabHref(base, dc, x, tab)}${full ? `?full=${enc(full)}` : ""}`}>Refresh</a></p>
    </Layout>
  );
}

/** A page in words with `status` (a missing instance, an unknown tab). */
async function message(ctx: UiContext, c: Context, dc: string, title: string, text: string, status: number) {
  return ctx.html(c, <Layout {...await ctx.frame(c, dc)} section="services" title={title}><p role="alert">{text}</p></Layout>, status);
}

export const instanceDetailPages: UiPageModule = {
  routes(app, ctx) {
    const { base } = ctx;
    const path = `${base}:dc/services/:service/instances/:node/:id`;
    app.get(path, (c) => c.redirect(`${instanceHref(base, c.req.param("dc") ?? "", c.req.param("service") ?? "", c.req.param("node") ?? "", c.req.param("id") ?? "")}/health-checks`, 302));
    app.get(`${path}/:tab`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      const service = c.req.param("service") ?? "";
      const node = c.req.param("node") ?? "";
      const id = c.req.param("id") ?? "";
      const tab = c.req.param("tab") ?? "";
      if (!isInstanceTab(tab)) return message(ctx, c, dc, "Page not found", `A service instance has no page called ${tab}.`, 404);
      let read;
      try {
        read = await ctx.read<CheckServiceNode[]>(instancesPath(service), dc, ctx.token(c));
      } catch (err) {
        return ctx.failure(c, dc, err);
      }
      const x = findInstance(read.value, node, id);
      if (!x) return message(ctx, c, dc, "Instance not found", `There is no instance ${id} of service ${service} on node ${node} in ${dc}.`, 404);
      const full = tab === "health-checks" ? c.req.query("full") : undefined;
      return ctx.html(c, <InstancePage frame={await ctx.frame(c, dc)} x={x} tab={tab} index={read.index} full={full} />);
    });
  },
  topics: {
    "instance-checks": (ctx, dc, token, get) => {
      const service = get("service") ?? "";
      const node = get("node") ?? "";
      const id = get("id") ?? "";
      const full = get("full");
      return {
        read: (minIndex, maxWaitMs, signal) => ctx.read<CheckServiceNode[]>(instancesPath(service), dc, token, { minIndex, maxWaitMs, signal }),
        render: async (all) => String(await String(<InstanceChecksLive base={ctx.base} dc={dc} x={findInstance(all as CheckServiceNode[], node, id)} full={full} />)),
      };
    },
  },
};
