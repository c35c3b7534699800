/**
 * The built-in mesh gateway's xDS client: one ADS stream over ConnectRPC to the agent's gRPC port,
 * delta (DeltaAggregatedResources) by default or state of the world (StreamAggregatedResources),
 * feeding an XdsSink (./xds_sink.ts) with the complete current set of each type.
 *
 * Contract:
 * - Subscribes to Clusters and Listeners by wildcard and to ClusterLoadAssignments by the names
 *   `sink.endpointNames()` gives after each applied Cluster set; Clusters first, Endpoints next,
 *   Listeners last (./xds_client_session.ts).
 * - Hands `sink.apply` the complete set after each response; ACKs when it returns undefined, NACKs
 *   with its reason otherwise and keeps the last good set (a later delta response is applied on top
 *   of that set). The sink is called synchronously, one response at a time, never concurrently.
 * - On a stream failure reconnects after a jittered exponential backoff (./xds_client_backoff.ts),
 *   sending what it holds (`initial_resource_versions` / `version_info`). It never clears the sink:
 *   while disconnected the gateway keeps serving the last good configuration.
 * - `close()` ends the stream, the connection and the timers; the sink is not called afterwards.
 */
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import type { CallOptions } from "@connectrpc/connect";
import { NodeSchema } from "../gen/envoy/config/core/v3/base_pb.ts";
import { AggregatedDiscoveryService } from "../gen/envoy/service/discovery/v3/ads_pb.ts";
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";
import { Backoff, DEFAULT_BACKOFF } from "./xds_client_backoff.ts";
import type { BackoffPolicy } from "./xds_client_backoff.ts";
import { deltaVariant, sotwVariant } from "./xds_client_protocol.ts";
import type { AdsVariant, ResourceTable } from "./xds_client_protocol.ts";
import { AdsSession, newBooks, SUBSCRIBE_ORDER } from "./xds_client_session.ts";
import type { NackRecord, SessionEvent } from "./xds_client_session.ts";
import { authorityOf, dialAds } from "./xds_client_transport.ts";
import type { AdsConnection, AdsTls } from "./xds_client_transport.ts";
import { RequestQueue } from "./xds_client_queue.ts";
import type { XdsSink } from "./xds_sink.ts";

export type { AdsTls } from "./xds_client_transport.ts";
export type { BackoffPolicy } from "./xds_client_backoff.ts";
export type { HeldResource, ResourceTable } from "./xds_client_protocol.ts";
export type { NackRecord, SessionEvent } from "./xds_client_session.ts";

/** `Node.user_agent_name` of the gateway. */
export const USER_AGENT_NAME = "causeway-gateway";

export interface XdsClientOptions {
  /** The agent's gRPC (xDS) address. */
  readonly host: string;
  readonly port: number;
  /** Absent: plaintext h2c. */
  readonly tls?: AdsTls;
  /** node.id = the gateway's service ID; node.cluster = its service name. */
  readonly node: { readonly id: string; readonly cluster: string };
  /** `Node.user_agent_version` (the binary's version). */
  readonly version: string;
  /** Default "delta". */
  readonly protocol?: "delta" | "sotw";
  /** ACL token, sent as `x-consul-token` metadata (as Consul's Envoy bootstrap does). */
  readonly token?: string;
  readonly sink: XdsSink;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /** Reconnect backoff; default 250 ms doubling to 30 s, full jitter. */
  readonly backoff?: BackoffPolicy;
  /** TCP connect + TLS handshake deadline, ms; default 10 s. */
  readonly dialTimeoutMs?: number;
  /** HTTP/2 PING interval, ms (an unanswered PING closes the connection); default 30 s; 0 = off. */
  readonly keepaliveMs?: number;
  /** Observer of stream and update events (admin endpoint, logs, tests). Must not throw. */
  readonly onEvent?: (event: XdsClientEvent) => void;
}

