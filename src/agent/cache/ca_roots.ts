/**
 * The CA roots as a cache type (Consul's agent/cache-types/connect_ca_root.go): a blocking query of the
 * roots of a datacenter, refreshed in the background. The leaf type follows it to notice a new active root.
 */
import type { CARoot } from "../../model/index.ts";
import { blockingQueryType } from "./blocking_query.ts";
import type { CacheResult, CacheType, FetchOptions } from "./types.ts";

/** Whose roots: the local datacenter's when `datacenter` is absent. */
export interface CaRootsRequest {
  readonly datacenter?: string;
}

/** The roots as the State service's "ca-roots" read returns them (without private keys). */
export interface CaRoots {
  readonly roots: readonly CARoot[];
  /** `<cluster-id>.consul`; "" before the CA is initialised. */
  readonly trustDomain: string;
  readonly activeRootId: string;
}

/** The least a roots value must say for the leaf type: which root is active and its signing key. */
export interface SigningRoots {
  readonly roots: readonly Pick<CARoot, "Active" | "SigningKeyID">[];
}

/** The active root's SigningKeyID, "" when there is no active root. */
export function activeSigningKeyId(roots: SigningRoots): string {
  return roots.roots.find((r) => r.Active)?.SigningKeyID ?? "";
}

/**
 * The roots type over `query`, one blocking read of the roots (the agent passes the State service's
 * "ca-roots" read). Keyed by datacenter.
 */
export function caRootsType<R extends SigningRoots = CaRoots>(
  query: (req: CaRootsRequest, options: FetchOptions) => Promise<CacheResult<R>>,
): CacheType<CaRootsRequest, R> {
  return blockingQueryType({ name: "connect-ca-root", key: (req) => req.datacenter ?? "", query });
}
