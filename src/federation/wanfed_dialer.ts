/**
 * Dialling a server of another datacenter through a mesh gateway, for the wanfed transport: ask the
 * locator for a gateway, dial it with the server's SNI and an ALPN, and never wait longer than the
 * deadline (Consul's DialRPCViaMeshGateway, whose TCP dial has pool.DefaultDialTimeout, 10 s). A dial
 * still in flight when the deadline passes or the dialer closes is rejected at once; the connection,
 * should it arrive later, is aborted.
 */
import type { Cancel, Clock } from "../platform/index.ts";
import type { WanfedConnection, WanfedDial } from "./wanfed_connection.ts";

/** The locator's pick for a datacenter: a gateway "host:port", or why there is none (the operator-facing message). */
export type GatewayResolution = { readonly ok: true; readonly address: string } | { readonly ok: false; readonly message: string };

/** No usable mesh gateway for `datacenter`: the message is the locator's ("no path to datacenter X: no healthy mesh gateway"). */
export class NoGatewayError extends Error {
  override readonly name = "NoGatewayError";
  constructor(readonly datacenter: string, message: string) {
    super(message);
  }
}

/** Consul's pool.DefaultDialTimeout. */
export const WANFED_DIAL_TIMEOUT_MS = 10_000;

export interface GatewayDialerOptions {
  readonly resolveGateway: (dc: string) => GatewayResolution;
  readonly dial: WanfedDial;
  readonly clock: Clock;
}

/** A connection through a gateway and the gateway it went through. */
export interface GatewayConnection {
  readonly conn: WanfedConnection;
  readonly gateway: string;
}

export interface GatewayDialer {
  /**
   * Opens a connection to `sni` in datacenter `dc` with `alpn`. Rejects with NoGatewayError before
   * dialling when the locator has no gateway, with the dial's own error (prefixed with the SNI and
   * gateway), or with a timeout after `timeoutMs`; rejects at once when the dialer closes.
   */
  open(dc: string, sni: string, alpn: string, timeoutMs: number): Promise<GatewayConnection>;
  /** Dials in flight. */
  readonly pending: number;
  /** Rejects every dial in flight and every later one; connections that still arrive are aborted. Idempotent. */
  close(): void;
}

export function createGatewayDialer(options: GatewayDialerOptions): GatewayDialer {
  const { clock } = options;
  const inflight = new Set<(err: Error) => void>();
  let closed = false;

  return {
    get pending() {
      return inflight.size;
    },
    open(dc, sni, alpn, timeoutMs) {
      if (closed) return Promise.reject(new Error(`dial ${sni}: wanfed transport closed`));
      const route = options.resolveGateway(dc);
      if (!route.ok) return Promise.reject(new NoGatewayError(dc, route.message));
      const gateway = route.address;
      const what = `dial ${sni} via mesh gateway ${gateway}`;
      return new Promise<GatewayConnection>((resolve, reject) => {
        let settled = false;
        let cancelTimer: Cancel = () => {};
        const giveUp = (err: Error) => {
          if (settled) return;
          settled = true;
          inflight.delete(giveUp);
          cancelTimer();
          reject(err);
        };
        inflight.add(giveUp);
        cancelTimer = clock.setTimer(timeoutMs, () => giveUp(new Error(`${what}: timed out after ${timeoutMs} ms`)));
        let dialing: Promise<WanfedConnection>;
        try {
          dialing = options.dial(gateway, sni, alpn, timeoutMs);
        } catch (err) {
          dialing = Promise.reject(err);
        }
        dialing.then(
          (conn) => {
            if (settled) return conn.abort();
            settled = true;
            inflight.delete(giveUp);
            cancelTimer();
            resolve({ conn, gateway });
          },
          (err: unknown) => giveUp(new Error(`${what}: ${(err as Error)?.message ?? String(err)}`, { cause: err })),
        );
      });
    },
    close() {
      if (closed) return;
      closed = true;
      for (const giveUp of [...inflight]) giveUp(new Error("wanfed transport closed while dialling"));
    },
  };
}
