/** @jsxImportSource hono/jsx */
/**
 * A service's instances (Consul's /ui/:dc/services/:name/instances): one row per instance with its
 * node, address and port, its health in words (the worst of the node's and the instance's checks, as
 * the health endpoints count them), its checks by name and status, and its tags; the instance links to
 * its own page, the node to the node's. Pure.
 */
import type { CheckServiceNode } from "../model/index.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import type { Indexed, UiPageModule } from "./page.ts";
import { ServiceTabs } from "./service_tabs.tsx";
import { counted, HealthCell, type Health } from "./list_parts.tsx";
import { instanceHref, nodeHref } from "./node_views.tsx";

/** The worst status of an instance's checks (node and service); passing when it has none. */
export function instanceHealth(x: CheckServiceNode): Health {
  if (x.Checks.some((c) => c.Status === "critical")) return "critical";
  if (x.Checks.some((c) => c.Status === "warning")) return "warning";
  return "passing";
}

/** The address a client uses: the service's own, else its node's. */
export function instanceAddress(x: CheckServiceNode): string {
  const host = x.Service.Address || x.Node.Address;
  return `${host.includes(":") ? `[${host}]` : host}:${x.Service.Port}`;
}

export function InstancesLive(props: { readonly base: string; readonly dc: string; readonly service: string; readonly all: readonly CheckServiceNode[] }) {
  const { base, dc, service, all } = props;
  const counts = { passing: 0, warning: 0, critical: 0 };
  for (const x of all) counts[instanceHealth(x)]++;
  return (
    <div id="instances-live">
      <p id="live-counts">{`${counted(all.length, "instance")}: ${counts.passing} passing, ${counts.warning} warning, ${counts.critical} critical`}</p>
      <table id="instances">
        <caption>{`Instances of ${service} in ${dc}`}</caption>
        <thead><tr><th scope="col">Instance</th><th scope="col">Health</th><th scope="col">Node</th><th scope="col">Address</th><th scope="col">Checks</th><th scope="col">Tags</th></tr></thead>
        <tbody>
          {all.map((x) => (
            <tr data-instance={`${x.Node.Node}/${x.Service.ID}`}>
              <th scope="row"><a href={instanceHref(base, dc, service, x.Node.Node, x.Service.ID)}>{x.Service.ID}</a></th>
              <HealthCell health={instanceHealth(x)} />
              <td><a href={nodeHref(base, dc, x.Node.Node)}>{x.Node.Node}</a></td>
              <td>{instanceAddress(x)}</td>
              <td><ul class="checks">{x.Checks.map((c) => <li>{`${c.Name || c.CheckID}: ${c.Status}`}</li>)}</ul></td>
              <td class="tags">{(x.Service.Tags ?? []).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {all.length === 0 ? <p>This service has no instances in {dc}.</p> : null}
    </div>
  );
}

export function InstancesPage(props: { readonly frame: PageFrame; readonly service: string; readonly all: readonly CheckServiceNode[]; readonly index: number }) {
  const { frame, service, all, index } = props;
  const { base, dc } = frame;
  const live = `${base}events?topic=instances&dc=${encodeURIComponent(dc)}&service=${encodeURIComponent(service)}`;
  return (
    <Layout {...frame} section="services" title={service} live={{ url: live, index }}>
      <ServiceTabs base={base} dc={dc} service={service} current="instances" />
      <InstancesLive base={base} dc={dc} service={service} all={all} />
      <p><a href={`${base}${dc}/services/${encodeURIComponent(service)}/instances`}>Refresh</a></p>
    </Layout>
  );
}

/** `/v1/health/service/:name`: every instance with its checks. */
const instancesPath = (service: string) => `/v1/health/service/${encodeURIComponent(service)}`;

/** A service's instances (and Consul's bare service URL, which leads there) with its live topic. */
export const instancesPages: UiPageModule = {
  routes(app, ctx) {
    const { base } = ctx;
    app.get(`${base}:dc/services/:service`, (c) => c.redirect(`${base}${c.req.param("dc")}/services/${encodeURIComponent(c.req.param("service") ?? "")}/instances`, 302));
    app.get(`${base}:dc/services/:service/instances`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      const service = c.req.param("service") ?? "";
      let read: Indexed<CheckServiceNode[]>;
      try {
        read = await ctx.read<CheckServiceNode[]>(instancesPath(service), dc, ctx.token(c));
      } catch (err) {
        return ctx.failure(c, dc, err);
      }
      return ctx.html(c, <InstancesPage frame={await ctx.frame(c, dc)} service={service} all={read.value} index={read.index} />);
    });
  },
  topics: {
    instances: (ctx, dc, token, get) => {
      const service = get("service") ?? "";
      return {
        read: (minIndex, maxWaitMs, signal) => ctx.read<CheckServiceNode[]>(instancesPath(service), dc, token, { minIndex, maxWaitMs, signal }),
        render: async (all) => String(await String(<InstancesLive base={ctx.base} dc={dc} service={service} all={all as readonly CheckServiceNode[]} />)),
      };
    },
  },
};
