/** @jsxImportSource hono/jsx */
/**
 * An instance's page parts (Consul's /ui/:dc/services/:name/instances/:node/:id/<tab>): a summary, the
 * tabs as links (aria-current on the current one; upstreams and exposed paths only for a connect
 * proxy), and each tab's content: health checks (the live fragment), upstreams, exposed paths,
 * addresses and metadata. Pure.
 */
import type { CheckServiceNode } from "../model/index.ts";
import { ChecksTable, checkCounts } from "./node_checks.tsx";
import { instanceHref, nodeHref } from "./node_views.tsx";
import { instanceAddress } from "./instances_page.tsx";
import { serviceTabHref } from "./service_tabs.tsx";

export type InstanceTab = "health-checks" | "upstreams" | "exposed-paths" | "addresses" | "metadata";

const TABS: readonly (readonly [InstanceTab, string, boolean])[] = [
  ["health-checks", "Health checks", false], ["upstreams", "Upstreams", true], ["exposed-paths", "Exposed paths", true],
  ["addresses", "Addresses", false], ["metadata", "Metadata", false],
];

export function isInstanceTab(t: string): t is InstanceTab {
  return TABS.some(([id]) => id === t);
}

/** Whether the instance is a connect proxy (only those have upstreams and exposed paths). */
export function isProxy(x: CheckServiceNode): boolean {
  return x.Service.Kind === "connect-proxy";
}

/** The URL of an instance's `tab`. */
export function instanceTabHref(base: string, dc: string, x: CheckServiceNode, tab: InstanceTab): string {
  return `${instanceHref(base, dc, x.Service.Service, x.Node.Node, x.Service.ID)}/${tab}`;
}

/** The breadcrumb, what the instance is and where, then the tabs. */
export function InstanceTabs(props: { readonly base: string; readonly dc: string; readonly x: CheckServiceNode; readonly current: InstanceTab }) {
  const { base, dc, x, current } = props;
  const proxy = x.Service.Proxy?.DestinationServiceName;
  return (
    <>
      <nav aria-label="Breadcrumb">
        <a href={`${base}${encodeURIComponent(dc)}/services`}>All services</a>{" › "}
        <a href={serviceTabHref(base, dc, x.Service.Service, "instances")}>{`${x.Service.Service} instances`}</a>
      </nav>
      <dl class="detail-summary">
        <dt>Service</dt><dd>{x.Service.Service}{x.Service.Kind ? ` (${x.Service.Kind})` : ""}</dd>
        {isProxy(x) && proxy ? <><dt>Proxy for</dt><dd>{proxy}</dd></> : null}
        <dt>Node</dt><dd><a href={nodeHref(base, dc, x.Node.Node)}>{x.Node.Node}</a></dd>
        <dt>Address</dt><dd>{instanceAddress(x)}</dd>
        <dt>Tags</dt><dd>{(x.Service.Tags ?? []).length > 0 ? (x.Service.Tags ?? []).join(", ") : "none"}</dd>
      </dl>
      <nav aria-label={`${x.Service.ID} pages`} class="tabs">
        <ul>
          {TABS.filter(([, , proxyOnly]) => !proxyOnly || isProxy(x)).map(([tab, label]) => (
            <li><a href={instanceTabHref(base, dc, x, tab)} aria-current={tab === current ? "page" : undefined}>{label}</a></li>
          ))}
        </ul>
      </nav>
    </>
  );
}

/** The health-checks tab's live fragment: the node's checks and the instance's own, with output. */
export function InstanceChecksLive(props: { readonly base: string; readonly dc: string; readonly x: CheckServiceNode | undefined; readonly full?: string | undefined }) {
  const { base, dc, x, full } = props;
  if (!x) return <div id="instance-checks-live"><p id="live-counts" role="alert">This instance is no longer registered.</p></div>;
  const href = (f: string | undefined) => `${instanceTabHref(base, dc, x, "health-checks")}${f ? `?full=${encodeURIComponent(f)}` : ""}`;
  return (
    <div id="instance-checks-live">
      <p id="live-counts">{checkCounts(x.Checks)}</p>
      <ChecksTable caption={`Health checks of ${x.Service.ID} and its node ${x.Node.Node}`} checks={x.Checks} href={href} full={full} />
      {x.Checks.length === 0 ? <p>Neither this instance nor its node has health checks.</p> : null}
    </div>
  );
}

/** A not-a-proxy sentence for the proxy-only tabs. */
function NotProxy(props: { readonly x: CheckServiceNode; readonly what: string }) {
  return <p>{`${props.x.Service.ID} is not a connect proxy, so it has no ${props.what}.`}</p>;
}

