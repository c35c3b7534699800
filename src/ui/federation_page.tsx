/** @jsxImportSource hono/jsx */
/**
 * The federation map (/ui/federation): every datacenter as a node of an SVG map (primary marked, its
 * leader, servers alive/total, its mesh gateways as chips with their health in words), an edge from
 * this datacenter to each other one labelled with the median round-trip time and, when something is
 * wrong, "degraded" or "unreachable" (dashed or dotted, never colour alone); beside it the same in a
 * table (datacenter, leader, servers, gateways healthy/total, federation-state age, RTT, ACL
 * replication, problems in words).
 *
 * Live: WAN membership and coordinates have no blocking index, so the stream re-reads everything
 * every second and pushes when the map's significant state changed (its "index" is that state's hash:
 * ages and RTTs alone refresh every 30 s, not every second).
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { delay } from "../platform/index.ts";
import type { CheckServiceNode, ServiceSummary } from "../model/index.ts";
import { federationView, formatAge, formatRtt, type AclReplicationStatus, type DcCoordinates, type DcReads, type DcView, type FederationStateRecord, type WanMember } from "./federation_view.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import type { Indexed, UiContext, UiPageModule } from "./page.ts";

const POLL_MS = 1_000;

/** Reads everything the map shows; a datacenter that does not answer is an error in its reads, not a failed page. */
export async function readFederation(ctx: UiContext, token: string | undefined): Promise<DcView[]> {
  const local = ctx.deps.datacenter;
  const errorOf = (err: unknown) => ({ error: (err as Error)?.message ?? String(err) });
  const value = async <T,>(path: string, dc: string) => (await ctx.read<T>(path, dc, token)).value;
  const [datacenters, self, wanMembers, coordinates, states] = await Promise.all([
    ctx.deps.datacenters(),
    value<{ Config?: { PrimaryDatacenter?: string } }>("/v1/agent/self", local).catch(() => ({} as { Config?: { PrimaryDatacenter?: string } })),
    value<WanMember[] | null>("/v1/agent/members?wan=1", local).catch(() => [] as WanMember[]),
    value<DcCoordinates[]>("/v1/coordinate/datacenters", local).catch(() => [] as DcCoordinates[]),
    value<FederationStateRecord[]>("/v1/internal/federation-states", local).catch(() => [] as FederationStateRecord[]),
  ]);
  // A client agent is in no WAN pool (members?wan=1 is null there, as in Consul): each datacenter's
  // servers come from its own catalog instead, alive while their serfHealth check passes.
  const members = wanMembers ?? (await Promise.all(datacenters.map((dc) => serversFromCatalog(ctx, dc, token)))).flat();
  const reads: Record<string, DcReads> = {};
  await Promise.all(datacenters.map(async (dc) => {
    const leader = value<string>("/v1/status/leader", dc).catch(errorOf);
    const gateways = value<ServiceSummary[]>("/v1/internal/ui/services", dc).then(async (all) => {
      const names = all.filter((s) => s.Kind === "mesh-gateway").map((s) => s.Name);
      return (await Promise.all(names.map((n) => value<CheckServiceNode[]>(`/v1/health/service/${encodeURIComponent(n)}`, dc)))).flat();
    }).catch(errorOf);
    const aclReplication = value<AclReplicationStatus>("/v1/acl/replication", dc).catch(errorOf);
    reads[dc] = { leader: await leader, gateways: await gateways, aclReplication: await aclReplication };
  }));
  return federationView({
    localDc: local, primaryDc: self.Config?.PrimaryDatacenter || local, datacenters, members, coordinates, states: states ?? [], reads, now: ctx.deps.clock.now(),
  });
}

/** `dc`'s servers as its catalog's `consul` service lists them, in the WAN pool's member shape; none when it does not answer. */
async function serversFromCatalog(ctx: UiContext, dc: string, token: string | undefined): Promise<WanMember[]> {
  try {
    const nodes = (await ctx.read<CheckServiceNode[]>("/v1/health/service/consul", dc, token)).value ?? [];
    return nodes.map((n) => ({
      Name: `${n.Node.Node}.${dc}`,
      Status: n.Checks.some((c) => c.CheckID === "serfHealth" && c.Status !== "passing") ? 4 : 1,
      Tags: { dc, role: "consul" },
    }));
  } catch {
    return [];
  }
}

const W = 720, H = 400, BOX_W = 190, BOX_H = 92;

/** Each datacenter's box centre: on an ellipse, the primary at the top, the rest clockwise in name order. */
export function mapLayout(dcs: readonly DcView[]): Map<string, { x: number; y: number }> {
  const ordered = [...dcs].sort((a, b) => (a.primary === b.primary ? a.name.localeCompare(b.name) : a.primary ? -1 : 1));
  const out = new Map<string, { x: number; y: number }>();
  ordered.forEach((dc, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, ordered.length);
    const r = ordered.length === 1 ? 0 : 1;
    out.set(dc.name, { x: Math.round(W / 2 + r * (W / 2 - BOX_W / 2 - 10) * Math.cos(angle)), y: Math.round(H / 2 + r * (H / 2 - BOX_H / 2 - 10) * Math.sin(angle)) });
  });
  return out;
}

