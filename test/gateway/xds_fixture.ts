/**
 * Fixtures for the gateway xDS client's integration tests: the REAL server side (src/xds cache, ADS
 * service and serveAds on loopback), gateway-shaped resources, a recording sink, and an event
 * recorder whose waits are bounded (no sleeps).
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { ClusterSchema, Cluster_DiscoveryType } from "../../src/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../src/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../src/gen/envoy/config/listener/v3/listener_pb.ts";
import { GATEWAY_TYPE_URLS } from "../../src/gateway/xds_sink.ts";
import type { XdsSink } from "../../src/gateway/xds_sink.ts";
import { startXdsClient } from "../../src/gateway/xds_client.ts";
import type { XdsClient, XdsClientEvent, XdsClientOptions } from "../../src/gateway/xds_client.ts";
import { seededRng, silentLogger, systemClock } from "../../src/platform/index.ts";
import type { TlsMaterial } from "../../src/platform/index.ts";
import { createAdsService, createXdsCache, resolveByProxyId, serveAds } from "../../src/xds/index.ts";
import type { AdsServer, ResourceValue, XdsCache } from "../../src/xds/index.ts";

export const CDS = GATEWAY_TYPE_URLS.cluster;
export const EDS = GATEWAY_TYPE_URLS.endpoint;
export const LDS = GATEWAY_TYPE_URLS.listener;
export const GATEWAY_ID = "mesh-gateway-1";
export const GATEWAY_SERVICE = "mesh-gateway";

/** An EDS cluster (or LOGICAL_DNS when `dns`), with a connect timeout that tests change to make a new version. */
export function cluster(name: string, o: { timeoutSec?: number; dns?: boolean } = {}) {
  return create(ClusterSchema, {
    name,
    clusterDiscoveryType: { case: "type", value: o.dns ? Cluster_DiscoveryType.LOGICAL_DNS : Cluster_DiscoveryType.EDS },
    connectTimeout: { seconds: BigInt(o.timeoutSec ?? 5) },
  });
}

/** A load assignment with one endpoint `10.0.0.1:<port>`. */
export function cla(name: string, port = 8080) {
  return create(ClusterLoadAssignmentSchema, {
    clusterName: name,
    endpoints: [{
      lbEndpoints: [{
        hostIdentifier: {
          case: "endpoint",
          value: { address: { address: { case: "socketAddress", value: { address: "10.0.0.1", portSpecifier: { case: "portValue", value: port } } } } },
        },
      }],
    }],
  });
}

export function listener(name: string, statPrefix = name) {
  return create(ListenerSchema, { name, statPrefix });
}

/** The gateway's resources by type; `set` builds the cache's ResourceSet from message lists. */
export interface GatewayResources {
  readonly clusters: readonly ReturnType<typeof cluster>[];
  readonly endpoints: readonly ReturnType<typeof cla>[];
  readonly listeners: readonly ReturnType<typeof listener>[];
}

export function setGateway(cache: XdsCache, r: GatewayResources, nodeId = GATEWAY_ID): void {
  const by = <T>(list: readonly T[], name: (t: T) => string) => new Map<string, ResourceValue>(list.map((t) => [name(t), t as ResourceValue]));
  cache.set(nodeId, new Map([
    [CDS, by(r.clusters, (c) => c.name)],
    [EDS, by(r.endpoints, (c) => c.clusterName)],
    [LDS, by(r.listeners, (l) => l.name)],
  ]));
}

export interface Agent {
  readonly cache: XdsCache;
  readonly server: AdsServer;
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the real ADS server (no update rate limit) on 127.0.0.1:`port` (0 = any). */
export async function startAgent(o: { port?: number; cache?: XdsCache; tls?: { material: TlsMaterial; requireClientCert: boolean } } = {}): Promise<Agent> {
  const cache = o.cache ?? createXdsCache();
  const service = createAdsService({
    cache,
    resolveNode: resolveByProxyId((id) => cache.get(id) !== undefined),
    clock: systemClock(),
    logger: silentLogger(),
    updatesPerSecond: 0,
  });
  const server = await serveAds({ service, logger: silentLogger(), host: "127.0.0.1", port: o.port ?? 0, tls: o.tls });
  return { cache, server, port: server.port, close: () => server.close() };
}

/** What `withGateway` hands a test. */
export interface Running {
  readonly agent: Agent;
  readonly sink: RecordingSink;
  readonly log: EventLog;
  readonly client: XdsClient;
}

/**
 * Starts an agent (options `agent`) holding `resources` for the gateway, and a client to it (h2c
 * delta unless `client` says otherwise; backoff 20 ms doubling to 200 ms, seed 1); runs `body`; closes
 * both, also when `body` fails.
 */
export async function withGateway(
  o: { readonly agent?: Parameters<typeof startAgent>[0]; readonly resources?: GatewayResources; readonly client?: Partial<XdsClientOptions> },
  body: (r: Running) => Promise<void>,
): Promise<void> {
  const agent = await startAgent(o.agent);
  const sink = new RecordingSink();
  const log = new EventLog();
  let client: XdsClient | undefined;
  try {
    if (o.resources) setGateway(agent.cache, o.resources);
    client = startXdsClient({
      host: "127.0.0.1",
      port: agent.port,
      node: { id: GATEWAY_ID, cluster: GATEWAY_SERVICE },
      version: "1.2.3",
      sink,
      clock: systemClock(),
      rng: seededRng(1),
      logger: silentLogger(),
      backoff: { baseMs: 20, maxMs: 200 },
      onEvent: log.onEvent,
      ...o.client,
    });
    await body({ agent, sink, log, client });
  } finally {
    await client?.close();
    await agent.close();
  }
}

/** A sink that records every call, rejects what `rejectIf` names, and derives EDS names from its clusters. */
export class RecordingSink implements XdsSink {
  readonly current = new Map<string, ReadonlyMap<string, Any>>();
  /** Every call, accepted or not, in order. */
  readonly calls: Array<{ readonly typeUrl: string; readonly names: readonly string[]; readonly accepted: boolean }> = [];
  rejectIf: (typeUrl: string, set: ReadonlyMap<string, Any>) => string | undefined = () => undefined;

