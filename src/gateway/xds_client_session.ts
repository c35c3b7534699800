/**
 * The gateway xDS client's bookkeeping, pure and synchronous: per type the last good complete set
 * (`TypeBook`, kept across streams), and per stream an `AdsSession` that turns responses into sink
 * updates and the requests to send (ACK/NACK, subscription changes, the next type's first request).
 *
 * Ordering (Envoy's warming, "Resource warming" in the xDS protocol document): on a stream the client
 * first subscribes to Clusters; Endpoints once the Clusters are settled (a response was handled, or the
 * client already holds a Cluster set from an earlier stream), with the names `sink.endpointNames()`
 * gives; Listeners once Endpoints are settled. On a reconnect everything held is settled at once, so
 * all three first requests go out together (a delta server that sees nothing changed sends nothing).
 * Requests that a response causes go before its ACK, as Envoy's paused EDS subscription is resumed
 * before the CDS ACK is queued (cds_api_helper.cc): the server then sends the new clusters' endpoints
 * before anything else.
 */
import type { Any } from "@bufbuild/protobuf/wkt";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { GATEWAY_TYPE_URLS } from "./xds_sink.ts";
import type { XdsSink } from "./xds_sink.ts";
import type { AdsVariant, ResourceTable, TypeRequest } from "./xds_client_protocol.ts";

const CDS = GATEWAY_TYPE_URLS.cluster;
const EDS = GATEWAY_TYPE_URLS.endpoint;
const LDS = GATEWAY_TYPE_URLS.listener;

/** The types the client subscribes to, in the order it subscribes on a stream. */
export const SUBSCRIBE_ORDER: readonly string[] = [CDS, EDS, LDS];

/** The last rejected response of a type. */
export interface NackRecord {
  readonly reason: string;
  readonly nonce: string;
  /** The version of the rejected response (SotW `version_info`, delta `system_version_info`). */
  readonly version: string;
  /** Wall-clock ms. */
  readonly atMs: number;
}

/** What the client holds for one type. Mutated only by the session; read through the client's state(). */
export interface TypeBook {
  readonly typeUrl: string;
  /** The last good complete set (what the sink last accepted). */
  held: ResourceTable;
  /** A set of this type was accepted at least once (an empty set counts). */
  accepted: boolean;
  /** Version of the last accepted response. */
  version: string;
  /** Nonce of the last response received (accepted or not). */
  nonce: string;
  applied: number;
  rejected: number;
  lastNack: NackRecord | undefined;
  /** Wall-clock ms of the last accepted update. */
  lastUpdateMs: number | undefined;
}

/** Fresh books for the subscribed types. */
export function newBooks(): Map<string, TypeBook> {
  return new Map(SUBSCRIBE_ORDER.map((typeUrl) => [typeUrl, {
    typeUrl, held: new Map(), accepted: false, version: "", nonce: "", applied: 0, rejected: 0, lastNack: undefined, lastUpdateMs: undefined,
  }]));
}

/** What a session reports about each response. */
export type SessionEvent =
  | {
    readonly kind: "applied";
    readonly typeUrl: string;
    readonly version: string;
    readonly nonce: string;
    /** Resources held after the update. */
    readonly count: number;
    readonly received: readonly string[];
    readonly removed: readonly string[];
  }
  | { readonly kind: "rejected"; readonly typeUrl: string; readonly version: string; readonly nonce: string; readonly reason: string }
  /** A response of a type not subscribed to on this stream: not applied and not answered (as Envoy). */
  | { readonly kind: "ignored"; readonly typeUrl: string; readonly nonce: string };

export interface SessionOptions<Req, Resp> {
  readonly variant: AdsVariant<Req, Resp>;
  /** Shared with earlier and later sessions of the same client. */
  readonly books: ReadonlyMap<string, TypeBook>;
  readonly sink: XdsSink;
  /** Sent on the stream's first request. */
  readonly node: Node;
  /** Wall clock, for `lastUpdateMs` / NACK times. */
  readonly now: () => number;
  readonly onEvent?: (event: SessionEvent) => void;
}

