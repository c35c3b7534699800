/**
 * The ADS service end to end: a real @grpc/grpc-js client (generic client, protobuf-es codecs) against
 * serveAds on port 0, h2c and TLS, SotW and delta. No sleeps: every wait is on a stream message, a
 * status or a log line, bounded by the test runner's timeout.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { ClusterSchema } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import {
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { openAdsStream, watchedLogger } from "../../test/harness/net_helpers.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { systemClock } from "../platform/index.ts";
import { MetricsRegistry } from "../telemetry/index.ts";
import type { Clock } from "../platform/index.ts";
import { createXdsCache } from "./cache/cache.ts";
import type { ResourceValue, XdsCache } from "./cache/cache.ts";
import { resolveByProxyId, type NodeIdentity, type ResolveNode } from "./node.ts";
import { serveAds } from "./serve.ts";
import type { AdsServer } from "./serve.ts";
import { createAdsService, TOO_MANY_STREAMS } from "./service.ts";
import type { AdsService, AdsServiceOptions } from "./service.ts";
import { CLUSTER_TYPE as CDS, ENDPOINT_TYPE as EDS, LISTENER_TYPE as LDS } from "./types.ts";

const HOST = "127.0.0.1";
const PROXY = "web-sidecar-proxy";
const NODE = { id: PROXY, cluster: "web" };
/** A request's node: Envoy's by default (no user agent, as Envoy before 1.14). */
type NodeInit = { id: string; cluster: string; userAgentName?: string };
const DELTA_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const cluster = (name: string, stat = "") => create(ClusterSchema, { name, altStatName: stat });
const cla = (name: string) => create(ClusterLoadAssignmentSchema, { clusterName: name });
const listener = (name: string, stat = "") => create(ListenerSchema, { name, statPrefix: stat });
const resources = (spec: Record<string, Record<string, ResourceValue>>) =>
  new Map(Object.entries(spec).map(([t, m]) => [t, new Map(Object.entries(m))]));

interface Started {
  readonly cache: XdsCache;
  readonly service: AdsService;
  readonly server: AdsServer;
  readonly log: ReturnType<typeof watchedLogger>;
}

async function start(o: { clock?: Clock; updatesPerSecond?: number; maxStreams?: number; tls?: boolean; resolveNode?: (cache: XdsCache) => ResolveNode; metrics?: MetricsRegistry; authorize?: AdsServiceOptions["authorize"] } = {}): Promise<Started> {
  const cache = createXdsCache();
  const log = watchedLogger();
  const service = createAdsService({
    cache,
    resolveNode: o.resolveNode?.(cache) ?? resolveByProxyId((id) => cache.get(id) !== undefined),
    clock: o.clock ?? systemClock(),
    logger: log.logger,
    updatesPerSecond: o.updatesPerSecond ?? 0,
    maxStreams: o.maxStreams,
    ...(o.metrics ? { metrics: o.metrics } : {}),
    ...(o.authorize ? { authorize: o.authorize } : {}),
  });
  const pki = testPki();
  const server = await serveAds({
    service,
    logger: log.logger,
    host: HOST,
    port: 0,
    tls: o.tls ? { material: { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key }, requireClientCert: true } : undefined,
  });
  cleanup.push(() => server.close());
  return { cache, service, server, log };
}

/** Reads a grpc-js duplex call message by message; `next` rejects once the call has ended. */
function reader<Req, T>(call: grpc.ClientDuplexStream<Req, T>) {
  const queue: T[] = [];
  const waiters: Array<{ resolve: (m: T) => void; reject: (e: Error) => void }> = [];
  let ended: grpc.StatusObject | undefined;
  const status = new Promise<grpc.StatusObject>((resolve) =>
    call.on("status", (s) => {
      ended = s;
      for (const w of waiters.splice(0)) w.reject(new Error(`stream ended: ${s.code} ${s.details}`));
      resolve(s);
    })
  );
  call.on("error", () => {});
  call.on("data", (m: T) => {
    const w = waiters.shift();
    if (w) w.resolve(m);
    else queue.push(m);
  });
  return {
    status,
    next: () =>
      queue.length > 0
        ? Promise.resolve(queue.shift()!)
        : ended
        ? Promise.reject(new Error(`stream ended: ${ended.code}`))
        : new Promise<T>((resolve, reject) => waiters.push({ resolve, reject })),
  };
}

