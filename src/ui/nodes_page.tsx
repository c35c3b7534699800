/** @jsxImportSource hono/jsx */
/**
 * The nodes list (Consul's /ui/:dc/nodes): one row per node with its health in words (the worst of
 * its own checks, as Consul's UI shows it), address, service instances and checks, its name linking
 * to the node's page and the Raft leader's node marked "leader"; filters by name and health as a GET
 * form; 50 rows a page. Pure: data and query in, JSX out.
 */
import { CONSUL_SERVICE, type HealthCheck, type NodeInfo } from "../model/index.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import { nodeHref } from "./node_views.tsx";
import type { BlockingWait, Indexed, UiContext, UiPageModule } from "./page.ts";
import { counted, HealthCell, healthParam, HealthSelect, pageParam, Pager, type Health } from "./list_parts.tsx";
import { PAGE_SIZE } from "./services_page.tsx";

export interface NodesQuery {
  readonly s: string;
  readonly status: "" | Health;
  readonly page: number;
}

export function parseNodesQuery(get: (name: string) => string | undefined): NodesQuery {
  return { s: get("s") ?? "", status: healthParam(get("status")), page: pageParam(get("page")) };
}

/** The worst status among the node's own checks (those of no service); passing when there are none. */
export function nodeHealth(n: NodeInfo): Health {
  const own = n.Checks.filter((c: HealthCheck) => !c.ServiceID);
  if (own.some((c) => c.Status === "critical")) return "critical";
  if (own.some((c) => c.Status === "warning")) return "warning";
  return "passing";
}

/**
 * The name of the Raft leader's node: `leader` is /v1/status/leader's "host:port" (the leader's server
 * RPC address), and a server's node carries the "consul" service on that port at the node's address.
 * Consul's UI matches the address alone; that is the fallback when exactly one node has the address
 * but none registered the port yet. Undefined without a leader ("") or a match.
 */
export function leaderNode(leader: string, nodes: readonly NodeInfo[]): string | undefined {
  const colon = leader.lastIndexOf(":");
  if (colon <= 0) return undefined;
  const host = leader.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const port = Number(leader.slice(colon + 1));
  const atHost = nodes.filter((n) => n.Address === host);
  const exact = atHost.find((n) => n.Services.some((s) => s.Service === CONSUL_SERVICE && s.Port === port));
  return exact?.Node ?? (atHost.length === 1 ? atHost[0]!.Node : undefined);
}

/** The nodes and the leader's address ("" when unknown: no leader, or the read failed). */
export async function readNodes(ctx: UiContext, dc: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<{ nodes: NodeInfo[]; leader: string }>> {
  const nodes = await ctx.read<NodeInfo[]>("/v1/internal/ui/nodes", dc, token, wait);
  const leader = await ctx.read<string>("/v1/status/leader", dc, token).then((r) => (typeof r.value === "string" ? r.value : ""), () => "");
  return { value: { nodes: nodes.value, leader }, index: nodes.index };
}

export function nodesQueryString(q: NodesQuery, p = q.page): string {
  const params = new URLSearchParams();
  if (q.s) params.set("s", q.s);
  if (q.status) params.set("status", q.status);
  if (p > 1) params.set("page", String(p));
  return params.toString();
}

export function NodesLive(props: { readonly base: string; readonly dc: string; readonly all: readonly NodeInfo[]; readonly query: NodesQuery; readonly leader?: string }) {
  const { base, dc, all, query } = props;
  const leader = leaderNode(props.leader ?? "", all);
  const s = query.s.toLowerCase();
  const matching = all.filter((n) => (s === "" || n.Node.toLowerCase().includes(s)) && (query.status === "" || nodeHealth(n) === query.status));
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  const page = Math.min(query.page, pages);
  const counts = { passing: 0, warning: 0, critical: 0 };
  for (const n of all) counts[nodeHealth(n)]++;
  const link = (p: number) => `${base}${dc}/nodes${nodesQueryString(query, p) ? `?${nodesQueryString(query, p)}` : ""}`;
  return (
    <div id="nodes-live">
      <p id="live-counts">{`${counted(all.length, "node")}: ${counts.passing} passing, ${counts.warning} warning, ${counts.critical} critical`}</p>
      <table id="nodes">
        <caption>{`Nodes in ${dc}: ${matching.length} matching${pages > 1 ? `, page ${page} of ${pages}` : ""}`}</caption>
        <thead><tr><th scope="col">Node</th><th scope="col">Health</th><th scope="col">Address</th><th scope="col">Service instances</th><th scope="col">Checks</th></tr></thead>
        <tbody>
          {matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((n) => {
            const isLeader = n.Node === leader;
            return (
              <tr data-node={n.Node} data-leader={isLeader ? "" : undefined}>
                <th scope="row"><a href={nodeHref(base, dc, n.Node)}>{n.Node}</a></th>
                <HealthCell health={nodeHealth(n)} />
                <td>{n.Address}{isLeader ? <> <span class="node-leader">leader</span></> : null}</td>
                <td>{n.Services.length}</td>
                <td>{n.Checks.length}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {matching.length === 0 ? <p>No nodes match.</p> : null}
      <Pager page={page} pages={pages} link={link} />
    </div>
  );
}

export function NodesPage(props: { readonly frame: PageFrame; readonly all: readonly NodeInfo[]; readonly query: NodesQuery; readonly index: number; readonly leader?: string }) {
  const { frame, all, query, index, leader } = props;
  const { base, dc } = frame;
  const qs = nodesQueryString(query);
  return (
    <Layout {...frame} section="nodes" title="Nodes" live={{ url: `${base}events?topic=nodes&dc=${encodeURIComponent(dc)}${qs ? `&${qs}` : ""}`, index }}>
      <form class="filters" method="get" action={`${base}${dc}/nodes`} role="search">
        <label>Name<input type="search" name="s" value={query.s} data-filter aria-keyshortcuts="/" /></label>
        <HealthSelect value={query.status} />
        <button type="submit">Filter</button>
      </form>
      <NodesLive base={base} dc={dc} all={all} query={query} leader={leader ?? ""} />
      <p><a href={`${base}${dc}/nodes${qs ? `?${qs}` : ""}`}>Refresh</a></p>
    </Layout>
  );
}

/** The nodes list and its live topic. */
export const nodesPages: UiPageModule = {
  routes(app, ctx) {
    app.get(`${ctx.base}:dc/nodes`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      let read: Indexed<{ nodes: NodeInfo[]; leader: string }>;
      try {
        read = await readNodes(ctx, dc, ctx.token(c));
      } catch (err) {
        return ctx.failure(c, dc, err, "nodes");
      }
      const { nodes, leader } = read.value;
      return ctx.html(c, <NodesPage frame={await ctx.frame(c, dc)} all={nodes} leader={leader} query={parseNodesQuery((k) => c.req.query(k))} index={read.index} />);
    });
  },
  css: `.node-leader{display:inline-block;margin-left:.5em;padding:0 .4em;border:1px solid var(--line);border-radius:4px;font-size:.85em;font-weight:600}`,
  topics: {
    nodes: (ctx, dc, token, get) => {
      const query = parseNodesQuery(get);
      return {
        read: (minIndex, maxWaitMs, signal) => readNodes(ctx, dc, token, { minIndex, maxWaitMs, signal }),
        render: async (v) => {
          const { nodes, leader } = v as { nodes: NodeInfo[]; leader: string };
          return String(await String(<NodesLive base={ctx.base} dc={dc} all={nodes} query={query} leader={leader} />));
        },
      };
    },
  },
};
