/**
 * The two ADS variants as the gateway's xDS client speaks them: how a response becomes the candidate
 * complete set of its type, and how ACK, NACK, first and re-subscription requests are built. Pure: no
 * I/O, no clock; the session (./xds_client_session.ts) decides when to send what.
 *
 * Wire rules (Envoy's xDS protocol document, "ACK/NACK and resource type instance version",
 * "Incremental xDS", "How the client specifies what resources to return"):
 * - SotW: every request of a type carries the complete subscription (`resource_names`) and the
 *   `version_info` of the last response the client ACCEPTED; an ACK carries the nonce and version of
 *   the response it accepts, a NACK the nonce of the rejected response, the previous good version and
 *   `error_detail`. Listener and Cluster responses carry every resource (absent = removed); for
 *   ClusterLoadAssignment an absent resource is unchanged (Envoy updates only the watches a response
 *   names, GrpcMuxImpl::onDiscoveryResponse).
 * - Delta: an ACK is the response nonce alone, a NACK adds `error_detail`; subscription changes go as
 *   subscribe/unsubscribe lists; the first request of a type on a new stream lists in
 *   `initial_resource_versions` what the client still holds. Cluster and Listener are subscribed to by
 *   the legacy wildcard (no names on the first request), as Envoy does for CDS and LDS.
 * - `error_detail` is INTERNAL (13) with the reason truncated to 4096 characters, as Envoy sends it
 *   (DeltaSubscriptionState::handleBadResponse, GrpcMuxImpl::onDiscoveryResponse).
 */
import { create } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { DeltaDiscoveryRequestSchema, DiscoveryRequestSchema } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../gen/google/rpc/status_pb.ts";
import type { Status } from "../gen/google/rpc/status_pb.ts";

/** One resource the client holds. */
export interface HeldResource {
  /** Delta: the resource's version from the server. SotW: the `version_info` of the response that brought it. */
  readonly version: string;
  readonly resource: Any;
}

/** The complete set of one type the client holds (or would hold): name -> resource. */
export type ResourceTable = ReadonlyMap<string, HeldResource>;

/** What a response makes of the held set, or why it is rejected before the sink sees it. */
export type Candidate =
  | {
    readonly ok: true;
    /** The complete set after the response. */
    readonly set: ResourceTable;
    /** Names the response added or changed (SotW: whose bytes differ from the held ones), sorted. */
    readonly received: readonly string[];
    /** Names held before and gone after the response, sorted. */
    readonly removed: readonly string[];
  }
  | { readonly ok: false; readonly reason: string };

/**
 * Where one type's request stands: `names` is the subscription (undefined = every resource, the
 * wildcard), `version` the last accepted version, `nonce` the last nonce received on this stream.
 */
export interface TypeRequest {
  readonly typeUrl: string;
  readonly names: readonly string[] | undefined;
  readonly version: string;
  readonly nonce: string;
}

/** One ADS variant: response reading and request building. `Req`/`Resp` are its protobuf-es messages. */
export interface AdsVariant<Req, Resp> {
  readonly name: "delta" | "sotw";
  /** The response's type URL, nonce and version (SotW `version_info`, delta `system_version_info`). */
  meta(resp: Resp): { readonly typeUrl: string; readonly nonce: string; readonly version: string };
  /** The held set with the response applied; `wanted` undefined = wildcard, else resources outside it are ignored. */
  candidate(held: ResourceTable, resp: Resp, wanted: ReadonlySet<string> | undefined): Candidate;
  /** The first request of a type on a stream (`node` on the stream's first request only). */
  start(t: TypeRequest, held: ResourceTable, node: Node | undefined): Req;
  /** ACK of the response with `nonce` and `version` (t.version/t.nonce are those of the accepted response). */
  ack(t: TypeRequest): Req;
  /** NACK of the response with `t.nonce`; `t.version` is the last good version. */
  nack(t: TypeRequest, reason: string): Req;
  /** Changes a named subscription from `before` to `t.names`. */
  resubscribe(t: TypeRequest, before: readonly string[]): Req;
}

/** Longest `error_detail.message` Envoy sends (Config::Utility::truncateGrpcStatusMessage). */
export const MAX_NACK_MESSAGE = 4096;
/** gRPC status code INTERNAL, the code of Envoy's NACKs. */
const INTERNAL = 13;

/** The `error_detail` of a NACK. */
export function nackStatus(reason: string): Status {
  const message = reason.length > MAX_NACK_MESSAGE ? `${reason.slice(0, MAX_NACK_MESSAGE)}...(truncated)` : reason;
  return create(StatusSchema, { code: INTERNAL, message });
}

/**
 * The name of a Listener (`name`), Cluster (`name`) or ClusterLoadAssignment (`cluster_name`) from its
 * serialized bytes: field 1 of each, read without decoding the rest. Throws on malformed bytes.
 */
export function resourceName(bytes: Uint8Array): string {
  const reader = new BinaryReader(bytes);
  let name = "";
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) name = reader.string();
    else reader.skip(wireType, field);
  }
  return name;
}

const q = (s: string) => JSON.stringify(s);
const reject = (reason: string): Candidate => ({ ok: false, reason });

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function removedNames(held: ResourceTable, set: ResourceTable): string[] {
  return [...held.keys()].filter((n) => !set.has(n)).sort();
}