function sotw(server: AdsServer, creds = grpc.credentials.createInsecure(), opts: grpc.ChannelOptions = {}, metadata: Record<string, string> = {}) {
  const { client, call } = openAdsStream(`${HOST}:${server.port}`, creds, opts, metadata);
  cleanup.push(() => client.close());
  const r = reader(call);
  const send = (o: Partial<Pick<DiscoveryRequest, "typeUrl" | "resourceNames" | "responseNonce" | "versionInfo">> & { nack?: string; node?: NodeInit }) =>
    call.write(create(DiscoveryRequestSchema, {
      ...o,
      errorDetail: o.nack === undefined ? undefined : { code: 3, message: o.nack },
    }));
  const ack = (resp: DiscoveryResponse, names: string[] = []) =>
    send({ typeUrl: resp.typeUrl, responseNonce: resp.nonce, versionInfo: resp.versionInfo, resourceNames: names });
  return { call, ...r, send, ack };
}

function delta(server: AdsServer) {
  const Client = grpc.makeGenericClientConstructor({}, "ads");
  const client = new Client(`${HOST}:${server.port}`, grpc.credentials.createInsecure());
  cleanup.push(() => client.close());
  const call = client.makeBidiStreamRequest(
    DELTA_PATH,
    (m: DeltaDiscoveryRequest) => Buffer.from(toBinary(DeltaDiscoveryRequestSchema, m)),
    (b: Buffer) => fromBinary(DeltaDiscoveryResponseSchema, b),
  );
  const r = reader(call);
  const send = (o: { typeUrl: string; sub?: string[]; nonce?: string; node?: NodeInit; initial?: Record<string, string> }) =>
    call.write(create(DeltaDiscoveryRequestSchema, {
      typeUrl: o.typeUrl,
      node: o.node,
      resourceNamesSubscribe: o.sub ?? [],
      responseNonce: o.nonce ?? "",
      initialResourceVersions: o.initial ?? {},
    }));
  return { call, ...r, send };
}

const clusterNames = (r: DiscoveryResponse) => r.resources.map((a) => anyUnpack(a, ClusterSchema)!).map((c) => `${c.name}:${c.altStatName}`);