/** One line saying what the link to `dc` is like. */
export function linkSentence(dc: DcView): string {
  if (dc.local) return `${dc.name}: this datacenter${dc.problems.length ? `, ${dc.link}: ${dc.problems.join("; ")}` : ", healthy"}`;
  return `${dc.name}: ${dc.link}${dc.problems.length ? `: ${dc.problems.join("; ")}` : ""}`;
}

function FederationMap(props: { readonly base: string; readonly dcs: readonly DcView[] }) {
  const { base, dcs } = props;
  const at = mapLayout(dcs);
  const local = dcs.find((d) => d.local);
  const from = local ? at.get(local.name)! : undefined;
  return (
    <svg id="federation-map" role="group" aria-labelledby="federation-map-title" viewBox={`0 0 ${W} ${H}`} width="100%" class="fedmap">
      <title id="federation-map-title">{`Federation map: ${dcs.length} datacenters, links from ${local?.name ?? "this datacenter"}`}</title>
      {from ? dcs.filter((d) => !d.local).map((d) => {
        const to = at.get(d.name)!;
        const mx = (from.x + to.x) / 2, my = (from.y + to.y) / 2;
        return (
          <g class={`edge edge-${d.link}`} data-edge={d.name} data-link={d.link}>
            <line x1={from.x} y1={from.y} x2={to.x} y2={to.y} stroke-dasharray={d.link === "degraded" ? "8 5" : d.link === "unreachable" ? "2 5" : undefined} />
            <text x={mx} y={my - 6} text-anchor="middle">{formatRtt(d.rttMs)}</text>
            {d.link !== "healthy" ? <text x={mx} y={my + 12} text-anchor="middle" class="edge-state">{d.link}</text> : null}
          </g>
        );
      }) : null}
      {dcs.map((d) => {
        const c = at.get(d.name)!;
        const x = c.x - BOX_W / 2, y = c.y - BOX_H / 2;
        return (
          <a href={`${base}${encodeURIComponent(d.name)}/services`} aria-label={linkSentence(d)} data-dc={d.name} class={`dc dc-${d.link}`}>
            <rect x={x} y={y} width={BOX_W} height={BOX_H} rx="8" />
            <text x={x + 10} y={y + 20} class="dc-name">{`${d.name}${d.primary ? " (primary)" : ""}`}</text>
            <text x={x + 10} y={y + 38}>{`${d.serversAlive}/${d.serversTotal} servers, ${d.leader ? "leader known" : "no leader"}`}</text>
            <text x={x + 10} y={y + 56}>{d.gateways.length === 0 ? "no mesh gateways" : `${d.gatewaysHealthy}/${d.gateways.length} gateways healthy`}</text>
            <text x={x + 10} y={y + 76} class="chips">{d.gateways.map((g) => `${g.healthy ? "✓" : "✕"} ${g.id}`).join("  ")}</text>
          </a>
        );
      })}
    </svg>
  );
}