/** What the client reports: session events plus the stream's life. */
export type XdsClientEvent =
  | SessionEvent
  /** The connection is up and the stream's first requests are sent. */
  | { readonly kind: "connected" }
  /** The stream failed or ended; the next attempt starts in `retryInMs`. */
  | { readonly kind: "disconnected"; readonly error: string; readonly retryInMs: number };

/** One subscribed type, for the admin endpoint. */
export interface XdsTypeState {
  readonly typeUrl: string;
  /** Version of the last accepted response ("" before the first). */
  readonly version: string;
  /** Nonce of the last response received. */
  readonly nonce: string;
  /** Resources held (the last good set). */
  readonly count: number;
  readonly applied: number;
  readonly rejected: number;
  readonly lastNack?: NackRecord;
  /** Wall-clock ms of the last accepted update. */
  readonly lastUpdateMs?: number;
}

export interface XdsClientState {
  readonly protocol: "delta" | "sotw";
  /** `host:port` of the agent. */
  readonly server: string;
  /** A connection to the agent is up with the ADS stream open on it. */
  readonly connected: boolean;
  /** Why the last stream ended (or the last dial failed); undefined until one did. */
  readonly lastError?: string;
  /** Clusters, Endpoints, Listeners, in that order. */
  readonly types: readonly XdsTypeState[];
  /** The ClusterLoadAssignment names subscribed to (on the current or last stream). */
  readonly endpointSubscription: readonly string[];
  /** Responses applied / rejected, over all types and streams. */
  readonly updatesApplied: number;
  readonly updatesRejected: number;
  /** Connection attempts after the first. */
  readonly reconnects: number;
}

export interface XdsClient {
  /** A snapshot of the client's state. */
  state(): XdsClientState;
  /** The last good set of a type (for /config_dump); empty for a type never received. */
  resources(typeUrl: string): ResourceTable;
  /** Ends the stream, the connection and every timer. Idempotent; resolves once all of it stopped. */
  close(): Promise<void>;
}

const EMPTY: ResourceTable = new Map();

/** Starts the client: it connects at once and keeps (re)connecting until `close()`. */
export function startXdsClient(o: XdsClientOptions): XdsClient {
  const protocol = o.protocol ?? "delta";
  return protocol === "delta"
    ? run(o, deltaVariant, (c, reqs, opts) => c.deltaAggregatedResources(reqs, opts))
    : run(o, sotwVariant, (c, reqs, opts) => c.streamAggregatedResources(reqs, opts));
}

type AdsClient = ReturnType<typeof createClient<typeof AggregatedDiscoveryService>>;

