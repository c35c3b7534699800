/** @jsxImportSource hono/jsx */
/**
 * A service's Intentions tab (Consul's /ui/:dc/services/:name/intentions): the intentions whose source
 * or destination is the service (by name), in the API's precedence order, how many wildcard ("*")
 * intentions also apply to it, and a link to create one with the destination prefilled. Live.
 */
import type { Hono } from "hono";
import type { Intention } from "../model/index.ts";
import { ANY_SERVICE, IntentionsTable, intentionsOfService, readIntentions } from "./intention_parts.tsx";
import { Layout, type PageFrame } from "./layout.tsx";
import { counted } from "./list_parts.tsx";
import type { Indexed, QueryGetter, UiContext } from "./page.ts";
import { ServiceTabs } from "./service_tabs.tsx";

export function ServiceIntentionsLive(props: { readonly base: string; readonly dc: string; readonly service: string; readonly all: readonly Intention[] }) {
  const { base, dc, service, all } = props;
  const rows = intentionsOfService(all, service);
  const wildcards = all.filter((x) => !rows.includes(x) && (x.SourceName === ANY_SERVICE || x.DestinationName === ANY_SERVICE)).length;
  const into = rows.filter((x) => x.DestinationName.toLowerCase() === service.toLowerCase()).length;
  return (
    <div id="service-intentions-live">
      <p id="live-counts">{`${counted(rows.length, "intention")}: ${into} to ${service}, ${rows.length - into} from ${service}`}</p>
      <IntentionsTable base={base} dc={dc} rows={rows} caption={`Intentions with ${service} as source or destination, highest precedence first`} />
      {rows.length === 0 ? <p>{`No intention names ${service}.`}</p> : null}
      {wildcards > 0
        ? <p><a href={`${base}${encodeURIComponent(dc)}/intentions?s=${encodeURIComponent(ANY_SERVICE)}`}>{`${counted(wildcards, "intention")} with a wildcard (*)`}</a>{wildcards === 1 ? " also applies to it." : " also apply to it."}</p>
        : null}
    </div>
  );
}

export function ServiceIntentionsPage(props: { readonly frame: PageFrame; readonly service: string; readonly all: readonly Intention[]; readonly index: number }) {
  const { frame, service, all, index } = props;
  const { base, dc } = frame;
  const live = `${base}events?topic=service-intentions&dc=${encodeURIComponent(dc)}&service=${encodeURIComponent(service)}`;
  const tab = `${base}${encodeURIComponent(dc)}/services/${encodeURIComponent(service)}/intentions`;
  return (
    <Layout {...frame} section="services" title={service} live={{ url: live, index }}>
      <ServiceTabs base={base} dc={dc} service={service} current="intentions" />
      <p><a href={`${base}${encodeURIComponent(dc)}/intentions/create?destination=${encodeURIComponent(service)}`}>{`Create an intention to ${service}`}</a></p>
      <ServiceIntentionsLive base={base} dc={dc} service={service} all={all} />
      <p><a href={tab}>Refresh</a></p>
    </Layout>
  );
}

export function mountServiceIntentions(app: Hono, ctx: UiContext): void {
  app.get(`${ctx.base}:dc/services/:service/intentions`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const service = c.req.param("service") ?? "";
    let read: Indexed<Intention[]>;
    try {
      read = await readIntentions(ctx, dc, ctx.token(c));
    } catch (err) {
      return ctx.failure(c, dc, err);
    }
    return ctx.html(c, <ServiceIntentionsPage frame={await ctx.frame(c, dc)} service={service} all={read.value} index={read.index} />);
  });
}

/** The tab's live topic (`?service=`). */
export function serviceIntentionsTopic(ctx: UiContext, dc: string, token: string | undefined, get: QueryGetter) {
  const service = get("service") ?? "";
  return {
    read: (minIndex: number, maxWaitMs: number, signal: AbortSignal) => readIntentions(ctx, dc, token, { minIndex, maxWaitMs, signal }),
    render: async (all: unknown) => String(await String(<ServiceIntentionsLive base={ctx.base} dc={dc} service={service} all={all as readonly Intention[]} />)),
  };
}
