/**
 * A LogStore held in memory, for fast driver tests that do not exercise disks. Everything saved is
 * "durable" once sync resolves; `fsyncs` counts sync calls that had something to write.
 */
import type { LogStore, RecoveredLog } from "../../src/consensus/index.ts";
import { EMPTY_HARD_STATE, EMPTY_SNAPSHOT, type Entry, type HardState, type Snapshot } from "../../src/raft/index.ts";

export function memoryLogStore(): LogStore & { fsyncs: number } {
  let hardState: HardState = EMPTY_HARD_STATE;
  let snapshot: { meta: Snapshot; data: Uint8Array } | undefined;
  let entries: Entry[] = [];
  let dirty = false;
  const store = {
    fsyncs: 0,
    recover(): RecoveredLog {
      return { hardState, snapshot: snapshot?.meta ?? EMPTY_SNAPSHOT, entries: entries.slice() };
    },
    save(hs: HardState | undefined, ents: readonly Entry[]) {
      if (hs) hardState = hs;
      if (ents.length) {
        const first = ents[0]!.index;
        entries = entries.filter((e) => e.index < first).concat(ents);
      }
      dirty = true;
    },
    async sync() {
      if (dirty) store.fsyncs++;
      dirty = false;
    },
    async saveSnapshot(meta: Snapshot, data: Uint8Array) {
      snapshot = { meta, data: data.slice() };
      entries = entries.filter((e) => e.index > meta.index);
    },
    loadSnapshot: () => snapshot,
    compact(index: number) {
      entries = entries.filter((e) => e.index > index);
    },
    close() {},
  };
  return store;
}