/** Incremental ADS (DeltaAggregatedResources). */
export const deltaVariant: AdsVariant<DeltaDiscoveryRequest, DeltaDiscoveryResponse> = {
  name: "delta",
  meta: (resp) => ({ typeUrl: resp.typeUrl, nonce: resp.nonce, version: resp.systemVersionInfo }),
  candidate(held, resp, wanted) {
    const set = new Map(held);
    const received: string[] = [];
    const seen = new Set<string>();
    for (const r of resp.resources) {
      const name = r.name;
      if (name === "") return reject("a resource in the response has no name");
      if (seen.has(name)) return reject(`duplicate resource name ${q(name)} in the response`);
      seen.add(name);
      if (wanted && !wanted.has(name)) continue;
      if (!r.resource) {
        // A resource without a body is a heartbeat when it names the version held (protocol document, "TTL").
        if (held.get(name)?.version === r.version) continue;
        return reject(`resource ${q(name)} has no body`);
      }
      if (r.resource.typeUrl !== resp.typeUrl) {
        return reject(`resource ${q(name)} has type URL ${q(r.resource.typeUrl)} in a response of ${q(resp.typeUrl)}`);
      }
      set.set(name, { version: r.version, resource: r.resource });
      received.push(name);
    }
    for (const name of resp.removedResources) {
      if (seen.has(name)) return reject(`resource ${q(name)} is both updated and removed in the response`);
      set.delete(name);
    }
    return { ok: true, set, received: received.sort(), removed: removedNames(held, set) };
  },
  start(t, held, node) {
    const initial: Record<string, string> = {};
    const named = t.names ? new Set(t.names) : undefined;
    for (const [name, r] of held) if (!named || named.has(name)) initial[name] = r.version;
    return create(DeltaDiscoveryRequestSchema, {
      node,
      typeUrl: t.typeUrl,
      resourceNamesSubscribe: t.names ? [...t.names] : [],
      initialResourceVersions: initial,
    });
  },
  ack: (t) => create(DeltaDiscoveryRequestSchema, { typeUrl: t.typeUrl, responseNonce: t.nonce }),
  nack: (t, reason) => create(DeltaDiscoveryRequestSchema, { typeUrl: t.typeUrl, responseNonce: t.nonce, errorDetail: nackStatus(reason) }),
  resubscribe(t, before) {
    const after = t.names ?? [];
    const was = new Set(before);
    const now = new Set(after);
    // No nonce: in delta it only pairs an ACK/NACK with a response, and this request answers none.
    return create(DeltaDiscoveryRequestSchema, {
      typeUrl: t.typeUrl,
      resourceNamesSubscribe: after.filter((n) => !was.has(n)),
      resourceNamesUnsubscribe: before.filter((n) => !now.has(n)),
    });
  },
};

/** State-of-the-world ADS (StreamAggregatedResources). */
export const sotwVariant: AdsVariant<DiscoveryRequest, DiscoveryResponse> = {
  name: "sotw",
  meta: (resp) => ({ typeUrl: resp.typeUrl, nonce: resp.nonce, version: resp.versionInfo }),
  candidate(held, resp, wanted) {
    const set = new Map<string, HeldResource>();
    const received: string[] = [];
    for (const any of resp.resources) {
      if (any.typeUrl !== resp.typeUrl) {
        return reject(`a resource has type URL ${q(any.typeUrl)} in a response of ${q(resp.typeUrl)}`);
      }
      let name: string;
      try {
        name = resourceName(any.value);
      } catch (err) {
        return reject(`a resource of the response cannot be decoded: ${(err as Error).message}`);
      }
      if (name === "") return reject("a resource in the response has no name");
      if (set.has(name)) return reject(`duplicate resource name ${q(name)} in the response`);
      if (wanted && !wanted.has(name)) continue;
      const before = held.get(name);
      if (!before || !sameBytes(before.resource.value, any.value)) received.push(name);
      set.set(name, { version: resp.versionInfo, resource: any });
    }
    // Named subscriptions (EDS): a resource the response leaves out keeps its last value.
    if (wanted) for (const [name, r] of held) if (wanted.has(name) && !set.has(name)) set.set(name, r);
    return { ok: true, set, received: received.sort(), removed: removedNames(held, set) };
  },
  start: (t, _held, node) =>
    create(DiscoveryRequestSchema, { node, typeUrl: t.typeUrl, versionInfo: t.version, resourceNames: t.names ? [...t.names] : [] }),
  ack: (t) =>
    create(DiscoveryRequestSchema, { typeUrl: t.typeUrl, versionInfo: t.version, responseNonce: t.nonce, resourceNames: t.names ? [...t.names] : [] }),
  nack: (t, reason) =>
    create(DiscoveryRequestSchema, {
      typeUrl: t.typeUrl,
      versionInfo: t.version,
      responseNonce: t.nonce,
      resourceNames: t.names ? [...t.names] : [],
      errorDetail: nackStatus(reason),
    }),
  resubscribe: (t) =>
    create(DiscoveryRequestSchema, { typeUrl: t.typeUrl, versionInfo: t.version, responseNonce: t.nonce, resourceNames: t.names ? [...t.names] : [] }),
};