/** Sorted and deduplicated. */
function normalize(names: readonly string[]): string[] {
  return [...new Set(names)].sort();
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** One ADS stream's state. Not reusable: a new stream gets a new session over the same books. */
export class AdsSession<Req, Resp> {
  private readonly started = new Set<string>();
  private readonly settledTypes = new Set<string>();
  /** Last nonce received per type on this stream. */
  private readonly nonces = new Map<string, string>();
  private nodeSent = false;
  /** The EDS subscription on this stream (sorted); meaningful once EDS started. */
  private eds: readonly string[] = [];

  constructor(private readonly o: SessionOptions<Req, Resp>) {}

  /** The requests that open the stream: Clusters, and further types already settled by held sets. */
  open(): Req[] {
    return this.advance();
  }

  /** The ClusterLoadAssignment names subscribed to on this stream (empty before EDS started). */
  endpointSubscription(): readonly string[] {
    return this.eds;
  }

  /**
   * Handles one response: computes the complete set, offers it to the sink, updates the book, and
   * returns the requests to send, in order (the ACK or NACK last).
   */
  onResponse(resp: Resp): Req[] {
    const { variant, sink } = this.o;
    const { typeUrl, nonce, version } = variant.meta(resp);
    const book = this.o.books.get(typeUrl);
    if (!book || !this.started.has(typeUrl)) {
      this.o.onEvent?.({ kind: "ignored", typeUrl, nonce });
      return [];
    }
    book.nonce = nonce;
    this.nonces.set(typeUrl, nonce);
    const names = typeUrl === EDS ? this.eds : undefined;
    const candidate = variant.candidate(book.held, resp, names ? new Set(names) : undefined);
    const reason = candidate.ok ? applyToSink(sink, typeUrl, candidate.set) : candidate.reason;
    const out: Req[] = [];
    if (reason !== undefined) {
      book.rejected++;
      book.lastNack = { reason, nonce, version, atMs: this.o.now() };
      this.o.onEvent?.({ kind: "rejected", typeUrl, version, nonce, reason });
    } else if (candidate.ok) {
      book.held = candidate.set;
      book.accepted = true;
      book.version = version;
      book.applied++;
      book.lastUpdateMs = this.o.now();
      this.o.onEvent?.({
        kind: "applied", typeUrl, version, nonce, count: candidate.set.size, received: candidate.received, removed: candidate.removed,
      });
      if (typeUrl === CDS) out.push(...this.followEndpoints());
    }
    this.settledTypes.add(typeUrl);
    out.push(...this.advance());
    const t: TypeRequest = { typeUrl, names: typeUrl === EDS ? this.eds : undefined, version: book.version, nonce };
    out.push(reason === undefined ? variant.ack({ ...t, version }) : variant.nack(t, reason));
    return out;
  }

  /** Starts every type whose predecessors are settled, in order. */
  private advance(): Req[] {
    const out: Req[] = [];
    for (const typeUrl of SUBSCRIBE_ORDER) {
      if (!this.started.has(typeUrl)) out.push(this.start(typeUrl));
      if (!this.settledTypes.has(typeUrl)) break;
    }
    return out;
  }

  private start(typeUrl: string): Req {
    const book = this.o.books.get(typeUrl)!;
    this.started.add(typeUrl);
    if (book.accepted) this.settledTypes.add(typeUrl);
    let names: readonly string[] | undefined;
    if (typeUrl === EDS) {
      this.eds = normalize(this.o.sink.endpointNames());
      pruneTo(book, this.eds);
      names = this.eds;
    }
    const node = this.nodeSent ? undefined : this.o.node;
    this.nodeSent = true;
    return this.o.variant.start({ typeUrl, names, version: book.version, nonce: "" }, book.held, node);
  }

  /** After an applied Cluster set: follows the sink's endpoint names with the EDS subscription. */
  private followEndpoints(): Req[] {
    if (!this.started.has(EDS)) return []; // its first request will read the names
    const next = normalize(this.o.sink.endpointNames());
    if (sameList(next, this.eds)) return [];
    const before = this.eds;
    this.eds = next;
    const book = this.o.books.get(EDS)!;
    pruneTo(book, next);
    return [this.o.variant.resubscribe({ typeUrl: EDS, names: next, version: book.version, nonce: this.nonces.get(EDS) ?? "" }, before)];
  }
}

/** Drops held resources outside `names` (Envoy forgets the resources it unsubscribes from). */
function pruneTo(book: TypeBook, names: readonly string[]): void {
  const keep = new Set(names);
  if ([...book.held.keys()].every((n) => keep.has(n))) return;
  book.held = new Map([...book.held].filter(([n]) => keep.has(n)));
}

/** The sink's verdict; a sink that throws rejects the update with the error's message. */
function applyToSink(sink: XdsSink, typeUrl: string, set: ResourceTable): string | undefined {
  const resources = new Map<string, Any>();
  for (const [name, r] of set) resources.set(name, r.resource);
  try {
    return sink.apply(typeUrl, resources);
  } catch (err) {
    return `internal error applying the update: ${err instanceof Error ? err.message : String(err)}`;
  }
}
