/** @jsxImportSource hono/jsx */
/**
 * A service's failover state (/ui/:dc/services/:name/failover): for each resolver of its discovery
 * chain, the primary target and the failover targets in the order they are tried, healthy/total
 * instances of each (read in the target's own datacenter), the mesh-gateway mode and the gateway
 * traffic goes through (read live in the datacenter it is in), and one sentence saying which target serves now ("Serving web from dc2
 * (failover 1) via mesh gateway gw-dc1 in dc1."). Live: the stream blocks on the chain, every target's
 * health and the gateways at once (combined_read.ts), and the sentence is the polite status line's
 * announcement.
 */
import type { CompiledDiscoveryChain } from "../connect/index.ts";
import type { CheckServiceNode, ServiceSummary } from "../model/index.ts";
import { combinedBlockingRead, type PartRead, type PartResult } from "./combined_read.ts";
import { chainTargetIds, chosenGateway, failoverView, gatewaysByDatacenter, orderName, servingSentence, type FailoverView, type TargetRead, type TargetView } from "./failover_view.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import { HealthCell } from "./list_parts.tsx";
import type { BlockingWait, Indexed, UiContext, UiPageModule } from "./page.ts";
import { ServiceTabs } from "./service_tabs.tsx";

type Part = { readonly kind: "chain"; readonly chain: CompiledDiscoveryChain } | { readonly kind: "services"; readonly dc: string }
  | { readonly kind: "gateway"; readonly dc: string; readonly instances: CheckServiceNode[] }
  | { readonly kind: "target"; readonly id: string; readonly instances: CheckServiceNode[] };

/** The datacenters whose mesh gateways carry traffic to some target of `chain` (mode local: the chain's own; remote: the target's). */
export function gatewayDatacenters(chain: CompiledDiscoveryChain): string[] {
  const dcs = new Set<string>();
  for (const id of chainTargetIds(chain)) {
    const t = chain.Targets[id];
    if (!t || t.Datacenter === chain.Datacenter) continue;
    if (t.MeshGateway?.Mode === "local") dcs.add(chain.Datacenter);
    if (t.MeshGateway?.Mode === "remote") dcs.add(t.Datacenter);
  }
  return [...dcs].sort();
}

/**
 * The failover view of `service` in `dc`; with `wait`, once any of its reads moves past `wait.minIndex`
 * (a combined index): the chain, every target's instances in the target's datacenter, and the mesh
 * gateways (and the service list naming them) of each datacenter traffic would pass through.
 */
