import { afterEach, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type ConnectRouter } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { openAdsStream } from "../../test/harness/net_helpers.ts";
import { AggregatedDiscoveryService } from "../gen/envoy/service/discovery/v3/ads_pb.ts";
import { DiscoveryRequestSchema, DiscoveryResponseSchema, type DiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { encodeGrpcMessage, respecGrpcMessage } from "./grpc_message.ts";
import { createGrpcServer } from "./http2.ts";
import { silentLogger } from "./logger.ts";

/** Every character encodeURIComponent escapes but the gRPC spec leaves alone, a '%', a control byte and non-ASCII. */
const MESSAGE = "no healthy endpoint, retrying; a/b?c:d@e&f=g+h$i#j 100% [x]\té ☃";

describe("encodeGrpcMessage", () => {
  test("escapes only '%' and bytes outside 0x20-0x7E, as UTF-8", () => {
    expect(encodeGrpcMessage(MESSAGE)).toBe("no healthy endpoint, retrying; a/b?c:d@e&f=g+h$i#j 100%25 [x]%09%C3%A9 %E2%98%83");
    expect(encodeGrpcMessage("")).toBe("");
  });

  test("respecGrpcMessage turns encodeURIComponent's form into the spec's; a broken escape is left as it is", () => {
    expect(respecGrpcMessage(encodeURIComponent(MESSAGE))).toBe(encodeGrpcMessage(MESSAGE));
    expect(respecGrpcMessage("50%")).toBe("50%");
    expect(decodeURIComponent(encodeGrpcMessage(MESSAGE))).toBe(MESSAGE);
  });
});

describe("grpc-message on the wire", () => {
  const open: { close(): unknown }[] = [];
  afterEach(async () => {
    for (const c of open.splice(0).reverse()) await c.close();
  });

  /** An ADS server that fails each stream with MESSAGE, after `answers` responses (0: a trailers-only response). */
  async function failingServer(answers: number) {
    const routes = (router: ConnectRouter) =>
      router.service(AggregatedDiscoveryService, {
        async *streamAggregatedResources(requests: AsyncIterable<DiscoveryRequest>) {
          let n = 0;
          for await (const req of requests) {
            if (n++ >= answers) throw new ConnectError(MESSAGE, Code.Unavailable);
            yield create(DiscoveryResponseSchema, { typeUrl: req.typeUrl });
          }
        },
      });
    const server = createGrpcServer({ routes, logger: silentLogger() });
    open.push(server);
    return `127.0.0.1:${(await server.listen({ host: "127.0.0.1", port: 0 })).port}`;
  }

  for (const answers of [0, 1]) {
    const where = answers === 0 ? "a trailers-only response" : "trailers after a response";
    test(`grpc-js reads the message exactly (${where})`, async () => {
      const { client, call } = openAdsStream(await failingServer(answers), grpc.credentials.createInsecure());
      try {
        const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
        call.on("error", () => {});
        call.on("data", () => {});
        call.write(create(DiscoveryRequestSchema, { typeUrl: "t1" }));
        call.write(create(DiscoveryRequestSchema, { typeUrl: "t2" }));
        const s = await status;
        expect([s.code, s.details]).toEqual([grpc.status.UNAVAILABLE, MESSAGE]);
      } finally {
        client.close();
      }
    });

    test(`a ConnectRPC client (our servers' RPC) reads the message exactly (${where})`, async () => {
      const target = await failingServer(answers);
      const ads = createClient(AggregatedDiscoveryService, createGrpcTransport({ baseUrl: `http://${target}` }));
      async function* requests() {
        yield create(DiscoveryRequestSchema, { typeUrl: "t1" });
        yield create(DiscoveryRequestSchema, { typeUrl: "t2" });
      }
      const err = await (async () => {
        for await (const _ of ads.streamAggregatedResources(requests())) { /* drain */ }
      })().then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect([(err as ConnectError).code, (err as ConnectError).rawMessage]).toEqual([Code.Unavailable, MESSAGE]);
    });
  }
});
