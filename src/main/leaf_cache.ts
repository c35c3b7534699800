/**
 * The agent's cache of service leaf certificates (Consul 1.8's `agent/cache-types/connect_ca_leaf.go`):
 * one leaf per service, signed through a server on first request, served from memory afterwards, and
 * replaced in the background before it expires (a random point in 60-90% of its lifetime) and soon
 * after the active CA root changes (within a 30 s jitter window), as `shouldRotateLeaf` decides.
 * The active root is followed with a blocking read of the CA roots. Blocking requests (`?index=`) wait
 * for the next leaf of their service. Time comes from the injected clock, so tests drive it by hand.
 */
import { leafSigningKeyId, shouldRotateLeaf, type IssuedCert, type UnitRandom } from "../connect/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";

/** Consul drops a cache entry nobody asked for in 3 days (the leaf type's `LastGetTTL`); it is not renewed then. */
export const LEAF_UNUSED_TTL_MS = 72 * 3_600_000;
/** How long a blocking read of the roots may wait before it is asked again. */
const ROOTS_WAIT_MS = 10 * 60_000;

/** What the cache needs from the agent. */
export interface LeafCacheDeps {
  readonly clock: Clock;
  readonly rng: UnitRandom;
  readonly logger: Logger;
  /** Signs a new leaf for `service` (through a server: the State service's SignLeaf). */
  sign(service: string): Promise<IssuedCert>;
  /**
   * The active root's SigningKeyID ("" when there is none) and the roots' index: at once when the index
   * is past `minIndex` (or minIndex is 0), else when the roots change or after about `maxWaitMs`.
   */
  watchRoots(minIndex: number, maxWaitMs: number): Promise<{ readonly index: number; readonly activeSigningKeyId: string }>;
  /** The key ID that signed a leaf; default: the authority key ID of its first certificate. */
  signingKeyIdOf?(cert: IssuedCert): string;
  /** Delay before retrying a failed renewal or roots read; default 5 s. */
  readonly retryMs?: number;
}

/** A cached leaf and its index (strictly increasing per cache; the X-Consul-Index of the leaf endpoint). */
export interface CachedLeaf {
  readonly cert: IssuedCert;
  readonly index: number;
}

export interface LeafCache {
  /**
   * The service's current leaf, signed first if there is none (rejects when signing fails). With
   * `minIndex` > 0 it waits until a leaf with a greater index exists or `maxWaitMs` passes.
   */
  get(service: string, options?: { readonly minIndex?: number; readonly maxWaitMs?: number }): Promise<CachedLeaf>;
  /** Stops renewals and the roots watch; pending blocking requests answer with what they have. */
  close(): void;
}

interface Entry {
  readonly service: string;
  leaf?: CachedLeaf;
  keyId: string;
  fetching?: Promise<CachedLeaf>;
  timer?: Cancel;
  /** A renewal deadline set when the root changed (Consul's forceExpireAfter); never postponed. */
  forceRenewAt?: number;
  lastUsed: number;
  readonly waiters: Set<() => void>;
}

export function createLeafCache(d: LeafCacheDeps): LeafCache {
  const entries = new Map<string, Entry>();
  const retryMs = d.retryMs ?? 5_000;
  const keyIdOf = d.signingKeyIdOf ?? ((c: IssuedCert) => leafSigningKeyId(c.CertPEM));
  let lastIndex = 0;
  let activeKeyId = "";
  let closed = false;
  let watching = false;
  let rootsTimer: Cancel | undefined;

  const notify = (e: Entry) => {
    for (const w of [...e.waiters]) w();
  };

  /** Re-evaluates when `e`'s leaf is due (after a new leaf, or when the active root changed). */
  const schedule = (e: Entry) => {
    e.timer?.();
    e.timer = undefined;
    if (closed || !e.leaf) return;
    const now = d.clock.now();
    const decision = shouldRotateLeaf({
      validAfter: Date.parse(e.leaf.cert.ValidAfter),
      validBefore: Date.parse(e.leaf.cert.ValidBefore),
      signingKeyId: e.keyId,
      activeSigningKeyId: activeKeyId,
      now,
      rng: d.rng,
      forceRenewAt: e.forceRenewAt,
    });
    if (decision.reason === "root-changed") e.forceRenewAt = decision.renewAt;
    e.timer = d.clock.setTimer(Math.max(0, decision.renewAt - now), () => renew(e));
  };

  const fetch = (e: Entry): Promise<CachedLeaf> => {
    e.fetching ??= d.sign(e.service).then((cert) => {
      const index = Math.max(lastIndex + 1, cert.ModifyIndex);
      lastIndex = index;
      e.leaf = { cert: { ...cert, CreateIndex: index, ModifyIndex: index }, index };
      e.keyId = keyIdOf(cert);
      e.forceRenewAt = undefined;
      schedule(e);
      notify(e);
      return e.leaf;
    }).finally(() => {
      e.fetching = undefined;
    });
    return e.fetching;
  };

  const renew = (e: Entry) => {
    e.timer = undefined;
    if (closed) return;
    if (d.clock.monotonic() - e.lastUsed > LEAF_UNUSED_TTL_MS) {
      entries.delete(e.service);
      return;
    }
    fetch(e).catch((err) => {
      d.logger.warn("renewing a leaf certificate failed; will retry", { service: e.service, error: err });
      if (!closed && entries.get(e.service) === e) e.timer = d.clock.setTimer(retryMs, () => renew(e));
    });
  };

  /** Follows the active root; a change re-evaluates every cached leaf. */
  const watchRoots = async (minIndex: number): Promise<void> => {
    if (closed) return;
    let next = minIndex;
    try {
      const r = await d.watchRoots(minIndex, ROOTS_WAIT_MS);
      next = r.index;
      if (r.activeSigningKeyId !== activeKeyId) {
        activeKeyId = r.activeSigningKeyId;
        for (const e of entries.values()) schedule(e);
      }
    } catch (err) {
      if (closed) return;
      d.logger.warn("watching the CA roots failed; will retry", { error: err });
      rootsTimer = d.clock.setTimer(retryMs, () => void watchRoots(minIndex));
      return;
    }
    void watchRoots(next);
  };

  return {
    async get(service, options = {}) {
      if (closed) throw new Error("the leaf certificate cache is closed");
      let e = entries.get(service);
      if (!e) {
        e = { service, keyId: "", lastUsed: d.clock.monotonic(), waiters: new Set() };
        entries.set(service, e);
      }
      e.lastUsed = d.clock.monotonic();
      if (!watching) {
        watching = true;
        void watchRoots(0);
      }
      const current = e.leaf ?? (await fetch(e));
      const minIndex = options.minIndex ?? 0;
      if (minIndex === 0 || current.index > minIndex) return current;
      const entry = e;
      await new Promise<void>((resolve) => {
        const done = () => {
          cancel();
          entry.waiters.delete(done);
          resolve();
        };
        const cancel = d.clock.setTimer(options.maxWaitMs ?? 0, done);
        entry.waiters.add(done);
      });
      return entry.leaf ?? current;
    },
    close() {
      closed = true;
      rootsTimer?.();
      for (const e of entries.values()) {
        e.timer?.();
        notify(e);
      }
    },
  };
}