/** "host:port" with an IPv6 host in brackets. */
function hostPort(host: string, port: number | undefined): string {
  const h = host.includes(":") ? `[${host}]` : host;
  return port === undefined ? h : `${h}:${port}`;
}

/** The upstreams tab: a proxy's Proxy.Upstreams. An upstream without a datacenter or bind address uses the local one and 127.0.0.1. */
export function InstanceUpstreams(props: { readonly dc: string; readonly x: CheckServiceNode }) {
  const { dc, x } = props;
  if (!isProxy(x)) return <NotProxy x={x} what="upstreams" />;
  const ups = x.Service.Proxy?.Upstreams ?? [];
  return (
    <>
      <table id="upstreams">
        <caption>{`Upstreams of ${x.Service.ID}: ${ups.length}`}</caption>
        <thead><tr><th scope="col">Destination</th><th scope="col">Datacenter</th><th scope="col">Local bind address</th><th scope="col">Type</th></tr></thead>
        <tbody>
          {ups.map((u) => (
            <tr data-upstream={u.DestinationName}>
              <th scope="row">{u.DestinationName}</th>
              <td>{u.Datacenter || `${dc} (local)`}</td>
              <td>{hostPort(u.LocalBindAddress || "127.0.0.1", u.LocalBindPort)}</td>
              <td>{u.DestinationType === "prepared_query" ? "prepared query" : "service"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {ups.length === 0 ? <p>This proxy has no upstreams.</p> : null}
    </>
  );
}

/** The exposed-paths tab: a proxy's Proxy.Expose paths. */
export function InstanceExposedPaths(props: { readonly x: CheckServiceNode }) {
  const { x } = props;
  if (!isProxy(x)) return <NotProxy x={x} what="exposed paths" />;
  const expose = x.Service.Proxy?.Expose ?? {};
  const paths = expose.Paths ?? [];
  const host = x.Service.Address || x.Node.Address;
  return (
    <>
      {expose.Checks ? <p>The HTTP and gRPC checks of the proxied service are exposed through this proxy.</p> : null}
      <table id="exposed-paths">
        <caption>{`Paths ${x.Service.ID} exposes: ${paths.length}`}</caption>
        <thead><tr><th scope="col">Path</th><th scope="col">Listens on</th><th scope="col">Local path port</th><th scope="col">Protocol</th><th scope="col">From a check</th></tr></thead>
        <tbody>
          {paths.map((p) => (
            <tr data-path={p.Path ?? ""}>
              <th scope="row">{p.Path ?? ""}</th>
              <td>{hostPort(host, p.ListenerPort)}</td>
              <td>{p.LocalPathPort ?? ""}</td>
              <td>{p.Protocol || "http"}</td>
              <td>{p.ParsedFromCheck ? "yes" : "no"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {paths.length === 0 ? <p>This proxy exposes no paths.</p> : null}
    </>
  );
}

/** The addresses tab: the service's address and tagged addresses, then its node's. */
export function InstanceAddresses(props: { readonly x: CheckServiceNode }) {
  const { x } = props;
  const s = x.Service;
  const rows: [string, string][] = [
    ["Service address", s.Address ? hostPort(s.Address, s.Port) : `none: clients use the node's address (${hostPort(x.Node.Address, s.Port)})`],
    ...Object.entries(s.TaggedAddresses ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [`Service ${k}`, hostPort(v.Address, v.Port)] as [string, string]),
    ["Node address", x.Node.Address],
    ...Object.entries(x.Node.TaggedAddresses ?? {}).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [`Node ${k}`, v] as [string, string]),
  ];
  return (
    <table id="addresses">
      <caption>{`Addresses of ${s.ID}`}</caption>
      <thead><tr><th scope="col">Address of</th><th scope="col">Address</th></tr></thead>
      <tbody>{rows.map(([k, v]) => <tr><th scope="row">{k}</th><td>{v}</td></tr>)}</tbody>
    </table>
  );
}

/** The metadata tab: the service instance's meta. */
export function InstanceMetadata(props: { readonly x: CheckServiceNode }) {
  const { x } = props;
  const meta = Object.entries(x.Service.Meta ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <table id="instance-meta">
        <caption>{`Metadata of ${x.Service.ID}`}</caption>
        <thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead>
        <tbody>{meta.map(([k, v]) => <tr data-key={k}><th scope="row">{k}</th><td>{v}</td></tr>)}</tbody>
      </table>
      {meta.length === 0 ? <p>This instance has no metadata.</p> : null}
    </>
  );
}
