/**
 * The state machine of one proxyless gRPC client, pure: typed events in, watch/cancel commands out, a
 * readonly snapshot (./proxyless_snapshot.ts) when valid. The shape follows the sidecar machine
 * (./sidecar_state.ts) without what only a proxy needs (roots, leaf, intentions, mesh gateways).
 *
 * Where the upstreams come from (the source):
 * - `upstreams`: the Upstreams of the client's registration (its sidecar's Proxy block); prepared-query
 *   upstreams are skipped (a chain is needed to build routes and clusters).
 * - `catalog`: every service of the local datacenter's catalog except `consul`, each as an upstream by
 *   its name, so that `xds:///<service>` resolves for any service (watch `catalog-services`).
 * Per upstream: its compiled discovery chain; per chain target: the target service's own instances (not
 * the Connect ones) in its datacenter through its subset filter. After every event the wanted watches are
 * recomputed; those no longer wanted are cancelled and their values dropped, unchanged ones are kept.
 *
 * Valid once the upstream list is known (at once for `upstreams`, after the first catalog answer for
 * `catalog`). `complete()` says whether every chain and every target's instances are in as well: the
 * manager holds the first snapshot back until then (for a bounded time), so a client's first lookups do
 * not see names as missing while their chains are still being fetched.
 */
import type { CompiledDiscoveryChain } from "../connect/index.ts";
import type { CheckServiceNode, Upstream } from "../model/index.ts";
import type { ProxylessSnapshot, ProxylessUpstream } from "./proxyless_snapshot.ts";
import { WatchMachine, type Command } from "./reconcile.ts";
import { isServiceUpstream } from "./service_config.ts";
import { upstreamDatacenter, upstreamIdentifier } from "./snapshot.ts";
import { watchIds, type ChainWatch } from "./watches.ts";

/** Where a client's upstreams come from. */
export type ProxylessSource =
  | { readonly kind: "upstreams"; readonly upstreams: readonly Upstream[] }
  | { readonly kind: "catalog" };

/** What a proxyless machine watches. Two requests are the same watch exactly when their JSON is equal. */
export type ProxylessWatchRequest =
  /** The service names of the local datacenter's catalog. */
  | { readonly kind: "catalog-services" }
  | { readonly kind: "chain"; readonly upstream: string; readonly chain: ChainWatch }
  /** A chain target's own instances (not Connect ones), in its datacenter, through its subset filter. */
  | { readonly kind: "instances"; readonly upstream: string; readonly targetId: string; readonly service: string; readonly datacenter: string; readonly filter: string };

/** The value each kind of watch delivers. */
export interface ProxylessWatchValues {
  readonly "catalog-services": readonly string[];
  readonly chain: CompiledDiscoveryChain;
  readonly instances: readonly CheckServiceNode[];
}

/** A new value for watch `watchId`. */
export type ProxylessUpdate = {
  readonly [K in keyof ProxylessWatchValues]: { readonly kind: K; readonly watchId: string; readonly value: ProxylessWatchValues[K] };
}[keyof ProxylessWatchValues];

/** What the machine hears: a watch's value, or a new source of upstreams. */
export type ProxylessEvent = ProxylessUpdate | { readonly kind: "source"; readonly source: ProxylessSource };

/** What the machine asks for; a `cancel` precedes a `watch` of the same ID in one batch. */
export type ProxylessCommand = Command<ProxylessWatchRequest>;

/** Services never offered as catalog upstreams. */
const NOT_UPSTREAMS: ReadonlySet<string> = new Set(["consul"]);
const CATALOG_WATCH = "catalog-services";
const targetWatchId = (upstream: string, targetId: string) => `proxyless-target:${targetId}:${upstream}`;

export class ProxylessState extends WatchMachine<ProxylessWatchRequest, ProxylessWatchValues[keyof ProxylessWatchValues], ProxylessSnapshot, ProxylessSource> {
  constructor(
    private readonly context: { readonly datacenter: string },
    private readonly nodeId: string,
    source: ProxylessSource,
  ) {
    super(source);
  }