export async function readFailover(ctx: UiContext, dc: string, service: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<FailoverView>> {
  const chainPath = `/v1/discovery-chain/${encodeURIComponent(service)}`;
  const plan = async () => {
    const chain = (await ctx.read<{ Chain: CompiledDiscoveryChain }>(chainPath, dc, token)).value.Chain;
    const ids = chainTargetIds(chain);
    const gatewayDcs = gatewayDatacenters(chain);
    const gatewayNames = await Promise.all(gatewayDcs.map(async (gdc) => {
      const all = await ctx.read<ServiceSummary[]>("/v1/internal/ui/services", gdc, token).then((r) => r.value, () => [] as ServiceSummary[]);
      return all.filter((x) => x.Kind === "mesh-gateway").map((x) => [gdc, x.Name] as const);
    }));
    const healthPath = (name: string, filter?: string) => `/v1/health/service/${encodeURIComponent(name)}${filter ? `?filter=${encodeURIComponent(filter)}` : ""}`;
    const parts: PartRead<Part>[] = [
      async (w) => { const r = await ctx.read<{ Chain: CompiledDiscoveryChain }>(chainPath, dc, token, w); return { value: { kind: "chain", chain: r.value.Chain }, index: r.index }; },
      ...gatewayDcs.map((gdc): PartRead<Part> => async (w) => ({ value: { kind: "services", dc: gdc }, index: (await ctx.read<unknown>("/v1/internal/ui/services", gdc, token, w)).index })),
      ...gatewayNames.flat().map(([gdc, name]): PartRead<Part> => async (w) => {
        const r = await ctx.read<CheckServiceNode[]>(healthPath(name), gdc, token, w);
        return { value: { kind: "gateway", dc: gdc, instances: r.value }, index: r.index };
      }),
      ...ids.map((id): PartRead<Part> => async (w) => {
        const t = chain.Targets[id]!;
        const r = await ctx.read<CheckServiceNode[]>(healthPath(t.Service, t.Subset?.Filter), t.Datacenter, token, w);
        return { value: { kind: "target", id, instances: r.value }, index: r.index };
      }),
    ];
    const view = (results: readonly PartResult<Part>[]): FailoverView => {
      const latest = results[0]?.ok && results[0].value.kind === "chain" ? results[0].value.chain : chain;
      const byDc: Record<string, CheckServiceNode[]> = {};
      const reads: Record<string, TargetRead> = {};
      const targetsFrom = results.length - ids.length;
      results.forEach((r, i) => {
        if (r.ok && r.value.kind === "gateway") (byDc[r.value.dc] ??= []).push(...r.value.instances);
        if (i >= targetsFrom) {
          reads[ids[i - targetsFrom]!] = r.ok && r.value.kind === "target" ? { ok: true, instances: r.value.instances } : { ok: false, error: r.ok ? "unexpected answer" : r.error };
        }
      });
      return failoverView({ chain: latest, reads, gateways: gatewaysByDatacenter(byDc) });
    };
    return { parts, view };
  };
  return combinedBlockingRead({
    plan, minIndex: wait?.minIndex ?? -1, maxWaitMs: wait?.maxWaitMs ?? 0, signal: wait?.signal ?? new AbortController().signal, clock: ctx.deps.clock,
  });
}

function TargetRow(props: { readonly t: TargetView; readonly serving: boolean }) {
  const { t, serving } = props;
  const gw = chosenGateway(t.path);
  const health = t.health === undefined ? undefined : t.health.healthy > 0 ? "passing" : "critical";
  return (
    <tr data-target={t.id} data-serving={serving ? "true" : undefined}>
      <th scope="row">{orderName(t.order)}</th>
      <td>{`${t.subset ? `${t.subset}.` : ""}${t.service} in ${t.datacenter}`}</td>
      {health ? <HealthCell health={health} detail={`${t.health!.healthy} of ${t.health!.total} healthy`} /> : <td class="health-critical">{`unreachable: ${t.error}`}</td>}
      <td>{t.mode}</td>
      <td>{t.path.kind === "local-dc" ? "none (same datacenter)" : t.path.kind === "direct" ? "none (direct)" : gw ? `${gw.id} in ${gw.datacenter}, ${gw.healthy ? "healthy" : "unhealthy"}` : `no gateway in ${t.path.via}`}</td>
      <td>{serving ? "serving" : t.health && t.health.healthy > 0 ? "standby" : "not serving"}</td>
    </tr>
  );
}

/** What the live stream re-renders: the sentence per resolver and its targets' table. */
export function FailoverLive(props: { readonly view: FailoverView }) {
  const { view } = props;
  const sentences = view.resolvers.map((r) => servingSentence(r, view.datacenter));
  return (
    <div id="failover-live">
      <p id="live-counts" class={view.resolvers.some((r) => r.serving !== 0) ? "failover-active" : undefined}>{sentences.join(" ")}</p>
      {view.resolvers.map((r) => (
        <table class="failover" data-resolver={r.name}>
          <caption>{`Targets of ${r.name}, in the order they are tried`}</caption>
          <thead><tr><th scope="col">Order</th><th scope="col">Target</th><th scope="col">Instances</th><th scope="col">Gateway mode</th><th scope="col">Mesh gateway</th><th scope="col">State</th></tr></thead>
          <tbody>{r.targets.map((t, i) => <TargetRow t={t} serving={i === r.serving} />)}</tbody>
        </table>
      ))}
      {view.resolvers.every((r) => r.targets.length <= 1) ? <p>{`${view.service} has no failover targets: a service-resolver with Failover adds them.`}</p> : null}
    </div>
  );
}

export function FailoverPage(props: { readonly frame: PageFrame; readonly service: string; readonly view: FailoverView; readonly index: number }) {
  const { frame, service, view, index } = props;
  const { base, dc } = frame;
  const live = `${base}events?topic=failover&dc=${encodeURIComponent(dc)}&service=${encodeURIComponent(service)}`;
  return (
    <Layout {...frame} section="services" title={`${service}: failover`} live={{ url: live, index }}>
      <ServiceTabs base={base} dc={dc} service={service} current="failover" />
      <FailoverLive view={view} />
      <p><a href={`${base}${encodeURIComponent(dc)}/services/${encodeURIComponent(service)}/failover`}>Refresh</a></p>
    </Layout>
  );
}

export const failoverPages: UiPageModule = {
  routes(app, ctx) {
    app.get(`${ctx.base}:dc/services/:service/failover`, async (c) => {
      const dc = c.req.param("dc") ?? "";
      const service = c.req.param("service") ?? "";
      let read: Indexed<FailoverView>;
      try {
        read = await readFailover(ctx, dc, service, ctx.token(c));
      } catch (err) {
        return ctx.failure(c, dc, err);
      }
      return ctx.html(c, <FailoverPage frame={await ctx.frame(c, dc)} service={service} view={read.value} index={read.index} />);
    });
  },
  topics: {
    failover: (ctx, dc, token, get) => {
      const service = get("service") ?? "";
      return {
        read: (minIndex, maxWaitMs, signal) => readFailover(ctx, dc, service, token, { minIndex, maxWaitMs, signal }),
        render: async (view) => String(await String(<FailoverLive view={view as FailoverView} />)),
      };
    },
  },
  css: `#live-counts.failover-active{font-weight:600}table.failover{margin-bottom:1em}tr[data-serving] th{font-weight:700}`,
};
