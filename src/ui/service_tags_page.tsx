/** @jsxImportSource hono/jsx */
/**
 * A service's Tags tab (Consul's /ui/:dc/services/:name/tags): each tag of the service's instances
 * once, with how many instances carry it (from /v1/catalog/service/:name), and a link to the services
 * carrying that tag. Live.
 */
import type { Hono } from "hono";
import type { ServiceNode } from "../model/index.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import { counted } from "./list_parts.tsx";
import type { BlockingWait, Indexed, QueryGetter, UiContext } from "./page.ts";
import { ServiceTabs } from "./service_tabs.tsx";

export interface TagCount {
  readonly tag: string;
  /** How many instances carry it (an instance listing a tag twice counts once). */
  readonly instances: number;
}

/** Each tag once with its instance count, in byte order of the tag. */
export function tagCounts(instances: readonly Pick<ServiceNode, "ServiceTags">[]): TagCount[] {
  const counts = new Map<string, number>();
  for (const x of instances) for (const tag of new Set(x.ServiceTags ?? [])) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([tag, n]) => ({ tag, instances: n }));
}

const catalogPath = (service: string) => `/v1/catalog/service/${encodeURIComponent(service)}`;

function readInstances(ctx: UiContext, dc: string, service: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<ServiceNode[]>> {
  return ctx.read<ServiceNode[]>(catalogPath(service), dc, token, wait);
}

export function ServiceTagsLive(props: { readonly base: string; readonly dc: string; readonly service: string; readonly instances: readonly ServiceNode[] }) {
  const { base, dc, service, instances } = props;
  const tags = tagCounts(instances);
  return (
    <div id="service-tags-live">
      <p id="live-counts">{`${counted(tags.length, "tag")} on ${counted(instances.length, "instance")}`}</p>
      <table id="service-tags">
        <caption>{`Tags of ${service} in ${dc}`}</caption>
        <thead><tr><th scope="col">Tag</th><th scope="col">Instances carrying it</th><th scope="col">Services</th></tr></thead>
        <tbody>
          {tags.map((t) => (
            <tr data-tag={t.tag}>
              <th scope="row">{t.tag}</th>
              <td>{`${t.instances} of ${instances.length}`}</td>
              <td><a href={`${base}${encodeURIComponent(dc)}/services?tag=${encodeURIComponent(t.tag)}`}>{`Services tagged ${t.tag}`}</a></td>
            </tr>
          ))}
        </tbody>
      </table>
      {tags.length === 0 ? <p>{instances.length === 0 ? `${service} has no instances in ${dc}.` : `No instance of ${service} has tags.`}</p> : null}
    </div>
  );
}

export function ServiceTagsPage(props: { readonly frame: PageFrame; readonly service: string; readonly instances: readonly ServiceNode[]; readonly index: number }) {
  const { frame, service, instances, index } = props;
  const { base, dc } = frame;
  const live = `${base}events?topic=service-tags&dc=${encodeURIComponent(dc)}&service=${encodeURIComponent(service)}`;
  return (
    <Layout {...frame} section="services" title={service} live={{ url: live, index }}>
      <ServiceTabs base={base} dc={dc} service={service} current="tags" />
      <ServiceTagsLive base={base} dc={dc} service={service} instances={instances} />
      <p><a href={`${base}${encodeURIComponent(dc)}/services/${encodeURIComponent(service)}/tags`}>Refresh</a></p>
    </Layout>
  );
}

export function mountServiceTags(app: Hono, ctx: UiContext): void {
  app.get(`${ctx.base}:dc/services/:service/tags`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const service = c.req.param("service") ?? "";
    let read: Indexed<ServiceNode[]>;
    try {
      read = await readInstances(ctx, dc, service, ctx.token(c));
    } catch (err) {
      return ctx.failure(c, dc, err);
    }
    return ctx.html(c, <ServiceTagsPage frame={await ctx.frame(c, dc)} service={service} instances={read.value} index={read.index} />);
  });
}

/** The tab's live topic (`?service=`). */
export function serviceTagsTopic(ctx: UiContext, dc: string, token: string | undefined, get: QueryGetter) {
  const service = get("service") ?? "";
  return {
    read: (minIndex: number, maxWaitMs: number, signal: AbortSignal) => readInstances(ctx, dc, service, token, { minIndex, maxWaitMs, signal }),
    render: async (instances: unknown) => String(await String(<ServiceTagsLive base={ctx.base} dc={dc} service={service} instances={instances as readonly ServiceNode[]} />)),
  };
}
