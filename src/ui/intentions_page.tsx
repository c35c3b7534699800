/** @jsxImportSource hono/jsx */
/**
 * The intentions list (Consul's /ui/:dc/intentions): one row per intention in the API's order (highest
 * precedence first) with source, destination, action in words, precedence and description; filters by
 * text and action as a GET form ("/" focuses the text filter); a link to create one; live. This module
 * also mounts the editor (intention_editor_routes.tsx) and a service's Intentions and Tags tabs.
 */
import type { Intention } from "../model/index.ts";
import { INTENTION_CLIENT } from "./intention_form.tsx";
import { changedTopic, mountIntentionEditor } from "./intention_editor_routes.tsx";
import {
  filterIntentions, INTENTIONS_CSS, readIntentions, IntentionsTable, intentionsQueryString, intentionTitle, parseIntentionsQuery, type IntentionsQuery,
} from "./intention_parts.tsx";
import { mountServiceIntentions, serviceIntentionsTopic } from "./intention_service_tab.tsx";
import { Layout, type PageFrame } from "./layout.tsx";
import { counted, Pager } from "./list_parts.tsx";
import type { Indexed, UiPageModule } from "./page.ts";
import { mountServiceTags, serviceTagsTopic } from "./service_tags_page.tsx";

export const INTENTIONS_PAGE_SIZE = 100;

/** What the live stream re-renders: the counts, the table and the pager (the filter form stays as the user left it). */
export function IntentionsLive(props: { readonly base: string; readonly dc: string; readonly all: readonly Intention[]; readonly query: IntentionsQuery }) {
  const { base, dc, all, query } = props;
  const matching = filterIntentions(all, query);
  const pages = Math.max(1, Math.ceil(matching.length / INTENTIONS_PAGE_SIZE));
  const page = Math.min(query.page, pages);
  const rows = matching.slice((page - 1) * INTENTIONS_PAGE_SIZE, page * INTENTIONS_PAGE_SIZE);
  const allow = all.filter((x) => x.Action === "allow").length;
  return (
    <div id="intentions-live">
      <p id="live-counts">{`${counted(all.length, "intention")}: ${allow} allow, ${all.length - allow} deny`}</p>
      <IntentionsTable base={base} dc={dc} rows={rows}
        caption={`Intentions in ${dc}, highest precedence first: ${matching.length} matching${pages > 1 ? `, page ${page} of ${pages}` : ""}`} />
      {matching.length === 0 ? <p>{all.length === 0 ? "There are no intentions yet: every connection follows the default policy." : "No intentions match."}</p> : null}
      <Pager page={page} pages={pages} link={(p) => listHref(base, dc, query, p)} />
    </div>
  );
}

function listHref(base: string, dc: string, q: IntentionsQuery, p = q.page): string {
  const qs = intentionsQueryString(q, p);
  return `${base}${encodeURIComponent(dc)}/intentions${qs ? `?${qs}` : ""}`;
}

/** What a redirect after a write tells the list page: `?created=<id>`, `?updated=<id>` or `?deleted=<title>`. */
export function doneMessage(get: (name: string) => string | undefined, all: readonly Intention[]): string | undefined {
  const find = (id: string | undefined) => all.find((x) => x.ID === id);
  const created = find(get("created"));
  if (created) return `Created the intention ${intentionTitle(created)} (${created.Action}).`;
  const updated = find(get("updated"));
  if (updated) return `Saved the intention ${intentionTitle(updated)} (${updated.Action}).`;
  const deleted = get("deleted");
  return deleted ? `Deleted the intention ${deleted}.` : undefined;
}

export function IntentionsPage(props: {
  readonly frame: PageFrame; readonly all: readonly Intention[]; readonly query: IntentionsQuery; readonly index: number; readonly done?: string | undefined;
}) {
  const { frame, all, query, index, done } = props;
  const { base, dc } = frame;
  const qs = intentionsQueryString(query);
  const live = `${base}events?topic=intentions&dc=${encodeURIComponent(dc)}${qs ? `&${qs}` : ""}`;
  return (
    <Layout {...frame} section="intentions" title="Intentions" live={{ url: live, index }}>
      {done ? <p role="status" id="ixn-done">{done}</p> : null}
      <p><a href={`${base}${encodeURIComponent(dc)}/intentions/create`}>Create an intention</a></p>
      <form class="filters" method="get" action={`${base}${encodeURIComponent(dc)}/intentions`} role="search">
        <label>Source, destination or description<input type="search" name="s" value={query.s} data-filter aria-keyshortcuts="/" /></label>
        <label>Action
          <select name="action">
            {([["", "Any action"], ["allow", "allow"], ["deny", "deny"]] as const).map(([v, label]) => <option value={v} selected={v === query.action}>{label}</option>)}
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <IntentionsLive base={base} dc={dc} all={all} query={query} />
      <p><a href={listHref(base, dc, query)}>Refresh</a></p>
    </Layout>
  );
}

/** The intentions list, editor and live topics, and a service's Intentions and Tags tabs. */
export const intentionsPages: UiPageModule = {
  routes(app, ctx) {
    app.get(`${ctx.base}:dc/intentions`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      let read: Indexed<Intention[]>;
      try {
        read = await readIntentions(ctx, dc, ctx.token(c));
      } catch (err) {
        return ctx.failure(c, dc, err, "intentions");
      }
      const get = (k: string) => c.req.query(k);
      return ctx.html(c, <IntentionsPage frame={await ctx.frame(c, dc)} all={read.value} query={parseIntentionsQuery(get)} index={read.index} done={doneMessage(get, read.value)} />);
    });
    mountIntentionEditor(app, ctx);
    mountServiceIntentions(app, ctx);
    mountServiceTags(app, ctx);
  },
  topics: {
    intentions: (ctx, dc, token, get) => {
      const query = parseIntentionsQuery(get);
      return {
        read: (minIndex, maxWaitMs, signal) => readIntentions(ctx, dc, token, { minIndex, maxWaitMs, signal }),
        render: async (all) => String(await String(<IntentionsLive base={ctx.base} dc={dc} all={all as readonly Intention[]} query={query} />)),
      };
    },
    "service-intentions": serviceIntentionsTopic,
    "service-tags": serviceTagsTopic,
    "intention-changed": changedTopic,
  },
  css: INTENTIONS_CSS,
  client: INTENTION_CLIENT,
};
