/**
 * The per-stream state machine of state-of-the-world ADS (StreamAggregatedResources). Pure and
 * synchronous: requests and snapshots go in, responses come out of `next()`; no I/O, no clock.
 *
 * Rules (Envoy's xDS protocol document, "The xDS transport Protocol" and "Resource warming"):
 * - each type has its own `version_info` (the cache's type version) and its own latest nonce; a
 *   request whose `response_nonce` is not the latest nonce of its type is stale and ignored;
 * - a request answering the response in flight is an ACK, or a NACK when it has `error_detail`; after
 *   a NACK the rejected content is not sent again, but the next change is;
 * - one response is in flight per stream: the next one waits for the ACK/NACK of the previous, and
 *   types go in send order (CDS, EDS, LDS, RDS, others), so a change reaches the client make-before-break;
 * - warming: when the client ACKs clusters that are new or changed, it needs a fresh
 *   ClusterLoadAssignment for each of them even if the endpoints did not change (Envoy issue 13009,
 *   Consul issue 17640), so EDS is sent again after that ACK. Clusters the client has not asked EDS for
 *   yet get their endpoints when its EDS request names them.
 * - Listener and Cluster responses carry every wanted resource, so a removed resource is one that is
 *   left out. Other types carry the wanted resources that exist.
 */
import { create } from "@bufbuild/protobuf";
import { DiscoveryResponseSchema } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { typeSnapshot } from "../cache/cache.ts";
import type { CachedResource } from "../cache/cache.ts";
import { CLUSTER_TYPE, ENDPOINT_TYPE, legacyWildcardType, sendOrder } from "../types.ts";
import { nackDetail, packResource, StreamState } from "./common.ts";
import type { RequestOutcome } from "./common.ts";
import { Subscription } from "./subscription.ts";

interface TypeState {
  readonly sub: Subscription;
  /** A request changed the subscription (or was the first): the client must get a response. */
  mustRespond: boolean;
  /** Warming: send again even if the content did not change. */
  warm: boolean;
  lastNonce?: string;
  /** Content key of the last response sent / the last one NACKed. */
  sentKey?: string;
  nackedKey?: string;
  /** name -> resource version of the last ACKed response. */
  acked: ReadonlyMap<string, string>;
}

interface InFlight {
  readonly typeUrl: string;
  readonly nonce: string;
  readonly version: string;
  readonly key: string;
  readonly resources: ReadonlyMap<string, string>;
}

/** State of one SotW ADS stream. See the module comment for the rules. */
export class SotwStream extends StreamState<TypeState, InFlight> {
  protected newTypeState(): TypeState {
    return { sub: new Subscription(), mustRespond: true, warm: false, acked: new Map() };
  }

  /**
   * Applies one request. Throws ProtocolError for a request without a type URL.
   */
  onRequest(req: DiscoveryRequest): RequestOutcome {
    const typeUrl = req.typeUrl;
    const { st, first } = this.stateFor(typeUrl);
    const nonce = req.responseNonce;
    // Stale: a newer response of this type was sent after the one this request names. Nothing newer
    // than "nothing" exists, so a type not answered yet on this stream has no stale nonces.
    if (nonce !== "" && st.lastNonce !== undefined && nonce !== st.lastNonce) {
      return { kind: "stale", typeUrl, nonce };
    }
    let outcome: RequestOutcome = { kind: "request", typeUrl, first };
    const answered = this.takeAnswered(typeUrl, nonce);
    if (answered) {
      if (req.errorDetail) {
        st.nackedKey = answered.key;
        outcome = { kind: "nack", typeUrl, nonce, version: req.versionInfo, ...nackDetail(req.errorDetail) };
      } else {
        if (typeUrl === CLUSTER_TYPE) this.warmEndpoints(st.acked, answered.resources);
        st.acked = answered.resources;
        st.nackedKey = undefined;
        outcome = { kind: "ack", typeUrl, nonce, version: answered.version };
      }
    }
    if (st.sub.replace(req.resourceNames, legacyWildcardType(typeUrl))) st.mustRespond = true;
    return outcome;
  }

  /**
   * The next response to send, or undefined when there is nothing to send or a response is still
   * waiting for its ACK/NACK. The caller must send what it returns (the state already counts it as sent).
   */
  next(): DiscoveryResponse | undefined {
    if (this.inFlight || !this.snapshot) return undefined;
    for (const typeUrl of sendOrder(this.types.keys())) {
      const st = this.types.get(typeUrl)!;
      const { resources, key, version } = this.content(typeUrl, st);
      const changed = key !== st.sentKey && key !== st.nackedKey;
      if (!st.mustRespond && !st.warm && !changed) continue;
      const nonce = this.nonces.next();
      st.mustRespond = false;
      st.warm = false;
      st.sentKey = key;
      st.lastNonce = nonce;
      this.inFlight = {
        typeUrl,
        nonce,
        version,
        key,
        resources: new Map(resources.map((r) => [r.name, r.version])),
      };
      return create(DiscoveryResponseSchema, {
        versionInfo: version,
        typeUrl,
        nonce,
        resources: resources.map((r) => packResource(typeUrl, r)),
      });
    }
    return undefined;
  }

  /** What a response of this type would carry now, with a key that changes exactly when it does. */
  private content(typeUrl: string, st: TypeState): { resources: CachedResource[]; key: string; version: string } {
    const ts = typeSnapshot(this.snapshot, typeUrl);
    if (st.sub.wildcard) return { resources: [...ts.resources.values()], key: `*${ts.version}`, version: ts.version };
    const resources: CachedResource[] = [];
    for (const name of [...st.sub.names].sort()) {
      const r = ts.resources.get(name);
      if (r) resources.push(r);
    }
    return { resources, key: resources.map((r) => `${r.name}@${r.version}`).join(","), version: ts.version };
  }

  /** After an ACK of clusters: endpoints of new or changed clusters the client watches are resent. */
  private warmEndpoints(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): void {
    const eds = this.types.get(ENDPOINT_TYPE);
    if (!eds) return;
    const endpoints = typeSnapshot(this.snapshot, ENDPOINT_TYPE).resources;
    for (const [name, version] of after) {
      if (before.get(name) !== version && eds.sub.wants(name) && endpoints.has(name)) {
        eds.warm = true;
        return;
      }
    }
  }
}