  apply(typeUrl: string, set: ReadonlyMap<string, Any>): string | undefined {
    const reason = this.rejectIf(typeUrl, set);
    this.calls.push({ typeUrl, names: [...set.keys()].sort(), accepted: reason === undefined });
    if (reason === undefined) this.current.set(typeUrl, new Map(set));
    return reason;
  }

  endpointNames(): readonly string[] {
    const out: string[] = [];
    for (const any of this.current.get(CDS)?.values() ?? []) {
      const c = fromBinary(ClusterSchema, any.value);
      if (c.clusterDiscoveryType.case === "type" && c.clusterDiscoveryType.value === Cluster_DiscoveryType.EDS) out.push(c.name);
    }
    return out.sort();
  }

  names(typeUrl: string): string[] {
    return [...(this.current.get(typeUrl)?.keys() ?? [])].sort();
  }

  /** The decoded resource `name` of the current set of `typeUrl`. */
  cluster(name: string) {
    const any = this.current.get(CDS)?.get(name);
    return any ? fromBinary(ClusterSchema, any.value) : undefined;
  }

  endpoints(name: string) {
    const any = this.current.get(EDS)?.get(name);
    return any ? fromBinary(ClusterLoadAssignmentSchema, any.value) : undefined;
  }
}

/** Records client events; `waitFor` resolves with the first matching event at index >= `since`. */
export class EventLog {
  readonly events: XdsClientEvent[] = [];
  private waiters: Array<{ since: number; match: (e: XdsClientEvent) => boolean; resolve: (i: number) => void }> = [];

  readonly onEvent = (e: XdsClientEvent): void => {
    this.events.push(e);
    const i = this.events.length - 1;
    for (const w of [...this.waiters]) {
      if (i >= w.since && w.match(e)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(i);
      }
    }
  };

  /** The index to pass as `since` to wait only for events from now on. */
  mark(): number {
    return this.events.length;
  }

  /** Index of the first event at or after `since` matching `match`; rejects after `ms`. */
  waitFor(match: (e: XdsClientEvent) => boolean, since = 0, ms = 10_000): Promise<number> {
    const hit = this.events.findIndex((e, i) => i >= since && match(e));
    if (hit >= 0) return Promise.resolve(hit);
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`no matching event within ${ms} ms; events: ${JSON.stringify(this.events.slice(since), bigint)}`));
      }, ms);
      const done = (i: number) => {
        clearTimeout(timer);
        resolve(i);
      };
      this.waiters.push({ since, match, resolve: done });
    });
  }

  /** Waits for an applied (or rejected) event of `typeUrl`, returning it. */
  async applied(typeUrl: string, since = 0, ms?: number) {
    const i = await this.waitFor((e) => e.kind === "applied" && e.typeUrl === typeUrl, since, ms);
    return this.events[i] as Extract<XdsClientEvent, { kind: "applied" }>;
  }

  async rejected(typeUrl: string, since = 0, ms?: number) {
    const i = await this.waitFor((e) => e.kind === "rejected" && e.typeUrl === typeUrl, since, ms);
    return this.events[i] as Extract<XdsClientEvent, { kind: "rejected" }>;
  }

  /** Events at or after `since` of kind applied/rejected, as `kind typeUrl-suffix [received]` strings. */
  updatesSince(since: number): string[] {
    return this.events.slice(since).flatMap((e) =>
      e.kind === "applied" ? [`applied ${short(e.typeUrl)} [${e.received.join(",")}] -[${e.removed.join(",")}]`]
      : e.kind === "rejected" ? [`rejected ${short(e.typeUrl)}`]
      : []
    );
  }
}

const bigint = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);

/** `Cluster`, `ClusterLoadAssignment`, `Listener`. */
export function short(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
}
