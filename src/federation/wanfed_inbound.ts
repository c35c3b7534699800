/**
 * The receiving end of a packet connection through a mesh gateway (ALPN causeway/wan-gossip/packet;
 * Consul's handleALPN_WANGossipPacketStream): length-prefixed packets, delivered one by one.
 *
 * - A header declaring more than 4 MiB closes the connection (a memory-exhaustion guard) before any
 *   of the body is buffered; packets completed earlier in the same chunk are dropped with it.
 * - A connection that delivers no whole packet for `idleMs` (2 min, GossipPacketMaxIdleTime) is
 *   closed. Consul's read deadline covers each header only; here it covers header and body, so a
 *   peer cannot hold a connection open by trickling one packet's body.
 * - A stream that ends inside a packet is logged as truncated; either way the connection is closed.
 */
import type { Cancel, Clock, Logger } from "../platform/index.ts";
import { WanGossipPacketDecoder } from "./packet_framing.ts";
import type { WanfedConnection } from "./wanfed_connection.ts";

export interface PacketIngestOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Longest wait for the next whole packet. */
  readonly idleMs: number;
  /** One packet, in order. Must not throw (the caller catches). */
  readonly deliver: (bytes: Uint8Array) => void;
  /** Runs once when the connection is finished (ended, closed by us, or aborted). */
  readonly onDone: () => void;
}

/** How an ingested connection finished. */
export type PacketIngestEnd = "ended" | "truncated" | "oversize" | "idle" | "failed" | "aborted";

export interface PacketIngest {
  /** Stops at once and resets the connection (transport shutdown). */
  abort(): void;
  /** Undefined while the connection is read; then how it finished. */
  readonly finished: PacketIngestEnd | undefined;
}

/** Reads packets from `conn` (the peer as `remote`, for logs) until it ends, fails or breaks a rule above. */
export function ingestPacketConnection(conn: WanfedConnection, remote: string, options: PacketIngestOptions): PacketIngest {
  const { clock, logger: log } = options;
  const decoder = new WanGossipPacketDecoder();
  let finished: PacketIngestEnd | undefined;
  let cancelIdle: Cancel = () => {};

  const finish = (how: PacketIngestEnd, graceful: boolean) => {
    if (finished) return;
    finished = how;
    cancelIdle();
    if (graceful) conn.close();
    else conn.abort();
    options.onDone();
  };
  const arm = () => {
    cancelIdle();
    cancelIdle = clock.setTimer(options.idleMs, () => {
      log.debug("wanfed packet connection idle; closing", { remote, idleMs: options.idleMs });
      finish("idle", true);
    });
  };

  arm();
  conn.read({
    data(chunk) {
      if (finished) return;
      let packets: Uint8Array[];
      try {
        packets = decoder.push(chunk);
      } catch (err) {
        log.warn("wanfed packet connection closed", { remote, error: (err as Error).message });
        return finish("oversize", false);
      }
      if (packets.length > 0) arm();
      for (const p of packets) {
        if (finished) break;
        options.deliver(p);
      }
    },
    end(error) {
      if (finished) return;
      if (error) {
        log.debug("wanfed packet connection failed", { remote, error: error.message });
        return finish("failed", false);
      }
      try {
        decoder.end();
      } catch (err) {
        log.warn("wanfed packet connection closed", { remote, error: (err as Error).message });
        return finish("truncated", true);
      }
      finish("ended", true);
    },
  });

  return {
    abort: () => finish("aborted", false),
    get finished() {
      return finished;
    },
  };
}
