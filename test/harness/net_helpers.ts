/**
 * Helpers for the networking tests, shared by the Bun platform tests (src/platform/*.test.ts) and
 * the Deno smoke suite (test/runtime/deno/net_smoke.test.ts).
 *
 * Loads under both runtimes: node-compatible modules and src/platform only, no test framework.
 * Everything listens and dials on 127.0.0.1 and uses the shared test PKI (./tls_fixtures.ts).
 * Nothing here sleeps: waits resolve on events, and the test runner's timeout bounds them.
 */
import { Buffer } from "node:buffer";
import type * as net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { AggregatedDiscoveryService } from "../../src/gen/envoy/service/discovery/v3/ads_pb.ts";
import { DiscoveryRequestSchema, DiscoveryResponseSchema } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createLogger } from "../../src/platform/logger.ts";
import type { Logger } from "../../src/platform/logger.ts";
import { createProtocolMux } from "../../src/platform/mux.ts";
import type { ProtocolMux, ProtocolMuxOptions } from "../../src/platform/mux.ts";
import { dialTcp, listenTcp } from "../../src/platform/tcp.ts";
import type { TcpListener } from "../../src/platform/tcp.ts";
import { dialTls } from "../../src/platform/tls.ts";
import type { DialTlsOptions } from "../../src/platform/tls.ts";
import { testPki } from "./tls_fixtures.ts";

const HOST = "127.0.0.1";

/** The server name in the test PKI's server certificate (see tls_fixtures.ts). */
const SERVER_NAME = "server.dc1.consul";

// ---------------------------------------------------------------------------------------------
// Logs

/** A logger whose output can be inspected and awaited; see {@link watchedLogger}. */
export interface WatchedLogger {
  /** Logs at every level (trace and up), text format, timestamps fixed at the epoch. */
  readonly logger: Logger;
  /** Every line so far, in order (the live array). */
  readonly lines: string[];
  /**
   * Resolves with the first line, already written or yet to come, that matches `re`. Never
   * rejects and has no deadline of its own: the test runner's timeout bounds the wait.
   */
  waitFor(re: RegExp): Promise<string>;
}

/** A logger whose lines can be awaited, so tests wait for a log line instead of sleeping. */
export function watchedLogger(): WatchedLogger {
  const lines: string[] = [];
  const waiters: Array<{ re: RegExp; resolve: (line: string) => void }> = [];
  const logger = createLogger("", {
    level: "trace",
    now: () => 0,
    sink: (line) => {
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    },
  });
  const waitFor = (re: RegExp) =>
    new Promise<string>((resolve) => {
      const hit = lines.find((l) => re.test(l));
      if (hit) resolve(hit);
      else waiters.push({ re, resolve });
    });
  return { logger, lines, waitFor };
}

// ---------------------------------------------------------------------------------------------
// Sockets and the protocol mux

/**
 * Resumes `sock` and resolves once at least `n` bytes have arrived, with all of them (possibly
 * more than `n` if the last chunk overshoots). Rejects on a socket 'error'. Stops listening for
 * data once satisfied; the socket stays flowing and open (the caller closes it).
 */
export function readExactly(sock: net.Socket, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let have = 0;
    const onData = (d: Buffer) => {
      parts.push(d);
      have += d.length;
      if (have >= n) {
        sock.off("data", onData);
        resolve(Buffer.concat(parts));
      }
    };
    sock.on("data", onData);
    sock.once("error", reject);
    sock.resume();
  });
}

/** A protocol mux listening on 127.0.0.1, with a watched logger; see {@link startMux}. */
export interface StartedMux extends WatchedLogger {
  readonly mux: ProtocolMux;
  readonly listener: TcpListener;
  /** Closes the mux, then the listener. */
  close(): Promise<void>;
}

/**
 * Starts a protocol mux behind a TCP listener on an ephemeral 127.0.0.1 port, logging to a
 * {@link watchedLogger}. With `withTls` (the default) it terminates TLS with the test PKI's server
 * certificate and requires a client certificate signed by the test CA. `extra` overrides any option,
 * `tls` included. The caller owns the result and must `close()` it.
 */
export async function startMux(extra: Partial<ProtocolMuxOptions> = {}, withTls = true): Promise<StartedMux> {
  const pki = testPki();
  const log = watchedLogger();
  const mux = createProtocolMux({
    logger: log.logger,
    tls: withTls
      ? { material: { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key }, requireClientCert: true }
      : undefined,
    ...extra,
  });
  const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => mux.accept(s) });
  return {
    mux,
    listener,
    ...log,
    close: async () => {
      mux.close();
      await listener.close();
    },
  };
}

