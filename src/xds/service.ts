/**
 * The Aggregated Discovery Service (envoy.service.discovery.v3.AggregatedDiscoveryService) as
 * plain-object ConnectRPC handlers over the xDS cache: StreamAggregatedResources (state of the world,
 * ./protocol/sotw.ts) and DeltaAggregatedResources (incremental, ./protocol/delta.ts).
 *
 * Each stream: the first request names the node (its ID, cluster and user agent name), `resolveNode` maps
 * it to a cache node ID (or the stream ends with NOT_FOUND / INVALID_ARGUMENT); the stream then follows
 * that cache node's snapshots. The first snapshot a stream sees is applied at once; every later one
 * waits for a token of the server's update limiter (Consul's `xds.update_max_per_second`), and
 * snapshots that arrive while waiting collapse into the newest. Removing the node from the cache ends
 * its streams with NOT_FOUND.
 */
import type { ConnectRouter, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { AggregatedDiscoveryService } from "../gen/envoy/service/discovery/v3/ads_pb.ts";
import type { Clock, Logger } from "../platform/index.ts";
import type { NodeSnapshot, XdsCache } from "./cache/cache.ts";
import { EventQueue } from "./events.ts";
import { describeNode } from "./node.ts";
import type { ResolveNode } from "./node.ts";
import { ProtocolError } from "./protocol/common.ts";
import type { RequestOutcome } from "./protocol/common.ts";
import { DeltaStream } from "./protocol/delta.ts";
import { SotwStream } from "./protocol/sotw.ts";
import { createUpdateLimiter, DEFAULT_UPDATES_PER_SECOND } from "./rate_limit.ts";
import { XdsMetrics } from "./xds_metrics.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";

/**
 * The refusal when a server has more xDS streams than allowed: Consul's text (agent/grpc-external/
 * limiter) with its comma written as " - ". Error messages here avoid `,;/?:@&=+$#`: ConnectRPC sends
 * grpc-message with encodeURIComponent and @grpc/grpc-js reads it with decodeURI, which leaves those
 * characters percent-encoded (a comma would reach grpc-js clients as "%2C").
 */
export const TOO_MANY_STREAMS = "this server has too many xDS streams open - please try another";

/**
 * Handler options of the ADS service: responses are never compressed. ConnectRPC would gzip every
 * response of 1 KiB or more for a client that accepts gzip (@grpc/grpc-js and gRPC C++ clients say
 * they do); Consul's grpc-go server compresses only when configured to, which it is not, so Envoy gets
 * uncompressed responses. Gzip was more than half of the server's CPU when one change reached 1,000
 * SotW streams (test/bench/xds.ts). Compressed requests are still accepted.
 */
const ADS_HANDLER_OPTIONS = { compressMinBytes: Number.MAX_SAFE_INTEGER } as const;

export interface AdsServiceOptions {
  readonly cache: XdsCache;
  readonly resolveNode: ResolveNode;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Snapshot updates per second across all streams; default 250 (Consul's); 0 = unlimited. */
  readonly updatesPerSecond?: number;
  /** Streams open at once; more are refused with RESOURCE_EXHAUSTED. Default: no limit. */
  readonly maxStreams?: number;
  /** Where streams, responses, ACKs, NACKs and push latency are recorded (xds_metrics.ts). */
  readonly metrics?: MetricsRegistry;
  /**
   * With ACLs (Consul's checkStreamACLs): whether the token a stream carries (`x-consul-token` metadata)
   * may configure cache node `nodeId`. Asked when the stream opens, before each new snapshot is applied
   * and every AUTH_CHECK_MS; a refusal ends the stream (a token revoked meanwhile ends it too).
   */
  readonly authorize?: (nodeId: string, token: string | undefined) => Promise<StreamAuth>;
}

/** A stream's authorization: allowed, or the gRPC status that ends it. */
export type StreamAuth = { readonly ok: true } | { readonly ok: false; readonly code: "unauthenticated" | "permission-denied"; readonly message: string };

/** Consul's AuthCheckFrequency. */
export const AUTH_CHECK_MS = 5 * 60_000;

export interface AdsService {
  /** The handlers, for `router.service(AggregatedDiscoveryService, impl)`. */
  readonly impl: ServiceImpl<typeof AggregatedDiscoveryService>;
  /** Registers the service on a ConnectRPC router (pass as `createGrpcServer({ routes })`). */
  routes(router: ConnectRouter): void;
  /** Streams open now (SotW and delta). */
  streamCount(): number;
  /** Changes the update rate (e.g. on reload); 0 = unlimited. */
  setUpdateRate(perSecond: number): void;
  /** Changes the stream limit (undefined = none). Open streams are not cut; new ones are refused. */
  setMaxStreams(max: number | undefined): void;
  /** Ends every open stream with UNAVAILABLE (server shutting down); later streams still work. */
  closeStreams(): void;
}

interface Machine<Req, Resp> {
  onRequest(req: Req): RequestOutcome;
  onSnapshot(snapshot: NodeSnapshot): void;
  next(): Resp | undefined;
}

type Event<Req> =
  | { readonly kind: "request"; readonly req: Req }
  | { readonly kind: "snapshot"; readonly snapshot: NodeSnapshot }
  | { readonly kind: "removed" }
  | { readonly kind: "token" }
  | { readonly kind: "auth" }
  | { readonly kind: "end" }
  | { readonly kind: "error"; readonly error: unknown }
  | { readonly kind: "close" };

/** Creates the ADS service. Nothing runs until a client opens a stream. */
export function createAdsService(options: AdsServiceOptions): AdsService {
  const { cache, clock } = options;
  const log = options.logger;
  const limiter = createUpdateLimiter(clock, options.updatesPerSecond ?? DEFAULT_UPDATES_PER_SECOND);
  let maxStreams = options.maxStreams;
  const open = new Set<() => void>();
  const metrics = new XdsMetrics(options.metrics);

  async function* run<Req extends { node?: Node; typeUrl: string }, Resp extends { typeUrl: string }>(
    variant: "sotw" | "delta",
    requests: AsyncIterable<Req>,
    ctx: HandlerContext,
    machine: Machine<Req, Resp>,
  ): AsyncGenerator<Resp> {
    if (maxStreams !== undefined && open.size >= maxStreams) {
      metrics.refused.add();
      throw new ConnectError(TOO_MANY_STREAMS, Code.ResourceExhausted);
    }
    const events = new EventQueue<Event<Req>>();
    const close = () => events.push({ kind: "close" });
    const onAbort = () => events.push({ kind: "end" });
    let cancelWatch: (() => void) | undefined;
    let cancelToken: (() => void) | undefined;
    let cancelAuthTimer: (() => void) | undefined;
    /** Whether this stream was counted open (it named a known node). */
    let counted = false;
    open.add(close);
    ctx.signal.addEventListener("abort", onAbort);
    void (async () => {
      try {
        for await (const req of requests) events.push({ kind: "request", req });
        events.push({ kind: "end" });
      } catch (error) {
        events.push({ kind: "error", error });
      }
    })();
    try {
      let ev = await events.next();
      if (ev.kind !== "request") return;
      const node = ev.req.node;
      const who = node ? describeNode(node) : "(no node)";
      const resolved = await options.resolveNode(node ? { id: node.id, cluster: node.cluster, userAgentName: node.userAgentName } : undefined);
      if (!resolved.ok) {
        metrics.refused.add();
        log.warn("xds: refusing stream", { variant, node: who, reason: resolved.message });
        throw new ConnectError(resolved.message, resolved.code === "not_found" ? Code.NotFound : Code.InvalidArgument);
      }
      const nodeId = resolved.nodeId;
      const token = ctx.requestHeader.get("x-consul-token") ?? undefined;
      const authorize = async () => {
        if (!options.authorize) return;
        const auth = await options.authorize(nodeId, token);
        if (!auth.ok) throw new ConnectError(auth.message, auth.code === "unauthenticated" ? Code.Unauthenticated : Code.PermissionDenied);
      };
      await authorize();
      if (options.authorize) cancelAuthTimer = clock.setInterval(AUTH_CHECK_MS, () => events.push({ kind: "auth" }));
      const slog = log.named(variant);
      slog.debug("xds: stream opened", { node_id: nodeId, node: who });
      metrics.streamsChanged(variant, 1);
      counted = true;
      cancelWatch = cache.watch(nodeId, (e) => events.push(e.kind === "set" ? { kind: "snapshot", snapshot: e.snapshot } : { kind: "removed" }));
      let haveSnapshot = false;
      let pending: NodeSnapshot | undefined;
      /** When the oldest snapshot not yet pushed reached this stream (monotonic ms); -1: none waiting. */
      let changedAt = -1;
      let pushed = false;
      const initial = cache.get(nodeId);
      if (initial) {
        machine.onSnapshot(initial);
        haveSnapshot = true;
      }
      for (;;) {
        switch (ev.kind) {
          case "request": {
            let outcome: RequestOutcome;
            try {
              outcome = machine.onRequest(ev.req);
            } catch (err) {
              if (err instanceof ProtocolError) throw new ConnectError(err.message, Code.InvalidArgument);
              throw err;
            }
            logOutcome(slog, nodeId, outcome);
            if (outcome.kind === "ack") metrics.of(outcome.typeUrl).acks.add();
            else if (outcome.kind === "nack") metrics.of(outcome.typeUrl).nacks.add();
            break;
          }
          case "auth":
            await authorize();
            break;
          case "snapshot":
            await authorize();
            if (changedAt < 0) changedAt = clock.monotonic();
            if (!haveSnapshot) {
              machine.onSnapshot(ev.snapshot);
              haveSnapshot = true;
              pushed = true;
            } else {
              pending = ev.snapshot;
              cancelToken ??= limiter.acquire(() => events.push({ kind: "token" }));
            }
            break;
          case "token":
            cancelToken = undefined;
            if (pending) {
              machine.onSnapshot(pending);
              pushed = true;
            }
            pending = undefined;
            break;
          case "removed":
            throw new ConnectError(`proxy ${JSON.stringify(nodeId)} is no longer registered`, Code.NotFound);
          case "close":
            throw new ConnectError("xDS server is shutting down", Code.Unavailable);
          case "error":
            throw ev.error;
          case "end":
            return;
        }
        for (let resp = machine.next(); resp !== undefined; resp = machine.next()) {
          metrics.of(resp.typeUrl).responses.add();
          yield resp;
        }
        if (pushed) {
          metrics.pushLatency.observe(clock.monotonic() - changedAt);
          pushed = false;
          changedAt = -1;
        }
        ev = await events.next();
      }
    } finally {
      if (counted) metrics.streamsChanged(variant, -1);
      open.delete(close);
      cancelWatch?.();
      cancelToken?.();
      cancelAuthTimer?.();
      ctx.signal.removeEventListener("abort", onAbort);
    }
  }

  const impl: ServiceImpl<typeof AggregatedDiscoveryService> = {
    streamAggregatedResources: (requests, ctx) => run("sotw", requests, ctx, new SotwStream()),
    deltaAggregatedResources: (requests, ctx) => run("delta", requests, ctx, new DeltaStream()),
  };

  return {
    impl,
    routes: (router) => void router.service(AggregatedDiscoveryService, impl, ADS_HANDLER_OPTIONS),
    streamCount: () => open.size,
    setUpdateRate: (perSecond) => limiter.setRate(perSecond),
    setMaxStreams: (max) => void (maxStreams = max),
    closeStreams: () => {
      for (const close of [...open]) close();
    },
  };
}

function logOutcome(log: Logger, nodeId: string, o: RequestOutcome): void {
  switch (o.kind) {
    case "nack":
      // A NACK keeps the client on its last good configuration; the next change is still sent.
      log.error("xds: proxy rejected configuration (NACK)", {
        node_id: nodeId, type_url: o.typeUrl, nonce: o.nonce, version: o.version, error_code: o.errorCode, error_detail: o.errorMessage,
      });
      break;
    case "stale":
      log.trace("xds: request names a stale nonce (SotW: ignored; delta: subscription changes applied)", { node_id: nodeId, type_url: o.typeUrl, nonce: o.nonce });
      break;
    case "ack":
      log.trace("xds: ACK", { node_id: nodeId, type_url: o.typeUrl, nonce: o.nonce, version: o.version });
      break;
    case "request":
      log.trace("xds: request", { node_id: nodeId, type_url: o.typeUrl, first: o.first });
      break;
  }
}
