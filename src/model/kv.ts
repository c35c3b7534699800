/** Key/value types in Consul's wire shape (agent/structs DirEntry, v1.8). */
import type { Uint64 } from "../lib/index.ts";
import type { RaftIndex } from "./catalog.ts";

/** A stored key. `Value` is raw bytes here; the HTTP layer encodes it as base64 (or null when absent). */
export interface DirEntry extends RaftIndex {
  readonly Key: string;
  /** Go uint64: exact over the whole range (a bigint past 2^53). */
  readonly Flags: Uint64;
  readonly Value: Uint8Array | null;
  /** The session holding the lock on this key, if any. */
  readonly Session?: string;
  /** How many times the lock on this key has been acquired. */
  readonly LockIndex: number;
}

/** Consul's limit on a KV value (`raft_max_kv_value_size`... default `kv_max_value_size` 512 KiB). */
export const MAX_KV_VALUE_BYTES = 512 * 1024;
