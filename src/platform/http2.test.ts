import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { AggregatedDiscoveryService } from "../gen/envoy/service/discovery/v3/ads_pb.ts";
import { DiscoveryRequestSchema, DiscoveryResponseSchema } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createGrpcServer } from "./http2.ts";
import { silentLogger } from "./logger.ts";
import { createProtocolMux } from "./mux.ts";
import { listenTcp } from "./tcp.ts";

const pki = testPki();
const HOST = "127.0.0.1";
const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";
const TYPES = [
  "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  "type.googleapis.com/envoy.config.listener.v3.Listener",
  "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
];

/** Test-only ADS: answers each request with a response whose versionInfo echoes its typeUrl. */
function echoAds(router: ConnectRouter): void {
  router.service(AggregatedDiscoveryService, {
    async *streamAggregatedResources(requests: AsyncIterable<DiscoveryRequest>) {
      for await (const req of requests) yield create(DiscoveryResponseSchema, { versionInfo: req.typeUrl, typeUrl: req.typeUrl });
    },
  });
}

/** Runs one bidi stream with a real grpc-js client: sends TYPES one at a time, returns the echoed versions. */
async function adsRoundTrip(target: string, creds: grpc.ChannelCredentials, channelOptions: grpc.ChannelOptions = {}) {
  const Client = grpc.makeGenericClientConstructor({}, "ads");
  const client = new Client(target, creds, channelOptions);
  try {
    const call = client.makeBidiStreamRequest(
      ADS_PATH,
      (m: DiscoveryRequest) => Buffer.from(toBinary(DiscoveryRequestSchema, m)),
      (b: Buffer) => fromBinary(DiscoveryResponseSchema, b),
    );
    const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    const versions: string[] = [];
    const next = () => new Promise<DiscoveryResponse>((resolve, reject) => {
      call.once("data", resolve);
      call.once("error", reject);
    });
    for (const typeUrl of TYPES) {
      const reply = next();
      call.write(create(DiscoveryRequestSchema, { typeUrl }));
      versions.push((await reply).versionInfo);
    }
    call.end();
    call.on("data", () => {});
    call.on("error", () => {});
    return { versions, status: await status };
  } finally {
    client.close();
  }
}

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c.close();
});

describe("grpc server (http2)", () => {
  test("bidi stream over h2c with a real grpc-js client", async () => {
    const server = createGrpcServer({ routes: echoAds, logger: silentLogger() });
    open.push(server);
    const listener = await server.listen({ host: HOST, port: 0 });
    expect(listener.port).toBeGreaterThan(0);
    const { versions, status } = await adsRoundTrip(`${HOST}:${listener.port}`, grpc.credentials.createInsecure());
    expect(versions).toEqual(TYPES);
    expect(status.code).toBe(grpc.status.OK);
  });

  test("bidi stream over mTLS through the mux with ALPN h2", async () => {
    const server = createGrpcServer({ routes: echoAds, logger: silentLogger() });
    const mux = createProtocolMux({
      logger: silentLogger(),
      tls: { material: { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key }, requireClientCert: true },
    });
    let viaMux = 0;
    mux.registerAlpn("h2", (sock, info) => {
      viaMux++;
      expect(info.alpn).toBe("h2");
      server.acceptTlsSocket(sock as import("node:tls").TLSSocket);
    });
    const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => mux.accept(s) });
    open.push(server, listener, mux);
    const creds = grpc.credentials.createSsl(
      Buffer.from(pki.ca.cert), Buffer.from(pki.client.key), Buffer.from(pki.client.cert),
    );
    const { versions, status } = await adsRoundTrip(`${HOST}:${listener.port}`, creds, {
      "grpc.ssl_target_name_override": "server.dc1.consul",
    });
    expect(versions).toEqual(TYPES);
    expect(status.code).toBe(grpc.status.OK);
    expect(viaMux).toBe(1);
  });

  test("close() ends sessions with an open stream promptly", async () => {
    const server = createGrpcServer({ routes: echoAds, logger: silentLogger() });
    const listener = await server.listen({ host: HOST, port: 0 });
    const Client = grpc.makeGenericClientConstructor({}, "ads");
    const client = new Client(`${HOST}:${listener.port}`, grpc.credentials.createInsecure());
    const call = client.makeBidiStreamRequest(
      ADS_PATH,
      (m: DiscoveryRequest) => Buffer.from(toBinary(DiscoveryRequestSchema, m)),
      (b: Buffer) => fromBinary(DiscoveryResponseSchema, b),
    );
    call.on("error", () => {});
    const first = new Promise((resolve) => call.once("data", resolve));
    call.write(create(DiscoveryRequestSchema, { typeUrl: TYPES[0] }));
    await first;
    expect(server.sessionCount()).toBe(1);
    const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    await server.close();
    expect(server.sessionCount()).toBe(0);
    expect((await status).code).not.toBe(grpc.status.OK);
    client.close();
  });
});
