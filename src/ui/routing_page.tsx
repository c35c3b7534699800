/** @jsxImportSource hono/jsx */
/**
 * A service's Routing tab (Consul's /ui/:dc/services/:name/routing): its compiled discovery chain
 * (GET /v1/discovery-chain/:name) as a graph (routers, splitters, resolvers, targets, left to right)
 * with an equivalent table, updated live as config entries change. `?node=<id>` (a chain node's key
 * in the chain's Nodes, or "target:<target ID>") adds, at #chain-entry, that node's fields and the
 * config entry behind it (GET /v1/config/<kind>/<name>); that section never refreshes by itself.
 * A `node` naming nothing in the chain is answered 400 (with the chain, and the reason in words).
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { CompiledDiscoveryChain } from "../connect/index.ts";
import { chainGraph, isDefaultChain, type ChainGraph } from "./chain_graph.ts";
import { CHAIN_CSS, ChainView } from "./chain_view.tsx";
import { Layout, type PageFrame } from "./layout.tsx";
import { counted } from "./list_parts.tsx";
import { ApiError, type UiContext, type UiPageModule } from "./page.ts";
import { CHAIN_ENTRY_CSS, ChainEntry, entryRefOf, UnknownNode, type EntryRead } from "./routing_entry.tsx";
import { serviceTabHref, ServiceTabs } from "./service_tabs.tsx";

/** `/v1/discovery-chain/:name`: `{ Chain }`. */
const chainPath = (service: string) => `/v1/discovery-chain/${encodeURIComponent(service)}`;

/** The routing page's URL, showing node `id` when given. */
export function routingHref(base: string, dc: string, service: string, id?: string): string {
  const page = serviceTabHref(base, dc, service, "routing");
  return id === undefined ? page : `${page}?node=${encodeURIComponent(id)}#chain-entry`;
}

/** The live part: the counts (the polite status line's words), the graph and the tables. */
export function RoutingLive(props: { readonly base: string; readonly dc: string; readonly service: string; readonly chain: CompiledDiscoveryChain; readonly selected?: string | undefined }) {
  const { base, dc, service, chain, selected } = props;
  const graph: ChainGraph = chainGraph(chain);
  const targets = graph.nodes.filter((n) => n.kind === "target").length;
  return (
    <div id="routing-live">
      <p id="live-counts">{`${counted(graph.nodes.length - targets, "chain node")}, ${counted(targets, "target")}, ${counted(graph.edges.length, "edge")}; protocol ${chain.Protocol}`}</p>
      {isDefaultChain(chain) ? (
        <p id="chain-default">{`${service} has no routing config entries in ${dc}: the default chain sends every request to ${service} in ${chain.Datacenter}.`}</p>
      ) : null}
      <ChainView graph={graph} caption={`Discovery chain of ${service} in ${dc}`} nodeHref={(id) => routingHref(base, dc, service, id)} selected={selected} />
    </div>
  );
}

export function RoutingPage(props: { readonly frame: PageFrame; readonly service: string; readonly chain: CompiledDiscoveryChain; readonly index: number; readonly selected?: string | undefined; readonly entry?: Child }) {
  const { frame, service, chain, index, selected } = props;
  const { base, dc } = frame;
  const params = new URLSearchParams({ topic: "routing", dc, service });
  if (selected !== undefined) params.set("node", selected);
  return (
    <Layout {...frame} section="services" title={service} live={{ url: `${base}events?${params}`, index }}>
      <ServiceTabs base={base} dc={dc} service={service} current="routing" />
      <RoutingLive base={base} dc={dc} service={service} chain={chain} selected={selected} />
      {props.entry ?? <p id="chain-entry-hint">Choose a node in the graph or in the table to see its configuration.</p>}
      <p><a href={routingHref(base, dc, service)}>Refresh</a></p>
    </Layout>
  );
}

/** Reads the config entry `kind`/`name`: found, absent (404) or failed, never throwing. */
async function readEntry(ctx: UiContext, c: Context, dc: string, kind: string, name: string): Promise<EntryRead> {
  try {
    const r = await ctx.read<unknown>(`/v1/config/${kind}/${encodeURIComponent(name)}`, dc, ctx.token(c));
    return { state: "found", entry: r.value };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return { state: "absent" };
    const message = (err as Error)?.message ?? String(err);
    return { state: "failed", status: err instanceof ApiError ? err.status : 500, message };
  }
}

export const routingPages: UiPageModule = {
  routes(app, ctx) {
    app.get(`${ctx.base}:dc/services/:service/routing`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      const service = c.req.param("service") ?? "";
      let chain: CompiledDiscoveryChain;
      let index: number;
      try {
        const read = await ctx.read<{ Chain: CompiledDiscoveryChain }>(chainPath(service), dc, ctx.token(c));
        chain = read.value.Chain;
        index = read.index;
      } catch (err) {
        return ctx.failure(c, dc, err);
      }
      const frame = await ctx.frame(c, dc);
      const wanted = c.req.query("node");
      if (wanted === undefined) return ctx.html(c, <RoutingPage frame={frame} service={service} chain={chain} index={index} />);
      const node = chainGraph(chain).nodes.find((n) => n.id === wanted);
      if (!node) return ctx.html(c, <RoutingPage frame={frame} service={service} chain={chain} index={index} entry={<UnknownNode id={wanted} service={service} />} />, 400);
      const ref = entryRefOf(chain, node);
      const read = ref ? await readEntry(ctx, c, dc, ref.kind, ref.name) : undefined;
      return ctx.html(c, <RoutingPage frame={frame} service={service} chain={chain} index={index} selected={node.id} entry={<ChainEntry chain={chain} node={node} ref={ref} read={read} />} />);
    });
  },
  topics: {
    routing: (ctx, dc, token, get) => {
      const service = get("service") ?? "";
      if (service === "") return undefined;
      const selected = get("node");
      return {
        read: async (minIndex, maxWaitMs, signal) => {
          const r = await ctx.read<{ Chain: CompiledDiscoveryChain }>(chainPath(service), dc, token, { minIndex, maxWaitMs, signal });
          return { value: r.value.Chain, index: r.index };
        },
        render: async (chain) => String(await String(<RoutingLive base={ctx.base} dc={dc} service={service} chain={chain as CompiledDiscoveryChain} selected={selected} />)),
      };
    },
  },
  css: CHAIN_CSS + CHAIN_ENTRY_CSS,
};
