/**
 * The KV API's wire shape (GET /v1/kv/<key>: a JSON array of these, `Value` base64 or null) and the
 * helpers the kv subcommands share. See developer.hashicorp.com/consul/api-docs/kv.
 */
import type { Uint64 } from "../../../lib/index.ts";
import { decodeBase64, tabwrite, utf8 } from "../support/index.ts";

/** One entry of a KV read (the Go API's `KVPair`). */
export interface KvPair {
  readonly Key: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
  readonly LockIndex: number;
  readonly Flags: Uint64;
  /** Base64 of the value, or null for an empty one. */
  readonly Value: string | null;
  readonly Session?: string;
}

/** The value bytes of a pair. */
export function pairValue(pair: KvPair): Uint8Array {
  return pair.Value ? decodeBase64(pair.Value) : new Uint8Array(0);
}

/** Consul strips one leading "/" from a key argument: keys never start with one. */
export function stripLeadingSlash(key: string): string {
  return key.startsWith("/") ? key.slice(1) : key;
}

/**
 * command/kv/get's `prettyKVPair`: the fields in a tabwriter block, `Session` as `-` when unset, the value
 * raw or base64; no trailing newline.
 */
export function prettyPair(pair: KvPair, base64: boolean): string {
  const value = base64 ? (pair.Value ?? "") : utf8(pairValue(pair));
  return tabwrite(
    [
      `CreateIndex\t${pair.CreateIndex}`,
      `Flags\t${pair.Flags}`,
      `Key\t${pair.Key}`,
      `LockIndex\t${pair.LockIndex}`,
      `ModifyIndex\t${pair.ModifyIndex}`,
      `Session\t${pair.Session ? pair.Session : "-"}`,
      `Value\t${value}`,
    ].join("\n"),
  );
}
