/**
 * A service's leaf certificate as a cache type (Consul's agent/cache-types/connect_ca_leaf.go): signed
 * through a server on the first request, then each background fetch blocks until the leaf is due for
 * renewal (a random point in 60-90% of its lifetime) or the active CA root changes (renewal within a
 * 30 s jitter window), as `shouldRotateLeaf` decides. The roots come through the same cache (a watch on
 * the roots type), so all leaves share one blocking query of the roots.
 */
import { leafSigningKeyId, shouldRotateLeaf, type IssuedCert, type UnitRandom } from "../../connect/index.ts";
import type { Cancel, Clock } from "../../platform/index.ts";
import { activeSigningKeyId, type CaRootsRequest, type SigningRoots } from "./ca_roots.ts";
import type { AgentCache, CacheType, FetchResult, GetOptions } from "./types.ts";

/** Consul drops a leaf nobody asked for in 3 days (the leaf type's `LastGetTTL`); it is not renewed then. */
export const LEAF_UNUSED_TTL_MS = 72 * 3_600_000;

/** Which leaf: one per service of this agent's datacenter. */
export interface LeafRequest {
  readonly service: string;
}

/** What a leaf entry remembers between fetches (Consul's fetchState). */
export interface LeafState {
  /** The key ID that signed the cached leaf. */
  readonly keyId: string;
  /** When to replace it (epoch ms): drawn once per leaf, only ever moved earlier by a root change. */
  readonly renewAt: number;
  /** The active root key already reacted to ("" none), so one change moves `renewAt` once. */
  readonly rootKey: string;
}

/** What the leaf type needs. */
export interface LeafCertTypeDeps<R extends SigningRoots> {
  /** The cache the roots are read through (the one the leaf type is used with). */
  readonly cache: AgentCache;
  readonly roots: CacheType<CaRootsRequest, R>;
  readonly clock: Clock;
  readonly rng: UnitRandom;
  /**
   * Signs a new leaf for the request (through a server: the State service's SignLeaf), as the holder of
   * `token` (the entry's: the proxy's or the HTTP request's; undefined: the agent's default).
   */
  sign(req: LeafRequest, token: string | undefined): Promise<IssuedCert>;
  /** The key ID that signed a leaf; default: the authority key ID of its first certificate. */
  signingKeyIdOf?(cert: IssuedCert): string;
}

/** A leaf as the HTTP API serves it: the certificate, whose Create/ModifyIndex are the cache index. */
export interface CachedLeaf {
  readonly cert: IssuedCert;
  readonly index: number;
}

const sameKey = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The leaf type. Indexes are strictly increasing across the type's leaves (the X-Consul-Index of the
 * leaf endpoint). A fetch without a previous leaf signs at once (and rejects when signing fails); later
 * fetches wait with one timer until the leaf is due and then sign, or answer the same leaf with a new
 * `renewAt` as soon as the active root's key differs from the leaf's. They ignore `maxWaitMs` when it
 * is infinite (the type's RefreshTimeout), since they hold no server query open.
 */
export function leafCertType<R extends SigningRoots>(d: LeafCertTypeDeps<R>): CacheType<LeafRequest, IssuedCert, LeafState> {
  const keyIdOf = d.signingKeyIdOf ?? ((c: IssuedCert) => leafSigningKeyId(c.CertPEM));
  let lastIndex = 0;

  const fetch = (req: LeafRequest, options: { maxWaitMs: number; signal: AbortSignal; token?: string }, prev?: FetchResult<IssuedCert, LeafState>) =>
    new Promise<FetchResult<IssuedCert, LeafState>>((resolve, reject) => {
      if (options.signal.aborted) return reject(options.signal.reason);
      let active = "";
      let signing = false;
      let timer: Cancel | undefined;
      let deadline: Cancel | undefined;
      const cleanup = () => {
        timer?.();
        deadline?.();
        stopRoots();
        options.signal.removeEventListener("abort", onAbort);
      };
      const finish = (r: FetchResult<IssuedCert, LeafState>) => {
        cleanup();
        resolve(r);
      };
      const onAbort = () => {
        cleanup();
        reject(options.signal.reason);
      };

      const renew = () => {
        signing = true;
        timer?.();
        deadline?.();
        d.sign(req, options.token).then((cert) => {
          const index = Math.max(lastIndex + 1, cert.ModifyIndex);
          lastIndex = index;
          const keyId = keyIdOf(cert);
          const { renewAt } = shouldRotateLeaf({
            validAfter: Date.parse(cert.ValidAfter), validBefore: Date.parse(cert.ValidBefore),
            signingKeyId: keyId, activeSigningKeyId: active, now: d.clock.now(), rng: d.rng,
          });
          finish({ value: { ...cert, CreateIndex: index, ModifyIndex: index }, index, state: { keyId, renewAt, rootKey: active } });
        }, (err) => {
          cleanup();
          reject(err);
        });
      };

      /** A new active root: the same leaf with an earlier `renewAt` (Consul's forceExpireAfter) ends this fetch. */
      const onRoots = (roots: R) => {
        active = activeSigningKeyId(roots);
        const s = prev?.state;
        if (signing || !prev || !s || active === "" || active === s.rootKey || sameKey(active, s.keyId)) return;
        const decision = shouldRotateLeaf({
          validAfter: Date.parse(prev.value.ValidAfter), validBefore: Date.parse(prev.value.ValidBefore),
          signingKeyId: s.keyId, activeSigningKeyId: active, now: d.clock.now(), rng: d.rng, forceRenewAt: s.renewAt,
        });
        finish({ ...prev, state: { ...s, renewAt: decision.renewAt, rootKey: active } });
      };

      options.signal.addEventListener("abort", onAbort, { once: true });
      const stopRoots = d.cache.watch(d.roots, {}, { onUpdate: (r) => onRoots(r.value) });
      const s = prev?.state;
      if (!prev || !s) return renew();
      timer = d.clock.setTimer(Math.max(0, s.renewAt - d.clock.now()), renew);
      if (Number.isFinite(options.maxWaitMs)) deadline = d.clock.setTimer(options.maxWaitMs, () => finish(prev));
    });

  return {
    name: "connect-ca-leaf",
    key: (req) => req.service,
    fetch,
    refresh: true,
    refreshTimerMs: 0,
    refreshTimeoutMs: Infinity,
    lastGetTtlMs: LEAF_UNUSED_TTL_MS,
  };
}

/** The leaf of `service` from `cache` (see {@link AgentCache.get} for blocking and errors). */
export async function getLeaf(cache: AgentCache, leaf: CacheType<LeafRequest, IssuedCert, LeafState>, service: string, options?: GetOptions): Promise<CachedLeaf> {
  const r = await cache.get(leaf, { service }, options);
  return { cert: r.value, index: r.index };
}
