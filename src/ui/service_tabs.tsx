/** @jsxImportSource hono/jsx */
/**
 * The tabs of a service's pages (Consul's /ui/:dc/services/:name/<tab>), as links (each tab is its own
 * page and URL, so each works without JavaScript), the current one marked with aria-current.
 */
export type ServiceTab = "instances" | "routing" | "failover" | "intentions" | "tags";

const TABS: readonly (readonly [ServiceTab, string])[] = [
  ["instances", "Instances"], ["routing", "Routing"], ["failover", "Failover"], ["intentions", "Intentions"], ["tags", "Tags"],
];

/** The URL of `service`'s `tab` in `dc`. */
export function serviceTabHref(base: string, dc: string, service: string, tab: ServiceTab): string {
  return `${base}${encodeURIComponent(dc)}/services/${encodeURIComponent(service)}/${tab}`;
}

/** The breadcrumb back to the list, then the tabs. */
export function ServiceTabs(props: { readonly base: string; readonly dc: string; readonly service: string; readonly current: ServiceTab }) {
  const { base, dc, service, current } = props;
  return (
    <>
      <nav aria-label="Breadcrumb"><a href={`${base}${encodeURIComponent(dc)}/services`}>All services</a></nav>
      <nav aria-label={`${service} pages`} class="tabs">
        <ul>
          {TABS.map(([tab, label]) => (
            <li><a href={serviceTabHref(base, dc, service, tab)} aria-current={tab === current ? "page" : undefined}>{label}</a></li>
          ))}
        </ul>
      </nav>
    </>
  );
}
