/** @jsxImportSource hono/jsx */
/**
 * The services list (Consul's /ui/:dc/services): one row per service with its health in words, kind,
 * instance count and tags; filters by name, tag, health and kind as a plain GET form (works without
 * JavaScript, "/" focuses the name filter); 50 rows a page. Pure: data and query in, JSX out.
 */
import type { ServiceSummary } from "../model/index.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import type { Indexed, UiPageModule } from "./page.ts";
import { counted, HealthCell, healthParam, HealthSelect, pageParam, Pager, type Health } from "./list_parts.tsx";

export const PAGE_SIZE = 50;

export type { Health } from "./list_parts.tsx";

/** A service's health: its worst check status (critical, then warning); passing when none fails. */
export function healthOf(s: ServiceSummary): Health {
  if (s.ChecksCritical > 0) return "critical";
  if (s.ChecksWarning > 0) return "warning";
  return "passing";
}

export interface ServicesQuery {
  /** Part of the name, case-insensitive. */
  readonly s: string;
  readonly tag: string;
  readonly status: "" | Health;
  /** "" any, "typical" for plain services, or a kind ("connect-proxy", "mesh-gateway"...). */
  readonly kind: string;
  /** 1-based. */
  readonly page: number;
}

export function parseServicesQuery(get: (name: string) => string | undefined): ServicesQuery {
  return { s: get("s") ?? "", tag: get("tag") ?? "", status: healthParam(get("status")), kind: get("kind") ?? "", page: pageParam(get("page")) };
}

export function filterServices(all: readonly ServiceSummary[], q: ServicesQuery): ServiceSummary[] {
  const s = q.s.toLowerCase();
  return all.filter((x) =>
    (s === "" || x.Name.toLowerCase().includes(s)) && (q.tag === "" || x.Tags.includes(q.tag)) && (q.status === "" || healthOf(x) === q.status) &&
    (q.kind === "" || (q.kind === "typical" ? !x.Kind : x.Kind === q.kind)));
}

/** "2 passing, 1 critical" (zero counts left out; "no checks" when there are none). */
export function checksText(x: ServiceSummary): string {
  const parts = ([["passing", x.ChecksPassing], ["warning", x.ChecksWarning], ["critical", x.ChecksCritical]] as const).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`);
  const total = x.ChecksPassing + x.ChecksWarning + x.ChecksCritical;
  return total === 0 ? "no checks" : `${parts.join(", ")} of ${total} check${total === 1 ? "" : "s"}`;
}

const KINDS = [["", "Any kind"], ["typical", "Service"], ["connect-proxy", "Connect proxy"], ["mesh-gateway", "Mesh gateway"], ["ingress-gateway", "Ingress gateway"], ["terminating-gateway", "Terminating gateway"]] as const;

/** What the live stream re-renders: the counts, the table and the pager (the filter form stays as the user left it). */
export function ServicesLive(props: { readonly base: string; readonly dc: string; readonly all: readonly ServiceSummary[]; readonly query: ServicesQuery }) {
  const { base, dc, all, query } = props;
  const matching = filterServices(all, query);
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  const page = Math.min(query.page, pages);
  const rows = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const counts = { passing: 0, warning: 0, critical: 0 };
  for (const x of all) counts[healthOf(x)]++;
  const link = (p: number) => servicesLink(base, dc, query, p);
  return (
    <div id="services-live">
      <p id="live-counts">
        {`${counted(all.length, "service")}: ${counts.passing} passing, ${counts.warning} warning, ${counts.critical} critical`}
      </p>
      <table id="services">
        <caption>{`Services in ${dc}: ${matching.length} matching${pages > 1 ? `, page ${page} of ${pages}` : ""}`}</caption>
        <thead>
          <tr><th scope="col">Service</th><th scope="col">Health</th><th scope="col">Kind</th><th scope="col">Instances</th><th scope="col">Tags</th></tr>
        </thead>
        <tbody>
          {rows.map((x) => {
            return (
              <tr data-service={x.Name}>
                <th scope="row"><a href={`${base}${dc}/services/${encodeURIComponent(x.Name)}/instances`}>{x.Name}</a></th>
                <HealthCell health={healthOf(x)} detail={checksText(x)} />
                <td>{x.Kind ?? "service"}</td>
                <td>{x.InstanceCount}</td>
                <td class="tags">{x.Tags.join(", ")}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {matching.length === 0 ? <p>No services match.</p> : null}
      <Pager page={page} pages={pages} link={link} />
    </div>
  );
}

/** The query string of `q` (page `p`), without empty values: for links and the live stream. */
export function servicesQueryString(q: ServicesQuery, p = q.page): string {
  const params = new URLSearchParams();
  for (const [k, v] of [["s", q.s], ["tag", q.tag], ["status", q.status], ["kind", q.kind]] as const) if (v) params.set(k, v);
  if (p > 1) params.set("page", String(p));
  return params.toString();
}

function servicesLink(base: string, dc: string, q: ServicesQuery, p: number): string {
  const qs = servicesQueryString(q, p);
  return `${base}${dc}/services${qs ? `?${qs}` : ""}`;
}

export function ServicesPage(props: {
  readonly frame: PageFrame; readonly all: readonly ServiceSummary[]; readonly query: ServicesQuery; readonly index: number;
}) {
  const { frame, all, query, index } = props;
  const { base, dc } = frame;
  const live = `${base}events?topic=services&dc=${encodeURIComponent(dc)}${servicesQueryString(query) ? `&${servicesQueryString(query)}` : ""}`;
  return (
    <Layout {...frame} section="services" title="Services" live={{ url: live, index }}>
      <form class="filters" method="get" action={`${base}${dc}/services`} role="search">
        <label>Name<input type="search" name="s" value={query.s} data-filter aria-keyshortcuts="/" /></label>
        <label>Tag<input type="text" name="tag" value={query.tag} /></label>
        <HealthSelect value={query.status} />
        <label>Kind
          <select name="kind">{KINDS.map(([v, label]) => <option value={v} selected={v === query.kind}>{label}</option>)}</select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <ServicesLive base={base} dc={dc} all={all} query={query} />
      <p><a href={servicesLink(base, dc, query, query.page)}>Refresh</a></p>
    </Layout>
  );
}

/** The services list and its live topic. */
export const servicesPages: UiPageModule = {
  routes(app, ctx) {
    app.get(`${ctx.base}:dc/services`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      let read: Indexed<ServiceSummary[]>;
      try {
        read = await ctx.read<ServiceSummary[]>("/v1/internal/ui/services", dc, ctx.token(c));
      } catch (err) {
        return ctx.failure(c, dc, err);
      }
      return ctx.html(c, <ServicesPage frame={await ctx.frame(c, dc)} all={read.value} query={parseServicesQuery((k) => c.req.query(k))} index={read.index} />);
    });
  },
  topics: {
    services: (ctx, dc, token, get) => {
      const query = parseServicesQuery(get);
      return {
        read: (minIndex, maxWaitMs, signal) => ctx.read<ServiceSummary[]>("/v1/internal/ui/services", dc, token, { minIndex, maxWaitMs, signal }),
        render: async (all) => String(await String(<ServicesLive base={ctx.base} dc={dc} all={all as readonly ServiceSummary[]} query={query} />)),
      };
    },
  },
};
