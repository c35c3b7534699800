/** @jsxImportSource hono/jsx */
/**
 * The node page's parts (Consul's /ui/:dc/nodes/:name/<tab>): the tabs as links (aria-current on the
 * current one), and each tab's content: health checks and lock sessions (the two live fragments,
 * swapped in by their element ids), service instances, round-trip times and metadata. Pure.
 */
import type { HealthCheck, Node, NodeService, Session } from "../model/index.ts";
import { counted, HealthCell, type Health } from "./list_parts.tsx";
import { ChecksTable, checkCounts } from "./node_checks.tsx";
import { formatMs, type RoundTripTimes } from "./node_rtt.ts";

export type NodeTab = "health-checks" | "service-instances" | "round-trip-time" | "lock-sessions" | "metadata";

export const NODE_TABS: readonly (readonly [NodeTab, string])[] = [
  ["health-checks", "Health checks"], ["service-instances", "Service instances"], ["round-trip-time", "Round-trip time"],
  ["lock-sessions", "Lock sessions"], ["metadata", "Metadata"],
];

export function isNodeTab(t: string): t is NodeTab {
  return NODE_TABS.some(([id]) => id === t);
}

/** The URL of `node`'s page in `dc` (its `tab`, else the node's own URL, which leads to the checks). */
export function nodeHref(base: string, dc: string, node: string, tab?: NodeTab): string {
  return `${base}${encodeURIComponent(dc)}/nodes/${encodeURIComponent(node)}${tab ? `/${tab}` : ""}`;
}

/** The URL of an instance's page (instance_detail_page.tsx). */
export function instanceHref(base: string, dc: string, service: string, node: string, id: string): string {
  return `${base}${encodeURIComponent(dc)}/services/${encodeURIComponent(service)}/instances/${encodeURIComponent(node)}/${encodeURIComponent(id)}`;
}

/** The breadcrumb back to the list, the node's address, then the tabs. */
export function NodeTabs(props: { readonly base: string; readonly dc: string; readonly node: Node; readonly current: NodeTab }) {
  const { base, dc, node, current } = props;
  return (
    <>
      <nav aria-label="Breadcrumb"><a href={`${base}${encodeURIComponent(dc)}/nodes`}>All nodes</a></nav>
      <dl class="detail-summary">
        <dt>Address</dt><dd>{node.Address}</dd>
        {node.ID ? <><dt>Node ID</dt><dd>{node.ID}</dd></> : null}
      </dl>
      <nav aria-label={`${node.Node} pages`} class="tabs">
        <ul>
          {NODE_TABS.map(([tab, label]) => (
            <li><a href={nodeHref(base, dc, node.Node, tab)} aria-current={tab === current ? "page" : undefined}>{label}</a></li>
          ))}
        </ul>
      </nav>
    </>
  );
}

/** The health-checks tab's live fragment: every check on the node (its own and its services'). */
export function NodeChecksLive(props: { readonly base: string; readonly dc: string; readonly node: string; readonly checks: readonly HealthCheck[]; readonly full?: string | undefined }) {
  const { base, dc, node, checks, full } = props;
  const href = (f: string | undefined) => `${nodeHref(base, dc, node, "health-checks")}${f ? `?full=${encodeURIComponent(f)}` : ""}`;
  return (
    <div id="node-checks-live">
      <p id="live-counts">{checkCounts(checks)}</p>
      <ChecksTable caption={`Health checks on node ${node}`} checks={checks} href={href} full={full} />
      {checks.length === 0 ? <p>This node has no health checks.</p> : null}
    </div>
  );
}

/** The worst of `checks`' statuses; passing when there are none. */
export function worstHealth(checks: readonly HealthCheck[]): Health {
  if (checks.some((c) => c.Status === "critical")) return "critical";
  if (checks.some((c) => c.Status === "warning")) return "warning";
  return "passing";
}

