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
import type { Any } from "@bufbuild/protobuf/wkt";
import { DiscoveryResponseSchema } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DiscoveryRequest, DiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { typeSnapshot } from "../cache/cache.ts";
import type { CachedResource } from "../cache/cache.ts";
import { CLUSTER_TYPE, ENDPOINT_TYPE, legacyWildcardType, sendOrder } from "../types.ts";
import { nackDetail, packResource, StreamState } from "./common.ts";
import type { RequestOutcome } from "./common.ts";
import { Subscription } from "./subscription.ts";

/** What a response of one type carries now. */
interface Content {
  readonly resources: readonly CachedResource[];
  /** Changes exactly when the resources (names and versions) do. */
  readonly key: string;
  /** The type's `version_info`. */
  readonly version: string;
  /** `resources` packed, made once per content (see `contentOf`). */
  readonly anys: readonly Any[];
}

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
  /** The resources of the last ACKed response. */
  acked: readonly CachedResource[];
  /** The content for the type snapshot's resources and subscription revision it was made from. */
  memo?: { readonly from: ReadonlyMap<string, CachedResource>; readonly revision: number; readonly content: Content };
}

interface InFlight {
  readonly typeUrl: string;
  readonly nonce: string;
  readonly version: string;
  readonly key: string;
  readonly resources: readonly CachedResource[];
}

/** State of one SotW ADS stream. See the module comment for the rules. */
export class SotwStream extends StreamState<TypeState, InFlight> {
  protected newTypeState(): TypeState {
    return { sub: new Subscription(), mustRespond: true, warm: false, acked: [] };
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
   * waiting for its ACK/NACK. The caller must send what it returns (the state already counts it as
   * sent). Its `resources` are shared with other responses (./common.ts packResource): never mutate it.
   */
  next(): DiscoveryResponse | undefined {
    if (this.inFlight || !this.snapshot) return undefined;
    for (const typeUrl of sendOrder(this.types.keys())) {
      const st = this.types.get(typeUrl)!;
      const content = this.contentOf(typeUrl, st);
      const changed = content.key !== st.sentKey && content.key !== st.nackedKey;
      if (!st.mustRespond && !st.warm && !changed) continue;
      const nonce = this.nonces.next();
      st.mustRespond = false;
      st.warm = false;
      st.sentKey = content.key;
      st.lastNonce = nonce;
      const { version, key, resources } = content;
      this.inFlight = { typeUrl, nonce, version, key, resources };
      return create(DiscoveryResponseSchema, { versionInfo: version, typeUrl, nonce, resources: content.anys as Any[] });
    }
    return undefined;
  }

  /**
   * What a response of this type would carry now. Made again only when the node's resources of the
   * type or the subscription changed: `next()` runs after every request (mostly ACKs) and looks at
   * every type.
   */
  private contentOf(typeUrl: string, st: TypeState): Content {
    const ts = typeSnapshot(this.snapshot, typeUrl);
    const memo = st.memo;
    if (memo && memo.from === ts.resources && memo.revision === st.sub.revision && memo.content.version === ts.version) return memo.content;
    let resources: CachedResource[];
    let key: string;
    if (st.sub.wildcard) {
      resources = [...ts.resources.values()];
      key = `*${ts.version}`;
    } else {
      resources = [];
      for (const name of [...st.sub.names].sort()) {
        const r = ts.resources.get(name);
        if (r) resources.push(r);
      }
      key = resources.map((r) => `${r.name}@${r.version}`).join(",");
    }
    const content = { resources, key, version: ts.version, anys: resources.map((r) => packResource(typeUrl, r)) };
    st.memo = { from: ts.resources, revision: st.sub.revision, content };
    return content;
  }

  /** After an ACK of clusters: endpoints of new or changed clusters the client watches are resent. */
  private warmEndpoints(before: readonly CachedResource[], after: readonly CachedResource[]): void {
    const eds = this.types.get(ENDPOINT_TYPE);
    if (!eds) return;
    const endpoints = typeSnapshot(this.snapshot, ENDPOINT_TYPE).resources;
    const held = new Map(before.map((r) => [r.name, r.version]));
    for (const { name, version } of after) {
      if (held.get(name) !== version && eds.sub.wants(name) && endpoints.has(name)) {
        eds.warm = true;
        return;
      }
    }
  }
}