describe("ADS service over a real grpc-js client", () => {
  test("SotW over h2c: initial config, EDS by name, update, NACK logged with error_detail, next change still sent", async () => {
    const { cache, server, service, log } = await start();
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a") }, [EDS]: { a: cla("a") } }));
    const s = sotw(server);
    s.send({ typeUrl: CDS, node: NODE });
    const c1 = await s.next();
    expect(clusterNames(c1)).toEqual(["a:"]);
    expect(c1.versionInfo).toMatch(/^[0-9a-f]{32}$/);
    expect(service.streamCount()).toBe(1);
    s.ack(c1);
    s.send({ typeUrl: EDS, resourceNames: ["a"] });
    const e1 = await s.next();
    expect(e1.resources.map((a) => anyUnpack(a, ClusterLoadAssignmentSchema)!.clusterName)).toEqual(["a"]);
    s.ack(e1, ["a"]);

    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "bad") }, [EDS]: { a: cla("a") } }));
    const c2 = await s.next();
    expect(clusterNames(c2)).toEqual(["a:bad"]);
    s.send({ typeUrl: CDS, responseNonce: c2.nonce, versionInfo: c1.versionInfo, nack: "cluster a: bad stat name" });
    const line = await log.waitFor(/NACK/);
    expect(line).toContain(`node_id=${PROXY}`);
    expect(line).toContain(`error_detail="cluster a: bad stat name"`);
    expect(line).toContain(`nonce=${c2.nonce}`);

    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "good") }, [EDS]: { a: cla("a") } }));
    const c3 = await s.next();
    expect(clusterNames(c3)).toEqual(["a:good"]);
    s.ack(c3);
    // Warming: the changed cluster's endpoints come again after its ACK.
    const e2 = await s.next();
    expect(e2.typeUrl).toBe(EDS);
    expect(e2.versionInfo).toBe(e1.versionInfo);
    s.call.end();
    expect((await s.status).code).toBe(grpc.status.OK);
  });

  test("unknown proxy: NOT_FOUND naming it; node.cluster is the fallback; no node: INVALID_ARGUMENT", async () => {
    const { cache, server, log } = await start();
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a") } }));
    const bad = sotw(server);
    bad.send({ typeUrl: CDS, node: { id: "nope", cluster: "ghost" } });
    const st = await bad.status;
    expect(st.code).toBe(grpc.status.NOT_FOUND);
    expect(st.details).toBe(`unknown proxy "nope" (node.cluster "ghost") - no proxy service with this ID is registered with this agent`);
    expect(await log.waitFor(/refusing stream/)).toContain("nope");

    const byCluster = sotw(server);
    byCluster.send({ typeUrl: CDS, node: { id: "not-registered", cluster: PROXY } });
    expect(clusterNames(await byCluster.next())).toEqual(["a:"]);

    const none = sotw(server);
    none.send({ typeUrl: CDS });
    const st1 = await none.status;
    expect(st1.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(st1.details).toBe("xDS request has no node - node.id (the proxy service ID) is required");

    const noType = sotw(server);
    noType.send({ typeUrl: "", node: NODE });
    const st2 = await noType.status;
    expect(st2.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(st2.details).toBe("type URL is required for ADS");
  });

  test("delta over h2c: wildcard CDS, only changes, removed_resources, then node removal ends the stream", async () => {
    const { cache, server } = await start();
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a"), b: cluster("b") } }));
    const d = delta(server);
    d.send({ typeUrl: CDS, node: NODE });
    const r1 = await d.next();
    expect(r1.resources.map((r) => r.name)).toEqual(["a", "b"]);
    expect(anyUnpack(r1.resources[0]!.resource!, ClusterSchema)!.name).toBe("a");
    d.send({ typeUrl: CDS, nonce: r1.nonce });
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "v2") } }));
    const r2 = await d.next();
    expect(r2.resources.map((r) => r.name)).toEqual(["a"]);
    expect(r2.removedResources).toEqual([]);
    d.send({ typeUrl: CDS, nonce: r2.nonce });
    const r3 = await d.next();
    expect(r3.resources).toEqual([]);
    expect(r3.removedResources).toEqual(["b"]);
    d.send({ typeUrl: CDS, nonce: r3.nonce });

    // Reconnect with what the client holds: nothing is resent.
    const again = delta(server);
    again.send({ typeUrl: CDS, node: NODE, sub: ["*"], initial: { a: r2.resources[0]!.version } });
    again.send({ typeUrl: LDS });
    const first = await again.next();
    expect(first.typeUrl).toBe(LDS); // the CDS request needed no answer; LDS (empty) is answered

    cache.remove(PROXY);
    const st = await d.status;
    expect(st.code).toBe(grpc.status.NOT_FOUND);
    expect(st.details).toContain(`proxy "${PROXY}" is no longer registered`);
  });

  test("TLS with client certificates (ports.grpc with TLS)", async () => {
    const { cache, server } = await start({ tls: true });
    cache.set(PROXY, resources({ [LDS]: { l: listener("l") } }));
    const pki = testPki();
    const creds = grpc.credentials.createSsl(Buffer.from(pki.ca.cert), Buffer.from(pki.client.key), Buffer.from(pki.client.cert));
    const s = sotw(server, creds, { "grpc.ssl_target_name_override": "server.dc1.consul" });
    s.send({ typeUrl: LDS, node: NODE });
    const r = await s.next();
    expect(r.resources.map((a) => anyUnpack(a, ListenerSchema)!.name)).toEqual(["l"]);
    // A client without a certificate is refused.
    const anon = sotw(server, grpc.credentials.createSsl(Buffer.from(pki.ca.cert)), { "grpc.ssl_target_name_override": "server.dc1.consul" });
    anon.send({ typeUrl: LDS, node: NODE });
    expect((await anon.status).code).toBe(grpc.status.UNAVAILABLE);
  });

  test("stream limit: RESOURCE_EXHAUSTED with Consul's message past maxStreams", async () => {
    const { cache, server, service } = await start({ maxStreams: 1 });
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a") } }));
    const s = sotw(server);
    s.send({ typeUrl: CDS, node: NODE });
    await s.next();
    const extra = sotw(server);
    extra.send({ typeUrl: CDS, node: NODE });
    const st = await extra.status;
    expect(st.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(st.details).toBe(TOO_MANY_STREAMS);
    expect(service.streamCount()).toBe(1);
    service.closeStreams();
    expect((await s.status).code).toBe(grpc.status.UNAVAILABLE);
  });

  test("updates are rate limited per server on the injected clock; waiting snapshots collapse", async () => {
    const clock = simClock();
    const { cache, server } = await start({ clock, updatesPerSecond: 1 });
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "0") }, [LDS]: { l: listener("l", "0") } }));
    const s = sotw(server);
    s.send({ typeUrl: CDS, node: NODE });
    s.ack(await s.next());
    // The bucket holds one token: the first update goes out at once.
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "1") }, [LDS]: { l: listener("l", "0") } }));
    const c1 = await s.next();
    expect(clusterNames(c1)).toEqual(["a:1"]);
    s.ack(c1);
    // The next two wait for a token and collapse into the newest.
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "2") }, [LDS]: { l: listener("l", "2") } }));
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "3") }, [LDS]: { l: listener("l", "3") } }));
    // A request handled after those updates is still answered from the old snapshot.
    s.send({ typeUrl: LDS });
    const l0 = await s.next();
    expect(l0.resources.map((a) => anyUnpack(a, ListenerSchema)!.statPrefix)).toEqual(["0"]);
    s.ack(l0);
    clock.advance(1000);
    const c3 = await s.next();
    expect(clusterNames(c3)).toEqual(["a:3"]);
    s.ack(c3);
    const l3 = await s.next();
    expect(l3.resources.map((a) => anyUnpack(a, ListenerSchema)!.statPrefix)).toEqual(["3"]);
  });

  test("the first request's user agent reaches the resolver; its key is the cache node the stream follows (SotW and delta)", async () => {
    const seen: NodeIdentity[] = [];
    const { cache, server } = await start({
      resolveNode: () => {
        const resolve = resolveByProxyId((id) => (id === PROXY ? { kind: "connect-proxy", proxylessKey: "view" } : id === "gw" ? { kind: "mesh-gateway" } : undefined));
        return (node) => (node && seen.push(node), resolve(node));
      },
    });
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a") } }));
    cache.set("view", resources({ [CDS]: { g: cluster("g") } }));
    const envoy = sotw(server);
    envoy.send({ typeUrl: CDS, node: NODE });
    const e1 = await envoy.next();
    expect(clusterNames(e1)).toEqual(["a:"]);
    envoy.ack(e1);
    const envoy114 = sotw(server);
    envoy114.send({ typeUrl: CDS, node: { ...NODE, userAgentName: "envoy" } });
    const e2 = await envoy114.next();
    expect(clusterNames(e2)).toEqual(["a:"]);
    envoy114.ack(e2);
    const grpcJs = sotw(server);
    grpcJs.send({ typeUrl: CDS, node: { ...NODE, userAgentName: "gRPC Node Pure JS" } });
    expect(clusterNames(await grpcJs.next())).toEqual(["g:"]);
    const grpcGo = delta(server);
    grpcGo.send({ typeUrl: CDS, node: { ...NODE, userAgentName: "gRPC Go" } });
    expect((await grpcGo.next()).resources.map((r) => r.name)).toEqual(["g"]);
    expect(seen.map((n) => n.userAgentName)).toEqual(["", "envoy", "gRPC Node Pure JS", "gRPC Go"]);
    expect(seen.every((n) => n.id === PROXY && n.cluster === "web")).toBe(true);

    // Each stream follows its own key: removing the view ends the gRPC clients' streams only ...
    cache.remove("view");
    for (const st of await Promise.all([grpcJs.status, grpcGo.status])) {
      expect(st.code).toBe(grpc.status.NOT_FOUND);
      expect(st.details).toBe(`proxy "view" is no longer registered`);
    }
    // ... and Envoy's streams still follow the proxy's resources.
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "v2") } }));
    expect(clusterNames(await envoy.next())).toEqual(["a:v2"]);
    expect(clusterNames(await envoy114.next())).toEqual(["a:v2"]);

    // A proxyless client naming a mesh gateway is refused, and told why.
    cache.set("gw", resources({ [CDS]: { m: cluster("m") } }));
    const toGateway = delta(server);
    toGateway.send({ typeUrl: CDS, node: { id: "gw", cluster: "gw", userAgentName: "gRPC Java" } });
    const st = await toGateway.status;
    expect(st.code).toBe(grpc.status.NOT_FOUND);
    expect(st.details).toBe(`"gw" (node.cluster "gw") is a mesh gateway - its configuration is served to Envoy and the causeway gateway only` +
      ` and not to user agent "gRPC Java" - a proxyless gRPC client names a service ID or a sidecar proxy ID`);
    const gatewayDataPlane = delta(server);
    gatewayDataPlane.send({ typeUrl: CDS, node: { id: "gw", cluster: "gw", userAgentName: "causeway-gateway" } });
    expect((await gatewayDataPlane.next()).resources.map((r) => r.name)).toEqual(["m"]);
  });

  test("metrics: streams open, responses, ACKs and NACKs per type, push latency, refused streams", async () => {
    const metrics = new MetricsRegistry({ now: () => Date.now() });
    const { cache, server } = await start({ metrics });
    const value = (name: string, label?: string) => metrics.series().find((m) => m.name === `consul.${name}` && (label === undefined || m.labels[0]?.[1] === label));
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a") } }));
    const s = sotw(server);
    s.send({ typeUrl: CDS, node: NODE });
    const c1 = await s.next();
    expect(value("xds.server.streams", "sotw")?.value).toBe(1);
    s.ack(c1);
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "x") } }));
    const c2 = await s.next();
    s.send({ typeUrl: CDS, responseNonce: c2.nonce, versionInfo: c1.versionInfo, nack: "no" });
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "y") } }));
    s.ack(await s.next());
    const unknown = sotw(server);
    unknown.send({ typeUrl: CDS, node: { id: "nobody", cluster: "nobody" } });
    expect((await unknown.status).code).toBe(grpc.status.NOT_FOUND);
    s.call.end();
    await s.status;
    expect(value("xds.server.responses", "Cluster")?.total).toBe(3);
    expect(value("xds.server.acks", "Cluster")?.total).toBe(2);
    expect(value("xds.server.nacks", "Cluster")?.total).toBe(1);
    expect(value("xds.server.push_latency")?.count).toBe(2);
    expect(value("xds.server.refused")?.total).toBe(1);
    expect(value("xds.server.streams", "sotw")?.value).toBe(0);
  });

  test("ACLs: the stream's x-consul-token is checked when it opens and before each snapshot; a revoked token ends it", async () => {
    const allowed = new Set(["good"]);
    const seen: (string | undefined)[] = [];
    const { cache, server } = await start({
      authorize: async (_node, token) => {
        seen.push(token);
        if (token === undefined) return { ok: false, code: "unauthenticated", message: "ACL not found" };
        return allowed.has(token) ? { ok: true } : { ok: false, code: "permission-denied", message: "permission denied" };
      },
    });
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a") } }));
    const bad = sotw(server, undefined, {}, { "x-consul-token": "bad" });
    bad.send({ typeUrl: CDS, node: NODE });
    expect(await bad.status).toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: "permission denied" });
    const none = sotw(server);
    none.send({ typeUrl: CDS, node: NODE });
    expect((await none.status).code).toBe(grpc.status.UNAUTHENTICATED);
    const s = sotw(server, undefined, {}, { "x-consul-token": "good" });
    s.send({ typeUrl: CDS, node: NODE });
    s.ack(await s.next());
    allowed.delete("good"); // the token loses its rights
    cache.set(PROXY, resources({ [CDS]: { a: cluster("a", "changed") } }));
    expect(await s.status).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    expect(seen.filter((t) => t === "good").length).toBe(2);
  });
});
