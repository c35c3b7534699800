/**
 * Pieces shared by the SotW and delta stream state machines (./sotw.ts, ./delta.ts).
 */
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import type { Any } from "@bufbuild/protobuf/wkt";
import type { Status } from "../../gen/google/rpc/status_pb.ts";
import type { CachedResource, NodeSnapshot } from "../cache/cache.ts";

/**
 * What a request did, for the service to log and count. `ack`/`nack` name the response they answer;
 * `stale` means the request named an older nonce of its type (SotW: ignored entirely; delta: only its
 * subscription changes were applied, as the protocol document requires); `request` is a first or
 * spontaneous request that answers nothing.
 */
export type RequestOutcome =
  | { readonly kind: "request"; readonly typeUrl: string; readonly first: boolean }
  | { readonly kind: "ack"; readonly typeUrl: string; readonly nonce: string; readonly version: string }
  | {
    readonly kind: "nack";
    readonly typeUrl: string;
    readonly nonce: string;
    /** The version the client still runs (SotW `version_info`; empty for delta). */
    readonly version: string;
    readonly errorCode: number;
    readonly errorMessage: string;
  }
  | { readonly kind: "stale"; readonly typeUrl: string; readonly nonce: string };

/** A request the protocol does not allow; the service ends the stream with INVALID_ARGUMENT. */
export class ProtocolError extends Error {
  override readonly name = "ProtocolError";
}

/** Consul's error for a request without a type URL (agent/xds/delta.go). */
export const TYPE_URL_REQUIRED = "type URL is required for ADS";

/** Nonces unique within one stream: 1, 2, 3... as 8 hex digits (as Consul formats them). */
export class NonceSource {
  private n = 0;
  next(): string {
    this.n++;
    return this.n.toString(16).padStart(8, "0");
  }
}

/**
 * Any values by the resource bytes they wrap. The cache shares one byte array between every node (and
 * every snapshot) holding the same resource, so all streams send the same Any object.
 */
const packed = new WeakMap<Uint8Array, Any>();

/**
 * Wraps a cached resource in an `Any` of its type. The Any is shared with every other response that
 * carries the same resource: responses are read-only values, never mutate one.
 */
export function packResource(typeUrl: string, resource: CachedResource): Any {
  const known = packed.get(resource.bytes);
  if (known?.typeUrl === typeUrl) return known;
  const any = create(AnySchema, { typeUrl, value: resource.bytes });
  if (!known) packed.set(resource.bytes, any);
  return any;
}

/** The NACK fields of a request's `error_detail`. */
export function nackDetail(status: Status): { errorCode: number; errorMessage: string } {
  return { errorCode: status.code, errorMessage: status.message };
}

/**
 * What both stream state machines share: the node's latest snapshot, per-type state created on a
 * type's first request, the one response in flight, and the stream's nonces.
 */
export abstract class StreamState<TypeState, InFlight extends { readonly typeUrl: string; readonly nonce: string }> {
  protected snapshot: NodeSnapshot | undefined;
  protected readonly types = new Map<string, TypeState>();
  protected inFlight: InFlight | undefined;
  protected readonly nonces = new NonceSource();

  /** The node's latest snapshot replaces the previous one; takes effect on the next `next()`. */
  onSnapshot(snapshot: NodeSnapshot): void {
    this.snapshot = snapshot;
  }

  /** True while a response waits for its ACK/NACK. */
  awaitingAck(): boolean {
    return this.inFlight !== undefined;
  }

  /** A fresh state for a type's first request. */
  protected abstract newTypeState(): TypeState;

  /** The type's state (`first` on its first request). Throws ProtocolError for an empty type URL. */
  protected stateFor(typeUrl: string): { st: TypeState; first: boolean } {
    if (typeUrl === "") throw new ProtocolError(TYPE_URL_REQUIRED);
    const known = this.types.get(typeUrl);
    if (known) return { st: known, first: false };
    const st = this.newTypeState();
    this.types.set(typeUrl, st);
    return { st, first: true };
  }

  /** The response in flight if `nonce` (of `typeUrl`) answers it; it is then no longer in flight. */
  protected takeAnswered(typeUrl: string, nonce: string): InFlight | undefined {
    const f = this.inFlight;
    if (nonce === "" || !f || f.typeUrl !== typeUrl || f.nonce !== nonce) return undefined;
    this.inFlight = undefined;
    return f;
  }
}
