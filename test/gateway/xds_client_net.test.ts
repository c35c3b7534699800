/**
 * The gateway's xDS client on the wire: TLS and mTLS to the real ADS server, a refused certificate,
 * what its first requests carry (node, user agent, token metadata) as a scripted server sees them, and
 * the HTTP/2 keepalive that notices a connection that went silent. Port 0, bounded waits, no sleeps.
 */
import { describe, expect, test } from "bun:test";
import * as net from "node:net";
import { create } from "@bufbuild/protobuf";
import { startXdsClient, USER_AGENT_NAME } from "../../src/gateway/xds_client.ts";
import type { XdsClient, XdsClientOptions } from "../../src/gateway/xds_client.ts";
import { AggregatedDiscoveryService } from "../../src/gen/envoy/service/discovery/v3/ads_pb.ts";
import { DeltaDiscoveryResponseSchema } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DeltaDiscoveryRequest } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createGrpcServer, createLogger, seededRng, silentLogger, systemClock } from "../../src/platform/index.ts";
import { testPki } from "../harness/tls_fixtures.ts";
import { CDS, cla, cluster, EDS, EventLog, GATEWAY_ID, GATEWAY_SERVICE, LDS, listener, RecordingSink, setGateway, startAgent, withGateway } from "./xds_fixture.ts";

const pki = testPki();
const BASE = { clusters: [cluster("a")], endpoints: [cla("a")], listeners: [listener("l")] };

function options(port: number, sink: RecordingSink, log: EventLog, extra: Partial<XdsClientOptions> = {}): XdsClientOptions {
  return {
    host: "127.0.0.1",
    port,
    node: { id: GATEWAY_ID, cluster: GATEWAY_SERVICE },
    version: "1.2.3",
    sink,
    clock: systemClock(),
    rng: seededRng(7),
    logger: silentLogger(),
    backoff: { baseMs: 10, maxMs: 100 },
    onEvent: log.onEvent,
    ...extra,
  };
}

describe("xds client over TLS", () => {
  const serverTls = (requireClientCert: boolean) => ({ material: { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key }, requireClientCert });

  test("mTLS to an agent that verifies incoming certificates", async () => {
    const tls = { ca: pki.ca.cert, serverName: "server.dc1.consul", cert: pki.client.cert, key: pki.client.key };
    await withGateway({ agent: { tls: serverTls(true) }, resources: BASE, client: { tls } }, async ({ sink, log, client }) => {
      await log.applied(LDS);
      expect([sink.names(CDS), sink.names(EDS), sink.names(LDS)]).toEqual([["a"], ["a"], ["l"]]);
      expect(client.state().connected).toBe(true);
    });
  });

  test("an agent certificate from an unknown CA is refused and retried; nothing reaches the sink", async () => {
    const tls = { ca: pki.rogueCa.cert, serverName: "server.dc1.consul" };
    await withGateway({ agent: { tls: serverTls(false) }, resources: BASE, client: { tls } }, async ({ sink, log, client }) => {
      const first = await log.waitFor((e) => e.kind === "disconnected");
      await log.waitFor((e) => e.kind === "disconnected", first + 1); // retried
      expect(client.state().lastError).toContain("certificate");
      expect(client.state().connected).toBe(false);
      expect(log.events.some((e) => e.kind === "connected")).toBe(false);
      expect(sink.calls).toEqual([]);
    });
  });
});

