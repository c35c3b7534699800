/**
 * A cache of service leaf certificates alone, over the generic cache: the leaf type with a roots type
 * that reads only the active root's signing key. For callers that have a signer and a roots feed but no
 * cache of their own (and the place the leaf behaviour is specified by tests).
 */
import type { IssuedCert, UnitRandom } from "../../connect/index.ts";
import type { Clock, Logger } from "../../platform/index.ts";
import { createAgentCache } from "./cache.ts";
import { getLeaf, leafCertType, type CachedLeaf } from "./ca_leaf.ts";
import { caRootsType, type SigningRoots } from "./ca_roots.ts";

/** What the leaf cache needs. */
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
}

export interface LeafCache {
  /**
   * The service's current leaf, signed first if there is none (rejects when signing fails). With
   * `minIndex` > 0 it waits until a leaf with a greater index exists or `maxWaitMs` (default 0) passes.
   */
  get(service: string, options?: { readonly minIndex?: number; readonly maxWaitMs?: number }): Promise<CachedLeaf>;
  /** Stops renewals and the roots watch; pending blocking requests answer with what they have. */
  close(): void;
}

/** A leaf cache over `d.sign` and `d.watchRoots` (see {@link leafCertType} for when leaves are renewed). */
export function createLeafCache(d: LeafCacheDeps): LeafCache {
  const cache = createAgentCache({ clock: d.clock, rng: d.rng, logger: d.logger });
  const roots = caRootsType<SigningRoots>(async (_req, o) => {
    const r = await d.watchRoots(o.minIndex, o.maxWaitMs);
    return { index: r.index, value: { roots: r.activeSigningKeyId ? [{ Active: true, SigningKeyID: r.activeSigningKeyId }] : [] } };
  });
  const leaf = leafCertType({
    cache, roots, clock: d.clock, rng: d.rng, sign: (req) => d.sign(req.service),
    ...(d.signingKeyIdOf ? { signingKeyIdOf: d.signingKeyIdOf } : {}),
  });
  return {
    get: (service, o = {}) => getLeaf(cache, leaf, service, { minIndex: o.minIndex ?? 0, maxWaitMs: o.maxWaitMs ?? 0 }),
    close: () => cache.close(),
  };
}
