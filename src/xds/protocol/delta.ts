/**
 * The per-stream state machine of incremental ADS (DeltaAggregatedResources). Pure and synchronous:
 * requests and snapshots go in, responses come out of `next()`.
 *
 * Rules (Envoy's xDS protocol document, "Incremental xDS"), and Consul's lessons:
 * - the server tracks, per type, which version of each resource the client holds (from ACKs, and on
 *   reconnect from `initial_resource_versions`), and sends only resources whose version differs, and
 *   `removed_resources` for what the client holds that no longer exists;
 * - a name the client subscribes to that does not exist is reported in `removed_resources` once;
 *   if it (or any resource that went away) comes back, it is sent again: the subscription outlives
 *   the resource (Consul issues 10563 and 10987); only an explicit unsubscribe ends it;
 * - subscribing again to a name the client already holds sends it again ("the client may have
 *   forgotten"), except on the first request of a reconnect, where `initial_resource_versions` rule;
 * - subscription changes apply even when the request's nonce is stale; the nonce only pairs ACK/NACK
 *   with the response in flight;
 * - a NACKed resource version is not sent again; a newer version is;
 * - one response is in flight per stream (Consul PR 12236), in the order CDS upserts, EDS upserts,
 *   LDS, RDS, other types, CDS removals, EDS removals (make-before-break);
 * - warming: when the client ACKs new or changed clusters, the endpoints of those clusters are sent
 *   again (Envoy issue 13009). Since nothing is in flight when a cluster is sent, an EDS ACK can never
 *   be mistaken for one that arrived after the cluster replaced the endpoints (Consul issue 17640).
 * - the first response of a type is sent even when empty, so a client waiting for its initial fetch
 *   of an empty wildcard type (e.g. no listeners) is not left waiting.
 */
import { create } from "@bufbuild/protobuf";
import { DeltaDiscoveryResponseSchema, ResourceSchema } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DeltaDiscoveryRequest, DeltaDiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { typeSnapshot } from "../cache/cache.ts";
import type { CachedResource } from "../cache/cache.ts";
import { CLUSTER_TYPE, ENDPOINT_TYPE, legacyWildcardType, sendOrder } from "../types.ts";
import { nackDetail, packResource, StreamState } from "./common.ts";
import type { RequestOutcome } from "./common.ts";
import { Subscription } from "./subscription.ts";

/** A version no resource has: the client holds the resource but must be sent it again. */
const RESEND = "";
/** Marks a removal in a pending update and a NACKed removal. */
const REMOVED = "\u0000removed";

interface TypeState {
  readonly sub: Subscription;
  sentOnce: boolean;
  /** name -> version the client holds (RESEND: holds, must be resent); null: told it does not exist. */
  readonly known: Map<string, string | null>;
  /** name -> version (or REMOVED) the client rejected. */
  readonly nacked: Map<string, string>;
  /** Names that must be reported removed (unsubscribed from a name also covered by "*", absent now). */
  readonly forceRemove: Set<string>;
}

interface InFlight {
  readonly typeUrl: string;
  readonly nonce: string;
  readonly version: string;
  /** name -> version sent, or REMOVED. */
  readonly updates: ReadonlyMap<string, string>;
}

type Phase = { readonly typeUrl: string; readonly upsert: boolean; readonly remove: boolean };

/** State of one delta ADS stream. See the module comment for the rules. */
export class DeltaStream extends StreamState<TypeState, InFlight> {
  protected newTypeState(): TypeState {
    return { sub: new Subscription(), sentOnce: false, known: new Map(), nacked: new Map(), forceRemove: new Set() };
  }

  /** Applies one request. Throws ProtocolError for a request without a type URL. */
  onRequest(req: DeltaDiscoveryRequest): RequestOutcome {
    const typeUrl = req.typeUrl;
    const { st, first } = this.stateFor(typeUrl);
    let outcome: RequestOutcome = { kind: "request", typeUrl, first };
    const nonce = req.responseNonce;
    if (nonce !== "") {
      const answered = this.takeAnswered(typeUrl, nonce);
      if (answered) {
        if (req.errorDetail) {
          for (const [name, version] of answered.updates) st.nacked.set(name, version);
          outcome = { kind: "nack", typeUrl, nonce, version: "", ...nackDetail(req.errorDetail) };
        } else {
          this.applyAck(typeUrl, st, answered.updates);
          outcome = { kind: "ack", typeUrl, nonce, version: answered.version };
        }
      } else {
        outcome = { kind: "stale", typeUrl, nonce };
      }
    }
    const initial = first ? Object.entries(req.initialResourceVersions) : [];
    for (const [name, version] of initial) st.known.set(name, version);
    // A reconnecting client already holds a configuration: no empty "initial fetch" answer is owed.
    if (initial.length > 0) st.sentOnce = true;
    st.sub.update(req.resourceNamesSubscribe, req.resourceNamesUnsubscribe, first, legacyWildcardType(typeUrl));
    if (initial.length === 0) {
      for (const name of req.resourceNamesSubscribe) {
        if (name === "*") continue;
        const held = st.known.get(name);
        if (typeof held === "string") st.known.set(name, RESEND);
        else st.known.delete(name);
        st.nacked.delete(name);
        st.forceRemove.delete(name);
      }
    }
    for (const name of req.resourceNamesUnsubscribe) {
      if (name === "*") continue;
      st.nacked.delete(name);
      if (!st.sub.wildcard) {
        st.known.delete(name);
        continue;
      }
      // Still covered by "*": the client cannot tell whether to keep it, so say so (protocol document,
      // "Unsubscribing from Resources").
      if (typeSnapshot(this.snapshot, typeUrl).resources.has(name)) st.known.set(name, RESEND);
      else {
        st.known.delete(name);
        st.forceRemove.add(name);
      }
    }
    if (!st.sub.wildcard) for (const name of [...st.known.keys()]) if (!st.sub.names.has(name)) st.known.delete(name);
    return outcome;
  }