describe("xds client requests as a scripted server sees them", () => {
  test("the stream's first request names the node and user agent, carries the token, and subscribes to clusters by wildcard", async () => {
    const seen: DeltaDiscoveryRequest[] = [];
    const tokens: Array<string | null> = [];
    let gotTwo!: () => void;
    const two = new Promise<void>((resolve) => (gotTwo = resolve));
    const server = createGrpcServer({
      logger: silentLogger(),
      routes: (r) =>
        r.service(AggregatedDiscoveryService, {
          async *deltaAggregatedResources(requests, ctx) {
            tokens.push(ctx.requestHeader.get("x-consul-token"));
            for await (const req of requests) {
              seen.push(req);
              if (seen.length === 1) {
                yield create(DeltaDiscoveryResponseSchema, { typeUrl: req.typeUrl, nonce: "n1", systemVersionInfo: "v1" });
              }
              if (seen.length === 3) gotTwo();
            }
          },
          // deno-lint-ignore require-yield
          async *streamAggregatedResources() {
            throw new Error("not used");
          },
        }),
    });
    const listenerH2 = await server.listen({ host: "127.0.0.1", port: 0 });
    const sink = new RecordingSink();
    const log = new EventLog();
    const client = startXdsClient(options(listenerH2.port, sink, log, { token: "secret-token" }));
    try {
      await two;
      expect(tokens).toEqual(["secret-token"]);
      const [first, ...rest] = seen;
      expect(first!.typeUrl).toBe(CDS);
      expect(first!.node?.id).toBe(GATEWAY_ID);
      expect(first!.node?.cluster).toBe(GATEWAY_SERVICE);
      expect(first!.node?.userAgentName).toBe(USER_AGENT_NAME);
      expect(first!.node?.userAgentVersionType).toEqual({ case: "userAgentVersion", value: "1.2.3" });
      expect(first!.resourceNamesSubscribe).toEqual([]);
      expect(first!.initialResourceVersions).toEqual({});
      // After the empty Cluster set: Endpoints (no names yet) are subscribed, then the ACK.
      expect(rest.map((r) => [r.typeUrl, r.node === undefined, r.responseNonce, r.resourceNamesSubscribe])).toEqual([
        [EDS, true, "", []],
        [CDS, true, "n1", []],
      ]);
      expect(rest[1]!.errorDetail).toBeUndefined();
    } finally {
      await client.close();
      await server.close();
    }
  });
});

/** A TCP relay to `port` whose open connections can be frozen (bytes stop flowing both ways). */
async function relay(port: number) {
  const pairs: Array<[net.Socket, net.Socket]> = [];
  const server = net.createServer((down) => {
    const up = net.connect({ host: "127.0.0.1", port });
    down.on("error", () => {});
    up.on("error", () => {});
    down.pipe(up);
    up.pipe(down);
    down.once("close", () => up.destroy());
    up.once("close", () => down.destroy());
    pairs.push([down, up]);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze() {
      for (const [down, up] of pairs) {
        down.unpipe(up);
        up.unpipe(down);
        down.pause();
        up.pause();
      }
    },
    close() {
      for (const [down, up] of pairs) {
        down.destroy();
        up.destroy();
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("xds client keepalive", () => {
  test("PINGs keep a healthy connection; a connection that goes silent is closed and the client reconnects", async () => {
    const agent = await startAgent();
    const r = await relay(agent.port);
    const sink = new RecordingSink();
    const log = new EventLog();
    let answered = 0;
    let threeAnswered!: () => void;
    const three = new Promise<void>((resolve) => (threeAnswered = resolve));
    const logger = createLogger("", {
      level: "trace",
      sink: (line) => {
        if (line.includes("keepalive PING answered") && ++answered === 3) threeAnswered();
      },
    });
    let client: XdsClient | undefined;
    try {
      setGateway(agent.cache, BASE);
      client = startXdsClient(options(r.port, sink, log, { keepaliveMs: 25, logger }));
      await log.applied(LDS);
      await three;
      expect(log.events.some((e) => e.kind === "disconnected")).toBe(false);
      const m = log.mark();
      r.freeze();
      const i = await log.waitFor((e) => e.kind === "disconnected", m);
      expect((log.events[i] as { error: string }).error).toContain("keepalive");
      await log.waitFor((e) => e.kind === "connected", i);
      expect(client.state().connected).toBe(true);
      expect(sink.names(CDS)).toEqual(["a"]);
    } finally {
      await client?.close();
      await r.close();
      await agent.close();
    }
  });
});
