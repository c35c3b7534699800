/**
 * Framing of WAN gossip packets tunnelled through a mesh gateway (ALPN `causeway/wan-gossip/packet`,
 * Consul's agent/consul/wanfed and rpc.go handleWANFedGossipPacketConn): each packet is a uint32
 * big-endian length then that many bytes, many packets on one pooled connection. A length above 4 MiB
 * is refused before anything of the body is buffered (a memory-exhaustion guard); a stream that ends
 * inside a packet is reported as truncated. Pure: bytes in, packets out. Built on the membership
 * layer's length-prefixed frame reader, which allocates a packet only once all of it has arrived.
 */
import { encodeFrame, FrameReader, FrameTooLargeError } from "../membership/index.ts";

/** Largest packet accepted or sent (Consul's wanfed.GossipPacketMaxByteSize, 4 MiB; exactly 4 MiB is allowed). */
export const WAN_GOSSIP_PACKET_MAX_BYTES = 4 * 1024 * 1024;

/** A pooled packet connection idle this long is closed, and a reader waits this long for a header (GossipPacketMaxIdleTime). */
export const WAN_GOSSIP_PACKET_MAX_IDLE_MS = 2 * 60 * 1000;

/** The packet stream is broken; the connection must be closed. */
export class PacketFramingError extends Error {
  override readonly name = "PacketFramingError";
  constructor(readonly kind: "oversize" | "truncated", message: string) {
    super(message);
  }
}

const oversize = (size: number) =>
  new PacketFramingError("oversize", `gossip packet size ${size} exceeds threshold of ${WAN_GOSSIP_PACKET_MAX_BYTES}`);

/** One framed packet: 4-byte big-endian length, then `payload`. Throws PacketFramingError("oversize") above 4 MiB. */
export function encodeWanGossipPacket(payload: Uint8Array): Uint8Array {
  if (payload.length > WAN_GOSSIP_PACKET_MAX_BYTES) throw oversize(payload.length);
  return encodeFrame(payload);
}

/**
 * Incremental decoder for one connection's bytes. `push` returns the packets each chunk completes (in
 * order, each a fresh array of exactly its length; a zero-length packet is returned as an empty array
 * for the gossip layer to judge). A header declaring more than 4 MiB throws PacketFramingError
 * ("oversize", Consul's message) without buffering the body, and so does every later push; packets
 * completed earlier in that same chunk are dropped with the connection. `end` reports a stream that
 * stopped inside a header or a body (PacketFramingError "truncated"). Memory held is at most the bytes
 * received of the incomplete packet.
 */
export class WanGossipPacketDecoder {
  readonly #reader = new FrameReader(WAN_GOSSIP_PACKET_MAX_BYTES);
  #failure: PacketFramingError | undefined;

  /** Bytes received of the incomplete packet (its header included). */
  get buffered(): number {
    return this.#reader.buffered;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.#failure) throw this.#failure;
    try {
      return this.#reader.push(chunk);
    } catch (err) {
      if (!(err instanceof FrameTooLargeError)) throw err;
      throw (this.#failure = oversize(err.declared));
    }
  }

  /** The stream ended: throws PacketFramingError("truncated") if it ended inside a packet (or the earlier failure). */
  end(): void {
    if (this.#failure) throw this.#failure;
    const left = this.#reader.buffered;
    if (left > 0) {
      throw (this.#failure = new PacketFramingError("truncated", `gossip packet stream ended inside a packet (${left} bytes of it received)`));
    }
  }
}
