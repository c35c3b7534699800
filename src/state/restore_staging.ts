/**
 * A restore staged in chunks (the `restore-stage` commands). A Raft entry is limited in size (it must fit
 * in one transport message), so a snapshot bigger than that reaches the servers as numbered chunks, each
 * its own entry. They wait here, in the replicated state, until a commit entry checks them (every chunk,
 * the total size, the SHA-256) and hands over the whole snapshot, which the store then applies at once:
 * the new state or, on any mismatch, nothing.
 *
 * Why in the replicated state: staged chunks travel in Raft snapshots (the store's replica snapshot), so a
 * server that restarts, or catches up from a snapshot, in the middle of a restore still has every chunk
 * committed before; a crash of the server that sends them leaves only an idle staging, which the next
 * `begin` replaces or the leader aborts (src/server/leader_restore_gc.ts). One restore is staged at a
 * time: `begin` drops any other.
 */
import { createHash } from "node:crypto";
import { fromBase64, toBase64 } from "./bytes.ts";
import type { RestoreStageCommand } from "./commands.ts";
import { StateError } from "./tx.ts";

/** Bounds on one staged restore: chunks, and bytes in all (the snapshot archive's own limit is lower). */
export const MAX_RESTORE_CHUNKS = 65_536;
export const MAX_RESTORE_BYTES = 4 * 1024 ** 3;

/** What the leader's clean-up watches: which restore is staged and the index of its last begin or chunk. */
export interface StagedRestoreInfo {
  readonly id: string;
  readonly chunks: number;
  readonly received: number;
  readonly lastIndex: number;
}

interface Staged {
  readonly id: string;
  readonly size: number;
  readonly sha256: string;
  readonly parts: (Uint8Array | undefined)[];
  received: number;
  bytes: number;
  lastIndex: number;
}

type Begin = Extract<RestoreStageCommand, { op: "begin" }>;
type Chunk = Extract<RestoreStageCommand, { op: "chunk" }>;

/** The staging area of one store. Errors are StateErrors with the message the proposer sees. */
export class RestoreStaging {
  private cur: Staged | undefined;

  info(): StagedRestoreInfo | undefined {
    const c = this.cur;
    return c && { id: c.id, chunks: c.parts.length, received: c.received, lastIndex: c.lastIndex };
  }

  begin(index: number, cmd: Begin): void {
    if (cmd.chunks < 1 || cmd.chunks > MAX_RESTORE_CHUNKS) throw new StateError(`a staged restore has 1 to ${MAX_RESTORE_CHUNKS} chunks, not ${cmd.chunks}`);
    if (cmd.size > MAX_RESTORE_BYTES) throw new StateError(`a staged restore holds at most ${MAX_RESTORE_BYTES} bytes, not ${cmd.size}`);
    this.cur = { id: cmd.id, size: cmd.size, sha256: cmd.sha256, parts: new Array(cmd.chunks).fill(undefined), received: 0, bytes: 0, lastIndex: index };
  }

  chunk(index: number, cmd: Chunk): void {
    const c = this.staged(cmd.id);
    if (cmd.seq >= c.parts.length) throw new StateError(`chunk ${cmd.seq} is out of range: restore ${c.id} has ${c.parts.length} chunks`);
    const old = c.parts[cmd.seq];
    const bytes = c.bytes - (old?.length ?? 0) + cmd.data.length;
    if (bytes > c.size) throw new StateError(`restore ${c.id} received more than its ${c.size} bytes`);
    c.parts[cmd.seq] = cmd.data;
    c.bytes = bytes;
    if (!old) c.received++;
    c.lastIndex = index;
  }

  /**
   * The complete snapshot of restore `id`, once every chunk arrived and its size and SHA-256 match what
   * `begin` announced. The staging is cleared either way; throws StateError saying what is wrong.
   */
  take(id: string): Uint8Array {
    const c = this.staged(id);
    this.cur = undefined;
    const missing = c.parts.findIndex((p) => !p);
    if (missing >= 0) throw new StateError(`restore ${id} is missing chunk ${missing} of ${c.parts.length}`);
    if (c.bytes !== c.size) throw new StateError(`restore ${id} has ${c.bytes} bytes, not the ${c.size} announced`);
    const data = new Uint8Array(c.size);
    let at = 0;
    for (const p of c.parts) {
      data.set(p!, at);
      at += p!.length;
    }
    if (createHash("sha256").update(data).digest("hex") !== c.sha256) throw new StateError(`restore ${id} does not match its SHA-256 checksum`);
    return data;
  }

  /** Drops restore `id` if it is the one staged. */
  abort(id: string): void {
    if (this.cur?.id === id) this.cur = undefined;
  }

  /** The staging as plain JSON for a replica snapshot; undefined when nothing is staged. */
  toJson(): unknown {
    const c = this.cur;
    if (!c) return undefined;
    return { id: c.id, size: c.size, sha256: c.sha256, lastIndex: c.lastIndex, parts: c.parts.map((p) => (p ? toBase64(p) : null)) };
  }

  /** Replaces the staging with a replica snapshot's (`undefined`: nothing staged); throws on malformed input. */
  load(v: unknown): void {
    if (v === undefined) {
      this.cur = undefined;
      return;
    }
    const o = v as Record<string, unknown>;
    const ok = typeof o === "object" && o !== null && typeof o.id === "string" && Number.isSafeInteger(o.size) && typeof o.sha256 === "string" &&
      Number.isSafeInteger(o.lastIndex) && Array.isArray(o.parts) && o.parts.every((p) => p === null || typeof p === "string");
    if (!ok) throw new Error("invalid state snapshot: restoreStaging is malformed");
    const parts = (o.parts as (string | null)[]).map((p) => (p === null ? undefined : fromBase64(p)));
    const present = parts.filter((p): p is Uint8Array => p !== undefined);
    this.cur = {
      id: o.id as string, size: o.size as number, sha256: o.sha256 as string, parts, lastIndex: o.lastIndex as number,
      received: present.length, bytes: present.reduce((n, p) => n + p.length, 0),
    };
  }

  private staged(id: string): Staged {
    if (this.cur?.id !== id) throw new StateError(`restore ${id} is not staged (a newer restore replaced it, or it was aborted)`);
    return this.cur;
  }
}