/**
 * Dials TLS to 127.0.0.1:`port` (trusting the test CA, SNI server.dc1.consul, 4 s handshake
 * deadline; `opts` overrides any of it) and waits until the server closes the connection, which
 * the caller expects it to refuse. Returns the client's local port, to find the server's log line
 * (`remote=127.0.0.1:<port>`). A refusal may come during the handshake (dial rejects; TLS 1.2
 * style) or after it (TLS 1.3 checks the client certificate after the client has finished):
 * both are accepted, only the close is awaited.
 */
export async function dialRefused(port: number, opts: Partial<DialTlsOptions>): Promise<number> {
  const raw = await dialTcp({ host: HOST, port });
  const localPort = raw.localPort!;
  raw.on("error", () => {});
  const closed = new Promise((r) => raw.once("close", r));
  try {
    const t = await dialTls({ socket: raw, ca: testPki().ca.cert, servername: SERVER_NAME, timeoutMs: 4000, ...opts });
    t.on("error", () => {});
    t.resume();
  } catch {
    // refused during the handshake (TLS 1.2 style); TLS 1.3 refuses client certs after it.
  }
  await closed;
  return localPort;
}

// ---------------------------------------------------------------------------------------------
// ADS over gRPC

/** The HTTP/2 path of the ADS bidi method (envoy.service.discovery.v3.AggregatedDiscoveryService). */
export const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources";

/** The type URLs {@link adsRoundTrip} requests by default, in this order. */
export const ADS_TYPES: readonly string[] = [
  "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  "type.googleapis.com/envoy.config.listener.v3.Listener",
  "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
];

/**
 * Test-only ADS routes (pass as `createGrpcServer({ routes: echoAds })`): answers each request,
 * in order, with one response whose `versionInfo` and `typeUrl` both echo the request's `typeUrl`.
 */
export function echoAds(router: ConnectRouter): void {
  router.service(AggregatedDiscoveryService, {
    async *streamAggregatedResources(requests: AsyncIterable<DiscoveryRequest>) {
      for await (const req of requests) yield create(DiscoveryResponseSchema, { versionInfo: req.typeUrl, typeUrl: req.typeUrl });
    },
  });
}

/** An open ADS stream from a real grpc-js client; see {@link openAdsStream}. */
export interface AdsStream {
  readonly client: grpc.Client;
  readonly call: grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>;
}

/**
 * Opens one ADS bidi stream to `target` (`host:port`) with a real grpc-js client (generic client,
 * protobuf-es codecs). The caller owns both: it must listen for 'error' on the call and
 * `client.close()` when done.
 */
export function openAdsStream(
  target: string,
  creds: grpc.ChannelCredentials,
  channelOptions: grpc.ChannelOptions = {},
  metadata: Readonly<Record<string, string>> = {},
): AdsStream {
  const Client = grpc.makeGenericClientConstructor({}, "ads");
  const client = new Client(target, creds, channelOptions);
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(metadata)) md.set(k, v);
  const call = client.makeBidiStreamRequest(
    ADS_PATH,
    (m: DiscoveryRequest) => Buffer.from(toBinary(DiscoveryRequestSchema, m)),
    (b: Buffer) => fromBinary(DiscoveryResponseSchema, b),
    md,
  );
  return { client, call };
}

/**
 * Runs one ADS bidi stream with a real grpc-js client: sends one request per entry of `typeUrls`,
 * each only after the previous one was answered, then half-closes and waits for the final status.
 * Returns the `versionInfo` of each response in order (with {@link echoAds}: `typeUrls` itself) and
 * the status. Rejects if the stream errors before every response arrived. Always closes the client.
 */
export async function adsRoundTrip(
  target: string,
  creds: grpc.ChannelCredentials,
  channelOptions: grpc.ChannelOptions = {},
  typeUrls: readonly string[] = ADS_TYPES,
): Promise<{ versions: string[]; status: grpc.StatusObject }> {
  const { client, call } = openAdsStream(target, creds, channelOptions);
  try {
    const status = new Promise<grpc.StatusObject>((resolve) => call.on("status", resolve));
    const versions: string[] = [];
    const next = () =>
      new Promise<DiscoveryResponse>((resolve, reject) => {
        call.once("data", resolve);
        call.once("error", reject);
      });
    for (const typeUrl of typeUrls) {
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
