/**
 * A `/v1/snapshot` restore on the server that receives it. The snapshot is checked here first
 * (src/state snapshot_check.ts, with the config-entry graph check of src/connect), so a bad one is
 * refused with InvalidArgument before anything reaches the Raft log. A good one is proposed in chunks,
 * because a Raft entry is limited to what one transport message carries (src/consensus limits.ts) and a
 * snapshot may be far bigger: `restore-stage` begin, one chunk entry per `chunkBytes` of the snapshot,
 * then commit, which every server applies atomically once its checks pass (src/state
 * restore_staging.ts explains why the chunks are staged in the replicated state). Writes may interleave
 * with the chunks; they are replaced by the restored state at the commit, as with any restore.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { validateEntryInGraph, CONFIG_ENTRY_KINDS, type ConfigEntryKind } from "../connect/index.ts";
import { ProposalDroppedError, ProposalTooLargeError, StorageFailedError } from "../consensus/index.ts";
import type { ConfigEntry } from "../model/index.ts";
import { createHash } from "node:crypto";
import type { Rng } from "../platform/index.ts";
import { checkSnapshot, InvalidSnapshotError, type StateCommand, type StateResult } from "../state/index.ts";

/** Raw snapshot bytes per chunk entry at most: 4 MiB (5.4 MiB of base64 in the entry). */
export const RESTORE_CHUNK_BYTES = 4 * 1024 * 1024;

/** The largest chunk whose `restore-stage` entry (base64 in JSON) fits in `maxCommandBytes`. */
export function restoreChunkBytes(maxCommandBytes: number): number {
  return Math.max(1, Math.min(RESTORE_CHUNK_BYTES, Math.floor(((maxCommandBytes - 1024) * 3) / 4)));
}

/** Whether `k` names a config entry kind src/connect knows. */
export const isConfigEntryKind = (k: string): k is ConfigEntryKind => (CONFIG_ENTRY_KINDS as readonly string[]).includes(k);

/** The whole config-entry graph of a snapshot, as each entry would be checked on its own write. */
function checkConfigGraph(entries: readonly ConfigEntry[]): string | undefined {
  for (const e of entries) {
    if (!isConfigEntryKind(e.Kind)) continue;
    try {
      validateEntryInGraph(entries, e);
    } catch (err) {
      return `${e.Kind} ${JSON.stringify(e.Name)}: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  return undefined;
}

/** Throws ConnectError(InvalidArgument) naming the problem unless `data` is a snapshot the store can restore. */
export function checkRestore(data: Uint8Array): void {
  try {
    checkSnapshot(data, { checkConfigEntries: checkConfigGraph });
  } catch (err) {
    if (err instanceof InvalidSnapshotError) throw new ConnectError(err.message, Code.InvalidArgument);
    throw err;
  }
}

/**
 * Proposal failures as the State service reports them: too large (ResourceExhausted, the HTTP API's 413),
 * dropped (Unavailable, "No cluster leader"); anything else as it is (outcome unknown).
 */
export function proposalError(err: unknown): unknown {
  if (err instanceof ProposalTooLargeError) return new ConnectError(err.message, Code.ResourceExhausted);
  if (err instanceof ProposalDroppedError) return new ConnectError(`No cluster leader (${err.message})`, Code.Unavailable);
  if (err instanceof StorageFailedError) return new ConnectError(err.message, Code.Unavailable);
  return err;
}

export interface ChunkedRestoreOptions {
  readonly propose: (cmd: StateCommand) => Promise<StateResult>;
  /** Draws the restore's ID. */
  readonly rng: Rng;
  readonly chunkBytes: number;
}

/**
 * Proposes a checked snapshot as begin, chunks and commit; resolves with the commit's result (or the first
 * refusal). On a refusal or a failed proposal it proposes an abort, without waiting for it, so the
 * staged chunks do not wait for the leader's clean-up.
 */
export async function restoreInChunks(data: Uint8Array, o: ChunkedRestoreOptions): Promise<StateResult> {
  const id = Array.from(o.rng.bytes(16), (b) => b.toString(16).padStart(2, "0")).join("");
  const chunks = Math.max(1, Math.ceil(data.length / o.chunkBytes));
  const sha256 = createHash("sha256").update(data).digest("hex");
  const abort = () => void o.propose({ type: "restore-stage", op: "abort", id }).catch(() => {});
  const begun = await o.propose({ type: "restore-stage", op: "begin", id, chunks, size: data.length, sha256 });
  if (begun.type === "error") return begun;
  try {
    for (let seq = 0; seq < chunks; seq++) {
      const r = await o.propose({ type: "restore-stage", op: "chunk", id, seq, data: data.subarray(seq * o.chunkBytes, (seq + 1) * o.chunkBytes) });
      if (r.type === "error") {
        abort();
        return r;
      }
    }
  } catch (err) {
    abort();
    throw err;
  }
  return o.propose({ type: "restore-stage", op: "commit", id });
}