function run<Req, Resp>(
  o: XdsClientOptions,
  variant: AdsVariant<Req, Resp>,
  call: (client: AdsClient, requests: AsyncIterable<Req>, options: CallOptions) => AsyncIterable<Resp>,
): XdsClient {
  const log = o.logger.named("xds-client");
  const server = authorityOf(o.host, o.port);
  const books = newBooks();
  const backoff = new Backoff(o.backoff ?? DEFAULT_BACKOFF, o.rng);
  const maxBackoff = (o.backoff ?? DEFAULT_BACKOFF).maxMs;
  const node = create(NodeSchema, {
    id: o.node.id,
    cluster: o.node.cluster,
    userAgentName: USER_AGENT_NAME,
    userAgentVersionType: { case: "userAgentVersion", value: o.version },
  });
  const headers: Record<string, string> = o.token ? { "x-consul-token": o.token } : {};
  const emit = (e: XdsClientEvent) => o.onEvent?.(e);

  let closed = false;
  let connected = false;
  let lastError: string | undefined;
  let reconnects = 0;
  let session: AdsSession<Req, Resp> | undefined;
  let stopStream: (() => void) | undefined;
  let cancelSleep: Cancel | undefined;
  let wake: (() => void) | undefined;
  let signalClosed!: () => void;
  const closing = new Promise<void>((resolve) => (signalClosed = resolve));

  const onSessionEvent = (e: SessionEvent) => {
    if (e.kind === "applied") log.debug("xds client: applied", { type_url: e.typeUrl, version: e.version, resources: e.count });
    else if (e.kind === "rejected") log.warn("xds client: rejected an update (NACK)", { type_url: e.typeUrl, version: e.version, reason: e.reason });
    else log.warn("xds client: ignoring a response of a type not subscribed to", { type_url: e.typeUrl });
    emit(e);
  };

  /** One connection and stream, until it fails, ends, or close() stops it. */
  const runOnce = async (): Promise<void> => {
    const dialing = dialAds({
      host: o.host,
      port: o.port,
      tls: o.tls,
      dialTimeoutMs: o.dialTimeoutMs ?? 10_000,
      keepaliveMs: o.keepaliveMs ?? 30_000,
      clock: o.clock,
      logger: log,
    });
    const conn: AdsConnection | undefined = await Promise.race([dialing, closing.then(() => undefined)]);
    if (!conn || closed) {
      conn?.close();
      dialing.then((c) => c.close(), () => {});
      return;
    }
    const requests = new RequestQueue<Req>();
    const abort = new AbortController();
    stopStream = () => {
      abort.abort();
      requests.end();
      conn.close();
    };
    try {
      const s = new AdsSession({ variant, books, sink: o.sink, node, now: () => o.clock.now(), onEvent: onSessionEvent });
      session = s;
      for (const r of s.open()) requests.push(r);
      connected = true;
      log.info("xds client: connected", { server, protocol: variant.name, node_id: o.node.id });
      emit({ kind: "connected" });
      for await (const resp of call(createClient(AggregatedDiscoveryService, conn.transport), requests, { signal: abort.signal, headers })) {
        if (closed) return;
        backoff.reset();
        for (const r of s.onResponse(resp)) requests.push(r);
      }
      throw new Error("the server ended the stream");
    } finally {
      connected = false;
      stopStream = undefined;
      requests.end();
      conn.close();
    }
  };

  const loop = (async () => {
    for (let attempt = 0; !closed; attempt++) {
      if (attempt > 0) reconnects++;
      const openedAt = o.clock.monotonic();
      let error = "";
      try {
        await runOnce();
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
      if (closed) break;
      lastError = error;
      // A stream that stayed up for a whole backoff cap was healthy, even if it carried no response.
      if (o.clock.monotonic() - openedAt >= maxBackoff) backoff.reset();
      const delay = backoff.next();
      log.warn("xds client: disconnected, reconnecting", { server, error, retry_in_ms: delay });
      emit({ kind: "disconnected", error, retryInMs: delay });
      await new Promise<void>((resolve) => {
        wake = resolve;
        cancelSleep = o.clock.setTimer(delay, resolve);
      });
      cancelSleep = undefined;
      wake = undefined;
    }
  })();

  return {
    state: () => ({
      protocol: variant.name,
      server,
      connected,
      lastError,
      types: SUBSCRIBE_ORDER.map((typeUrl) => {
        const b = books.get(typeUrl)!;
        return {
          typeUrl,
          version: b.version,
          nonce: b.nonce,
          count: b.held.size,
          applied: b.applied,
          rejected: b.rejected,
          ...(b.lastNack ? { lastNack: b.lastNack } : {}),
          ...(b.lastUpdateMs !== undefined ? { lastUpdateMs: b.lastUpdateMs } : {}),
        };
      }),
      endpointSubscription: session?.endpointSubscription() ?? [],
      updatesApplied: [...books.values()].reduce((n, b) => n + b.applied, 0),
      updatesRejected: [...books.values()].reduce((n, b) => n + b.rejected, 0),
      reconnects,
    }),
    resources: (typeUrl) => books.get(typeUrl)?.held ?? EMPTY,
    close() {
      if (!closed) {
        closed = true;
        signalClosed();
        stopStream?.();
        cancelSleep?.();
        wake?.();
      }
      return loop;
    },
  };
}