  /**
   * The next response to send, or undefined when there is nothing to send or a response is still
   * waiting for its ACK/NACK. The caller must send what it returns.
   */
  next(): DeltaDiscoveryResponse | undefined {
    if (this.inFlight || !this.snapshot) return undefined;
    for (const phase of this.phases()) {
      const st = this.types.get(phase.typeUrl)!;
      const ts = typeSnapshot(this.snapshot, phase.typeUrl);
      const upserts = phase.upsert ? this.upserts(st, ts.resources) : [];
      const removals = phase.remove ? this.removals(st, ts.resources) : [];
      if (upserts.length === 0 && removals.length === 0 && st.sentOnce) continue;
      const nonce = this.nonces.next();
      st.sentOnce = true;
      for (const name of removals) st.forceRemove.delete(name);
      const updates = new Map<string, string>();
      for (const r of upserts) updates.set(r.name, r.version);
      for (const name of removals) updates.set(name, REMOVED);
      this.inFlight = { typeUrl: phase.typeUrl, nonce, version: ts.version, updates };
      return create(DeltaDiscoveryResponseSchema, {
        systemVersionInfo: ts.version,
        typeUrl: phase.typeUrl,
        nonce,
        resources: upserts.map((r) =>
          create(ResourceSchema, { name: r.name, version: r.version, resource: packResource(phase.typeUrl, r) })
        ),
        removedResources: removals,
      });
    }
    return undefined;
  }

  private phases(): Phase[] {
    const out: Phase[] = [];
    const registered = sendOrder(this.types.keys());
    for (const typeUrl of registered) {
      const split = typeUrl === CLUSTER_TYPE || typeUrl === ENDPOINT_TYPE;
      out.push({ typeUrl, upsert: true, remove: !split });
    }
    for (const typeUrl of [CLUSTER_TYPE, ENDPOINT_TYPE]) {
      if (this.types.has(typeUrl)) out.push({ typeUrl, upsert: false, remove: true });
    }
    return out;
  }

  private upserts(st: TypeState, resources: ReadonlyMap<string, CachedResource>): CachedResource[] {
    const out: CachedResource[] = [];
    for (const r of resources.values()) {
      if (!st.sub.wants(r.name)) continue;
      if (st.known.get(r.name) === r.version || st.nacked.get(r.name) === r.version) continue;
      out.push(r);
    }
    return out;
  }

  private removals(st: TypeState, resources: ReadonlyMap<string, CachedResource>): string[] {
    const out = new Set<string>();
    for (const [name, version] of st.known) {
      if (typeof version === "string" && !resources.has(name) && st.nacked.get(name) !== REMOVED) out.add(name);
    }
    for (const name of st.sub.names) {
      if (!resources.has(name) && !st.known.has(name) && st.nacked.get(name) !== REMOVED) out.add(name);
    }
    for (const name of st.forceRemove) out.add(name);
    return [...out].sort();
  }

  private applyAck(typeUrl: string, st: TypeState, updates: ReadonlyMap<string, string>): void {
    const eds = typeUrl === CLUSTER_TYPE ? this.types.get(ENDPOINT_TYPE) : undefined;
    for (const [name, version] of updates) {
      st.nacked.delete(name);
      if (version === REMOVED) {
        if (st.sub.names.has(name)) st.known.set(name, null);
        else st.known.delete(name);
        continue;
      }
      const before = st.known.get(name);
      st.known.set(name, version);
      // Warming: a new or changed cluster drops its endpoints in Envoy until it gets them again.
      if (eds && before !== version && typeof eds.known.get(name) === "string") eds.known.set(name, RESEND);
    }
  }
}
