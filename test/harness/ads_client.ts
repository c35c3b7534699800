/**
 * A test-side ADS (state of the world) client over a real grpc-js stream: responses queued by type URL,
 * a bounded wait for the next one of a type, and requests that ACK a response by passing it.
 */
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { DiscoveryRequestSchema, type DiscoveryResponse } from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { openAdsStream } from "./net_helpers.ts";

export const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
export const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
export const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";

export interface AdsTestClient {
  /** Sends a request for `typeUrl` (the first one carries the node); `ack` names the response it ACKs. */
  request(typeUrl: string, names?: readonly string[], ack?: DiscoveryResponse): void;
  /** The next response of `typeUrl`; rejects after `ms` or when the stream failed. */
  next(typeUrl: string, ms?: number): Promise<DiscoveryResponse>;
  /** The next response of any type. */
  nextAny(ms?: number): Promise<DiscoveryResponse>;
  close(): void;
}

/**
 * Opens an ADS stream to `target` as node `nodeId` (node.cluster `cluster`); plaintext unless `tls`
 * gives the CA to verify the server with, as the name `serverName` (grpc-js refuses IP names).
 * `metadata` goes with the stream (`x-consul-token` for ACLs).
 */
export function adsClient(
  target: string, nodeId: string, cluster = nodeId, tls?: { readonly caPem: string; readonly serverName: string }, metadata: Readonly<Record<string, string>> = {},
): AdsTestClient {
  const { client, call } = tls
    ? openAdsStream(target, grpc.credentials.createSsl(Buffer.from(tls.caPem)), { "grpc.ssl_target_name_override": tls.serverName }, metadata)
    : openAdsStream(target, grpc.credentials.createInsecure(), {}, metadata);
  /** Responses not taken yet, in arrival order; waiters take the first one they match. */
  const queue: DiscoveryResponse[] = [];
  const waiters: { readonly match: (r: DiscoveryResponse) => boolean; readonly take: (r: DiscoveryResponse) => void }[] = [];
  let failure: Error | undefined;
  call.on("data", (r: DiscoveryResponse) => {
    const i = waiters.findIndex((w) => w.match(r));
    if (i >= 0) waiters.splice(i, 1)[0]!.take(r);
    else queue.push(r);
  });
  call.on("error", (e: Error) => (failure = e));
  const take = (match: (r: DiscoveryResponse) => boolean, what: string, ms: number) =>
    new Promise<DiscoveryResponse>((resolve, reject) => {
      if (failure) return reject(failure);
      const i = queue.findIndex(match);
      if (i >= 0) return resolve(queue.splice(i, 1)[0]!);
      const waiter = {
        match,
        take: (r: DiscoveryResponse) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no ${what} response within ${ms} ms${failure ? `: ${failure.message}` : ""}`));
      }, ms);
      waiters.push(waiter);
    });
  let first = true;
  return {
    request(typeUrl, names = [], ack) {
      call.write(create(DiscoveryRequestSchema, {
        typeUrl, resourceNames: [...names],
        ...(first ? { node: { id: nodeId, cluster } } : {}),
        ...(ack ? { versionInfo: ack.versionInfo, responseNonce: ack.nonce } : {}),
      }));
      first = false;
    },
    next: (typeUrl, ms = 15_000) => take((r) => r.typeUrl === typeUrl, typeUrl, ms),
    nextAny: (ms = 15_000) => take(() => true, "xDS", ms),
    close() {
      call.cancel();
      client.close();
    },
  };
}

/** The resources of a response decoded as `schema`. */
export function decodeAll<D extends DescMessage>(schema: D, r: DiscoveryResponse): MessageShape<D>[] {
  return r.resources.map((a) => fromBinary(schema, a.value));
}

/**
 * Acts as Envoy does: ACKs every response (asking for `subscriptions[typeUrl]`, [] = wildcard) and keeps
 * the latest one per type, until `done(latest)` holds; returns the latest per type. Rejects when no
 * response comes for `ms`. `latest` may be seeded with responses already taken (not ACKed yet: they are
 * ACKed first).
 */
export async function followUntil(
  ads: AdsTestClient,
  subscriptions: Readonly<Record<string, readonly string[]>>,
  done: (latest: ReadonlyMap<string, DiscoveryResponse>) => boolean,
  seed: readonly DiscoveryResponse[] = [],
  ms = 15_000,
): Promise<Map<string, DiscoveryResponse>> {
  const latest = new Map<string, DiscoveryResponse>();
  for (const r of seed) latest.set(r.typeUrl, r);
  for (const r of seed) ads.request(r.typeUrl, subscriptions[r.typeUrl] ?? [], r);
  while (!done(latest)) {
    const r = await ads.nextAny(ms);
    if (process.env.ADS_TRACE) console.log("ads:", r.typeUrl.split(".").at(-1), r.versionInfo, r.resources.length);
    latest.set(r.typeUrl, r);
    ads.request(r.typeUrl, subscriptions[r.typeUrl] ?? [], r);
  }
  return latest;
}