/** What the live stream re-renders: the summary, the map and its table. */
export function FederationLive(props: { readonly base: string; readonly dcs: readonly DcView[] }) {
  const { base, dcs } = props;
  const troubled = dcs.filter((d) => d.link !== "healthy");
  return (
    <div id="federation-live">
      <p id="live-counts">{troubled.length === 0 ? `All ${dcs.length} datacenters healthy.` : troubled.map(linkSentence).join(". ") + "."}</p>
      <FederationMap base={base} dcs={dcs} />
      <table id="federation">
        <caption>Datacenters, as this agent sees them</caption>
        <thead><tr>
          <th scope="col">Datacenter</th><th scope="col">Link</th><th scope="col">Leader</th><th scope="col">Servers alive</th><th scope="col">Gateways healthy</th>
          <th scope="col">Federation state age</th><th scope="col">Round trip</th><th scope="col">ACL replication</th><th scope="col">Problems</th>
        </tr></thead>
        <tbody>
          {dcs.map((d) => (
            <tr data-dc={d.name}>
              <th scope="row">{`${d.name}${d.primary ? " (primary)" : ""}${d.local ? " (this one)" : ""}`}</th>
              <td class={`link-${d.link}`}><span aria-hidden="true">{d.link === "healthy" ? "✓ " : d.link === "degraded" ? "! " : "✕ "}</span>{d.link}</td>
              <td>{d.leader || "none"}</td>
              <td>{`${d.serversAlive}/${d.serversTotal}`}</td>
              <td>{d.gateways.length === 0 ? "no gateways" : `${d.gatewaysHealthy}/${d.gateways.length} gateways healthy: ${d.gateways.map((g) => `${g.id} ${g.healthy ? "healthy" : "critical"}`).join(", ")}`}</td>
              <td>{d.stateAgeMs === undefined ? "none" : `${formatAge(d.stateAgeMs)} old`}</td>
              <td>{formatRtt(d.rttMs)}</td>
              <td>{d.aclReplication}</td>
              <td>{d.problems.length ? d.problems.join("; ") : "none"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** How often the map is pushed even when nothing but ages and round-trip times moved. */
const REFRESH_AGES_MS = 30_000;

/**
 * What makes the map worth a push: each datacenter's state with the clock-relative words (ages) taken
 * out of its texts, and the RTT left out (coordinates move a little all the time); both are refreshed
 * once every REFRESH_AGES_MS.
 */
export function significantState(dcs: readonly DcView[], now: number): string {
  const timeless = (t: string) => t.replace(/\d+(\.\d+)? ?(ms|s|min|h)\b/g, "#");
  return JSON.stringify([Math.floor(now / REFRESH_AGES_MS), dcs.map((d) => [
    d.name, d.primary, d.local, d.link, d.leader, d.serversAlive, d.serversTotal, d.gateways, d.stateAgeMs === undefined, timeless(d.aclReplication), d.problems.map(timeless),
  ])]);
}

/** The fragment, and the hash of its significant state as the stream's "index". */
async function renderedFederation(ctx: UiContext, token: string | undefined): Promise<Indexed<string>> {
  const dcs = await readFederation(ctx, token);
  const html = String(await String(<FederationLive base={ctx.base} dcs={dcs} />));
  return { value: html, index: contentIndex(significantState(dcs, ctx.deps.clock.now())) };
}

/** A positive integer (48 bits of SHA-256) naming `text`, for a stream index that is a content hash. */
export function contentIndex(text: string): number {
  const d = sha256(new TextEncoder().encode(text));
  return (d[0]! * 2 ** 40 + d[1]! * 2 ** 32 + ((d[2]! << 24) >>> 0) + (d[3]! << 16) + (d[4]! << 8) + d[5]!) || 1;
}

export const federationPages: UiPageModule = {
  routes(app, ctx) {
    app.get(`${ctx.base}federation`, async (c) => {
      const dc = ctx.deps.datacenter;
      const token = ctx.token(c);
      let read: Indexed<string>;
      try {
        read = await renderedFederation(ctx, token);
      } catch (err) {
        return ctx.failure(c, dc, err, "federation");
      }
      const frame: PageFrame = await ctx.frame(c, dc);
      return ctx.html(c, (
        <Layout {...frame} section="federation" title="Federation" live={{ url: `${ctx.base}events?topic=federation`, index: read.index }}>
          <p>Datacenters, their leaders, servers and mesh gateways, and the links from {dc}. Problems are listed in words in the table.</p>
          <div dangerouslySetInnerHTML={{ __html: read.value }} />
          <p><a href={`${ctx.base}federation`}>Refresh</a></p>
        </Layout>
      ));
    });
  },
  topics: {
    federation: (ctx, _dc, token) => ({
      // A poll: answers once the fragment differs from the one whose hash is `minIndex`, or after maxWaitMs.
      read: async (minIndex, maxWaitMs, signal) => {
        const until = ctx.deps.clock.monotonic() + maxWaitMs;
        for (;;) {
          const r = await renderedFederation(ctx, token);
          if (r.index !== minIndex || signal.aborted || ctx.deps.clock.monotonic() >= until) return r;
          await delay(ctx.deps.clock, Math.min(POLL_MS, Math.max(0, until - ctx.deps.clock.monotonic())), signal);
        }
      },
      render: (html) => html as string,
    }),
  },
  css: `.fedmap{max-width:${W}px;display:block;margin:0 0 1em;color:var(--fg)}.fedmap line{stroke:var(--muted);stroke-width:2}
.fedmap .edge-degraded line{stroke:var(--warn)}.fedmap .edge-unreachable line{stroke:var(--crit)}
.fedmap text{fill:var(--fg);font-size:13px}.fedmap .edge text{fill:var(--muted)}.fedmap .edge .edge-state{fill:var(--fg);font-weight:700}
.fedmap rect{fill:var(--head);stroke:var(--line);stroke-width:1.5}.fedmap .dc-degraded rect{stroke:var(--warn);stroke-width:3}.fedmap .dc-unreachable rect{stroke:var(--crit);stroke-width:3}
.fedmap a:focus-visible rect{stroke:var(--accent);stroke-width:4}.fedmap .dc-name{font-weight:700}.fedmap .chips{font-size:12px}
.link-healthy{color:var(--ok)}.link-degraded{color:var(--warn)}.link-unreachable{color:var(--crit)}`,
};
