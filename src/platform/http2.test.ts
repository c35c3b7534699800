import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import type * as tls from "node:tls";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { ADS_TYPES as TYPES, adsRoundTrip, echoAds, openAdsStream, startMux } from "../../test/harness/net_helpers.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { DiscoveryRequestSchema } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createGrpcServer } from "./http2.ts";
import { silentLogger } from "./logger.ts";

const pki = testPki();
const HOST = "127.0.0.1";

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
    expect(versions).toEqual([...TYPES]);
    expect(status.code).toBe(grpc.status.OK);
  });

  test("bidi stream over mTLS through the mux with ALPN h2", async () => {
    const server = createGrpcServer({ routes: echoAds, logger: silentLogger() });
    const m = await startMux();
    let viaMux = 0;
    m.mux.registerAlpn("h2", (sock, info) => {
      viaMux++;
      expect(info.alpn).toBe("h2");
      server.acceptTlsSocket(sock as tls.TLSSocket);
    });
    open.push(server, m);
    const creds = grpc.credentials.createSsl(
      Buffer.from(pki.ca.cert), Buffer.from(pki.client.key), Buffer.from(pki.client.cert),
    );
    const { versions, status } = await adsRoundTrip(`${HOST}:${m.listener.port}`, creds, {
      "grpc.ssl_target_name_override": "server.dc1.consul",
    });
    expect(versions).toEqual([...TYPES]);
    expect(status.code).toBe(grpc.status.OK);
    expect(viaMux).toBe(1);
  });

  test("close() ends sessions with an open stream promptly", async () => {
    const server = createGrpcServer({ routes: echoAds, logger: silentLogger() });
    const listener = await server.listen({ host: HOST, port: 0 });
    const { client, call } = openAdsStream(`${HOST}:${listener.port}`, grpc.credentials.createInsecure());
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
