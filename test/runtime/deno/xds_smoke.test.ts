/**
 * Deno smoke suite: the ADS server (src/xds createXdsCache, createAdsService, serveAds) on port 0 over
 * h2c, and a proxyless client stream from @grpc/grpc-js (generic client, protobuf-es codecs), state of
 * the world and delta: the stream receives one Cluster and its ClusterLoadAssignment, ACKs them, and
 * receives the new endpoints after a cache set; an unknown node is refused with NOT_FOUND.
 *
 * Why grpc-js and not a ConnectRPC client: on Deno 2.9.6, a ConnectRPC client stream (connect-node's
 * createGrpcTransport over node:http2) crashed the runtime with a segfault (a bad free() in a tokio
 * worker) in about half the runs; grpc-js over the same node:http2 did not.
 * Run: npx deno test -A test/runtime/deno/xds_smoke.test.ts
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type Message, type MessageInitShape } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { ClusterSchema, Cluster_DiscoveryType } from "../../../src/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../src/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { ClusterLoadAssignment } from "../../../src/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { AggregatedDiscoveryService } from "../../../src/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  DeltaDiscoveryRequestSchema, DeltaDiscoveryResponseSchema, DiscoveryRequestSchema, DiscoveryResponseSchema,
} from "../../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { silentLogger, systemClock } from "../../../src/platform/index.ts";
import {
  CLUSTER_TYPE as CDS, ENDPOINT_TYPE as EDS, createAdsService, createXdsCache, resolveByProxyId, serveAds,
  type ResourceSet, type ResourceValue, type XdsCache,
} from "../../../src/xds/index.ts";

const HOST = "127.0.0.1";
const PROXY = "web-sidecar-proxy";
const NODE = { id: PROXY, cluster: "web" };
const DB = "db.default.dc1.internal.11111111-2222-3333-4444-555555555555.consul";
const opts = { sanitizeOps: false, sanitizeResources: false };

/** One EDS cluster and its endpoints (one per port), as proxycfg would set them for a sidecar. */
function resources(ports: readonly number[]): ResourceSet {
  const cluster = create(ClusterSchema, {
    name: DB,
    clusterDiscoveryType: { case: "type", value: Cluster_DiscoveryType.EDS },
    edsClusterConfig: { edsConfig: { resourceApiVersion: 2, configSourceSpecifier: { case: "ads", value: {} } } },
  });
  const cla = create(ClusterLoadAssignmentSchema, {
    clusterName: DB,
    endpoints: [{
      lbEndpoints: ports.map((port) => ({
        hostIdentifier: {
          case: "endpoint" as const,
          value: { address: { address: { case: "socketAddress" as const, value: { address: HOST, portSpecifier: { case: "portValue" as const, value: port } } } } },
        },
      })),
    }],
  });
  return new Map<string, ReadonlyMap<string, ResourceValue>>([[CDS, new Map([[DB, cluster]])], [EDS, new Map([[DB, cla]])]]);
}

const portsOf = (cla: ClusterLoadAssignment) =>
  cla.endpoints.flatMap((l) => l.lbEndpoints.map((e) => {
    const a = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
    return a?.case === "socketAddress" && a.value.portSpecifier.case === "portValue" ? a.value.portSpecifier.value : -1;
  }));

