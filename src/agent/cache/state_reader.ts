/**
 * The reads the agent's cache types make: a blocking read of the replicated state, as src/main's
 * StateAccess answers it (the server's own state, or a server's over RPC). Declared here so that the
 * cache types depend on src/model only; any object with this `read` fits.
 */
import type { ReadQuery, ReadValue } from "../../model/index.ts";
import type { CacheResult, FetchOptions } from "./types.ts";

/** How a read is asked: `datacenter` undefined = this agent's; minIndex 0 = at once. */
export interface StateReadOptions {
  readonly datacenter: string | undefined;
  readonly consistency: "default" | "stale" | "consistent";
  readonly minIndex: number;
  readonly maxWaitMs: number;
  /** The ACL token to read with; absent: the reader's default token. */
  readonly token?: string;
}

/** Blocking reads of the replicated state (src/main's StateAccess has this shape). */
export interface StateReader {
  read<Q extends ReadQuery>(query: Q, options: StateReadOptions): Promise<{ readonly value: ReadValue<Q>; readonly meta: { readonly index: number } }>;
}

/** One blocking read for a cache fetch: the fetch's index, wait and token, default consistency, in `datacenter`. */
export async function blockingRead<Q extends ReadQuery>(
  reader: StateReader,
  query: Q,
  datacenter: string | undefined,
  options: Pick<FetchOptions, "minIndex" | "maxWaitMs" | "token">,
): Promise<CacheResult<ReadValue<Q>>> {
  const r = await reader.read(query, { datacenter, consistency: "default", minIndex: options.minIndex, maxWaitMs: options.maxWaitMs, ...(options.token ? { token: options.token } : {}) });
  return { value: r.value, index: r.meta.index };
}