  /** Applies one event; returns the watches to cancel (first) and to start. Stale updates change nothing. */
  handle(ev: ProxylessEvent): ProxylessCommand[] {
    if (this.closed) return [];
    if (ev.kind === "source") return this.replaceInput(ev.source);
    if (!this.accept(ev.watchId, ev.kind, ev.value, true)) return [];
    return ev.kind === "instances" ? [] : this.reconcile();
  }

  /** Whether every watch held has its value (the upstream list, every chain, every target's instances). */
  complete(): boolean {
    return [...this.held.keys()].every((id) => this.values.has(id));
  }

  /** The upstreams now, or undefined while the catalog has not answered. */
  private upstreams(): readonly Upstream[] | undefined {
    if (this.input.kind === "upstreams") return this.input.upstreams.filter(isServiceUpstream);
    const names = this.values.get(CATALOG_WATCH) as ProxylessWatchValues["catalog-services"] | undefined;
    if (!names) return undefined;
    return names.filter((n) => !NOT_UPSTREAMS.has(n)).map((n) => ({ DestinationName: n, LocalBindPort: 0 }));
  }

  /** The chain request of an upstream: its name, datacenter, namespace and `protocol` override. */
  private chainWatch(u: Upstream): ChainWatch {
    const p = u.Config?.["protocol"];
    return {
      name: u.DestinationName,
      evaluateInDatacenter: upstreamDatacenter(u, this.context.datacenter),
      evaluateInNamespace: u.DestinationNamespace || "default",
      // A proxyless client dials instances directly: mesh gateways are never in its path.
      overrideMeshGatewayMode: "",
      overrideProtocol: typeof p === "string" ? p : "",
      overrideConnectTimeoutMs: 0,
    };
  }

  protected desired(): Map<string, ProxylessWatchRequest> {
    const d = new Map<string, ProxylessWatchRequest>();
    if (this.input.kind === "catalog") d.set(CATALOG_WATCH, { kind: "catalog-services" });
    for (const u of this.upstreams() ?? []) {
      const id = upstreamIdentifier(u);
      const chainId = watchIds.chain(id);
      const req: ProxylessWatchRequest = { kind: "chain", upstream: id, chain: this.chainWatch(u) };
      d.set(chainId, req);
      const chain = this.valueOfRequest<CompiledDiscoveryChain>(chainId, req);
      if (!chain) continue;
      for (const tid of Object.keys(chain.Targets).sort()) {
        const t = chain.Targets[tid]!;
        d.set(targetWatchId(id, tid), { kind: "instances", upstream: id, targetId: tid, service: t.Service, datacenter: t.Datacenter, filter: t.Subset.Filter ?? "" });
      }
    }
    return d;
  }

  protected build(): ProxylessSnapshot | undefined {
    if (this.closed || this.upstreams() === undefined) return undefined;
    const upstreams: Record<string, ProxylessUpstream> = {};
    const endpoints: Record<string, Record<string, readonly CheckServiceNode[]>> = {};
    for (const id of [...this.held.keys()].sort()) {
      const req = this.held.get(id)!.request;
      if (req.kind === "instances" && this.values.has(id)) (endpoints[req.upstream] ??= {})[req.targetId] = this.values.get(id) as readonly CheckServiceNode[];
    }
    for (const id of [...this.held.keys()].sort()) {
      const req = this.held.get(id)!.request;
      if (req.kind !== "chain" || !this.values.has(id)) continue;
      upstreams[req.upstream] = { Name: req.upstream, Chain: this.values.get(id) as CompiledDiscoveryChain, TargetEndpoints: endpoints[req.upstream] ?? {} };
    }
    return { Kind: "proxyless-grpc", NodeID: this.nodeId, Datacenter: this.context.datacenter, Upstreams: upstreams };
  }
}