/** Reads a grpc-js bidi call message by message; `next` rejects once the call has ended. */
function reader<Req, T>(call: grpc.ClientDuplexStream<Req, T>) {
  const queue: T[] = [];
  const waiters: Array<{ resolve: (m: T) => void; reject: (e: Error) => void }> = [];
  let ended: grpc.StatusObject | undefined;
  const status = new Promise<grpc.StatusObject>((resolve) =>
    call.on("status", (s: grpc.StatusObject) => {
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
  const next = () =>
    queue.length > 0
      ? Promise.resolve(queue.shift()!)
      : ended
      ? Promise.reject(new Error(`stream ended: ${ended.code} ${ended.details}`))
      : new Promise<T>((resolve, reject) => waiters.push({ resolve, reject }));
  return { status, next };
}

/** Opens a bidi ADS call (`method` of AggregatedDiscoveryService) with protobuf-es codecs. */
function open<Req extends Message, Resp extends Message>(client: grpc.Client, method: string, req: GenMessage<Req>, resp: GenMessage<Resp>) {
  const call = client.makeBidiStreamRequest(
    `/${AggregatedDiscoveryService.typeName}/${method}`,
    (m: Req) => Buffer.from(toBinary(req, m)),
    (b: Buffer) => fromBinary(resp, b),
  );
  return { call, ...reader<Req, Resp>(call), send: (o: MessageInitShape<GenMessage<Req>>) => void call.write(create(req, o)) };
}

/** Starts the ADS server (h2c, port 0, no update limit) over `cache`, and a client channel to it. */
async function startServer(cache: XdsCache) {
  const service = createAdsService({
    cache,
    resolveNode: resolveByProxyId((id) => cache.get(id) !== undefined),
    clock: systemClock(),
    logger: silentLogger(),
    updatesPerSecond: 0,
  });
  const server = await serveAds({ service, logger: silentLogger(), host: HOST, port: 0 });
  const Client = grpc.makeGenericClientConstructor({}, "ads");
  const client = new Client(`${HOST}:${server.port}`, grpc.credentials.createInsecure());
  return { service, server, client, close: async () => { client.close(); await server.close(); } };
}

Deno.test("xds: SotW ADS stream over h2c from a grpc-js client: CDS, EDS, ACKs, an update", opts, async () => {
  const cache = createXdsCache();
  cache.set(PROXY, resources([9001]));
  const { service, client, close } = await startServer(cache);
  try {
    const s = open(client, "StreamAggregatedResources", DiscoveryRequestSchema, DiscoveryResponseSchema);
    s.send({ typeUrl: CDS, node: NODE });
    const cds = await s.next();
    assert.equal(cds.typeUrl, CDS);
    assert.match(cds.versionInfo, /^[0-9a-f]{32}$/);
    assert.deepEqual(cds.resources.map((a) => anyUnpack(a, ClusterSchema)!.name), [DB]);
    s.send({ typeUrl: CDS, versionInfo: cds.versionInfo, responseNonce: cds.nonce });
    s.send({ typeUrl: EDS, resourceNames: [DB] });
    const eds = await s.next();
    assert.equal(eds.typeUrl, EDS);
    assert.deepEqual(portsOf(anyUnpack(eds.resources[0]!, ClusterLoadAssignmentSchema)!), [9001]);
    s.send({ typeUrl: EDS, resourceNames: [DB], versionInfo: eds.versionInfo, responseNonce: eds.nonce });
    assert.equal(service.streamCount(), 1);

    // Only the endpoints change: one EDS response, a new version, the new endpoint set.
    assert.deepEqual(cache.set(PROXY, resources([9001, 9002])), [EDS]);
    const eds2 = await s.next();
    assert.equal(eds2.typeUrl, EDS);
    assert.notEqual(eds2.versionInfo, eds.versionInfo);
    assert.notEqual(eds2.nonce, eds.nonce);
    assert.deepEqual(portsOf(anyUnpack(eds2.resources[0]!, ClusterLoadAssignmentSchema)!), [9001, 9002]);
    s.send({ typeUrl: EDS, resourceNames: [DB], versionInfo: eds2.versionInfo, responseNonce: eds2.nonce });
    s.call.end();
    assert.equal((await s.status).code, grpc.status.OK);
  } finally {
    await close();
  }
});

Deno.test("xds: delta ADS stream over h2c from a grpc-js client: CDS, EDS, ACKs, an update; unknown node refused", opts, async () => {
  const cache = createXdsCache();
  cache.set(PROXY, resources([9001]));
  const { client, close } = await startServer(cache);
  try {
    const d = open(client, "DeltaAggregatedResources", DeltaDiscoveryRequestSchema, DeltaDiscoveryResponseSchema);
    d.send({ typeUrl: CDS, node: NODE });
    const cds = await d.next();
    assert.equal(cds.typeUrl, CDS);
    assert.deepEqual(cds.resources.map((r) => r.name), [DB]);
    assert.equal(anyUnpack(cds.resources[0]!.resource!, ClusterSchema)!.name, DB);
    d.send({ typeUrl: CDS, responseNonce: cds.nonce });
    d.send({ typeUrl: EDS, resourceNamesSubscribe: [DB] });
    const eds = await d.next();
    assert.equal(eds.typeUrl, EDS);
    const v1 = eds.resources[0]!.version;
    assert.deepEqual(portsOf(anyUnpack(eds.resources[0]!.resource!, ClusterLoadAssignmentSchema)!), [9001]);
    d.send({ typeUrl: EDS, responseNonce: eds.nonce });

    cache.set(PROXY, resources([9002]));
    const eds2 = await d.next();
    assert.equal(eds2.typeUrl, EDS);
    assert.deepEqual(eds2.resources.map((r) => r.name), [DB]);
    assert.notEqual(eds2.resources[0]!.version, v1);
    assert.deepEqual(eds2.removedResources, []);
    assert.deepEqual(portsOf(anyUnpack(eds2.resources[0]!.resource!, ClusterLoadAssignmentSchema)!), [9002]);
    d.send({ typeUrl: EDS, responseNonce: eds2.nonce });
    d.call.end();
    assert.equal((await d.status).code, grpc.status.OK);

    // A node the cache does not know: NOT_FOUND, naming what it sent.
    const bad = open(client, "DeltaAggregatedResources", DeltaDiscoveryRequestSchema, DeltaDiscoveryResponseSchema);
    bad.send({ typeUrl: CDS, node: { id: "nope", cluster: "ghost" } });
    const st = await bad.status;
    assert.equal(st.code, grpc.status.NOT_FOUND);
    assert.match(st.details, /unknown proxy "nope" \(node\.cluster "ghost"\)/);
  } finally {
    await close();
  }
});