/** The service-instances tab: each instance on the node with its health (the node's checks and its own). */
export function NodeInstances(props: { readonly base: string; readonly dc: string; readonly node: Node; readonly services: readonly NodeService[]; readonly checks: readonly HealthCheck[] }) {
  const { base, dc, node, services, checks } = props;
  const nodeChecks = checks.filter((c) => !c.ServiceID);
  return (
    <>
      <table id="node-services">
        <caption>{`Service instances on node ${node.Node}: ${services.length}`}</caption>
        <thead><tr><th scope="col">Instance</th><th scope="col">Service</th><th scope="col">Health</th><th scope="col">Address</th><th scope="col">Tags</th></tr></thead>
        <tbody>
          {services.map((s) => {
            const host = s.Address || node.Address;
            return (
              <tr data-instance={s.ID}>
                <th scope="row"><a href={instanceHref(base, dc, s.Service, node.Node, s.ID)}>{s.ID}</a></th>
                <td>{s.Service}{s.Kind ? ` (${s.Kind})` : ""}</td>
                <HealthCell health={worstHealth([...nodeChecks, ...checks.filter((c) => c.ServiceID === s.ID)])} />
                <td>{`${host.includes(":") ? `[${host}]` : host}:${s.Port}`}</td>
                <td class="tags">{(s.Tags ?? []).join(", ")}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {services.length === 0 ? <p>No service instances are registered on this node.</p> : null}
    </>
  );
}

/** The round-trip-time tab: estimated RTTs to the other nodes, nearest first, with their min, median and max. */
export function NodeRtt(props: { readonly base: string; readonly dc: string; readonly node: string; readonly rtt: RoundTripTimes }) {
  const { base, dc, node, rtt } = props;
  if (rtt.kind === "no-coordinate") {
    return <p id="rtt-none">{`Node ${node} has no coordinate yet, so its round-trip times cannot be estimated. Coordinates appear once the agents have pinged each other.`}</p>;
  }
  if (rtt.rows.length === 0) return <p id="rtt-none">{`No other node in ${node}'s network segment has a coordinate yet.`}</p>;
  return (
    <>
      {rtt.stats
        ? (
          <dl class="detail-summary" id="rtt-stats">
            <dt>Minimum</dt><dd>{formatMs(rtt.stats.min)}</dd>
            <dt>Median</dt><dd>{formatMs(rtt.stats.median)}</dd>
            <dt>Maximum</dt><dd>{formatMs(rtt.stats.max)}</dd>
          </dl>
        )
        : null}
      <table id="rtt">
        <caption>{`Estimated round-trip times from ${node} to ${counted(rtt.rows.length, "other node")}, nearest first`}</caption>
        <thead><tr><th scope="col">Node</th><th scope="col">Estimated round-trip time</th></tr></thead>
        <tbody>
          {rtt.rows.map((r) => (
            <tr data-node={r.node}><th scope="row"><a href={nodeHref(base, dc, r.node)}>{r.node}</a></th><td>{formatMs(r.ms)}</td></tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** A lock delay in nanoseconds in words ("15 s"). */
export function lockDelayText(ns: number): string {
  return `${+(ns / 1e9).toFixed(3)} s`;
}

/** The lock-sessions tab's live fragment: each session with a Destroy button (a POST form). */
export function NodeSessionsLive(props: { readonly base: string; readonly dc: string; readonly node: string; readonly sessions: readonly Session[] }) {
  const { base, dc, node, sessions } = props;
  const action = `${nodeHref(base, dc, node, "lock-sessions")}/destroy`;
  return (
    <div id="node-sessions-live">
      <p id="live-counts">{`${counted(sessions.length, "lock session")} on node ${node}`}</p>
      <table id="sessions">
        <caption>{`Lock sessions on node ${node}`}</caption>
        <thead><tr><th scope="col">Session</th><th scope="col">ID</th><th scope="col">Behavior</th><th scope="col">TTL</th><th scope="col">Lock delay</th><th scope="col">Checks</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          {sessions.map((s) => {
            const label = s.Name || s.ID;
            const checks = [...s.NodeChecks, ...(s.ServiceChecks ?? []).map((c) => c.ID)];
            return (
              <tr data-session={s.ID}>
                <th scope="row">{s.Name || <span class="detail-muted">no name</span>}</th>
                <td><code>{s.ID}</code></td>
                <td>{s.Behavior}</td>
                <td>{s.TTL || "none"}</td>
                <td>{lockDelayText(s.LockDelay)}</td>
                <td>{checks.length > 0 ? checks.join(", ") : "none"}</td>
                <td>
                  <form class="detail-inline" method="post" action={action}>
                    <input type="hidden" name="id" value={s.ID} />
                    <button type="submit" id={`destroy-${s.ID}`}>Destroy<span class="detail-vh">{` session ${label}`}</span></button>
                  </form>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {sessions.length === 0 ? <p>This node has no lock sessions.</p> : null}
    </div>
  );
}

/** The metadata tab: the node's meta and its tagged addresses. */
export function NodeMetadata(props: { readonly node: Node }) {
  const { node } = props;
  const meta = Object.entries(node.Meta ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const tagged = Object.entries(node.TaggedAddresses ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return (
    <>
      <table id="node-meta">
        <caption>{`Metadata of node ${node.Node}`}</caption>
        <thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead>
        <tbody>{meta.map(([k, v]) => <tr data-key={k}><th scope="row">{k}</th><td>{v}</td></tr>)}</tbody>
      </table>
      {meta.length === 0 ? <p>This node has no metadata.</p> : null}
      <table id="node-addresses">
        <caption>{`Tagged addresses of node ${node.Node}`}</caption>
        <thead><tr><th scope="col">Tag</th><th scope="col">Address</th></tr></thead>
        <tbody>{tagged.map(([k, v]) => <tr data-tag={k}><th scope="row">{k}</th><td>{v}</td></tr>)}</tbody>
      </table>
      {tagged.length === 0 ? <p>This node has no tagged addresses.</p> : null}
    </>
  );
}
