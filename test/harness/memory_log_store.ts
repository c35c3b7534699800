/**
 * A LogStore held in memory, for fast driver tests and simulations that model a crash without a file
 * system: `save` changes the live state, `sync` makes it the durable state, and `crash()` throws away
 * everything saved since the last completed sync. `fsyncs` counts syncs that had something to write.
 */
import type { LogStore, RecoveredLog } from "../../src/consensus/index.ts";
import { concatBytes } from "../../src/lib/index.ts";
import { EMPTY_HARD_STATE, type Entry, type HardState, type Snapshot } from "../../src/raft/index.ts";

interface State {
  hardState: HardState;
  snapshot: { meta: Snapshot; data: Uint8Array } | undefined;
  entries: Entry[];
}

export interface MemoryLogStore extends LogStore {
  readonly fsyncs: number;
  /** Loses unsynced writes; the next `recover` sees only durable state. Pending syncs never resolve. */
  crash(): void;
  /** The durable entries (for the log-matching checker). */
  durableEntries(): readonly Entry[];
  /** Index of the latest saved snapshot (0: none). */
  snapshotIndex(): number;
}

export function memoryLogStore(): MemoryLogStore {
  let live: State = { hardState: EMPTY_HARD_STATE, snapshot: undefined, entries: [] };
  let durable: State = { ...live, entries: [] };
  let dirty = false;
  let fsyncs = 0;
  let generation = 0;
  /** Snapshot files written and not yet recorded (writeSnapshot), by term and index. */
  const written = new Map<string, Uint8Array>();
  const copy = (s: State): State => ({ hardState: s.hardState, snapshot: s.snapshot, entries: s.entries.slice() });
  const store: MemoryLogStore = {
    get fsyncs() {
      return fsyncs;
    },
    recover(): RecoveredLog {
      live = copy(durable);
      return { hardState: live.hardState, snapshot: live.snapshot?.meta ?? { index: 0, term: 0, confState: { voters: [], learners: [], votersOutgoing: [], learnersNext: [], autoLeave: false } }, entries: live.entries.slice() };
    },
    save(hs, ents) {
      if (hs) live.hardState = hs;
      if (ents.length) {
        const first = ents[0]!.index;
        let keep = live.entries.length;
        while (keep > 0 && live.entries[keep - 1]!.index >= first) keep--;
        live.entries = live.entries.slice(0, keep).concat(ents);
      }
      dirty = true;
    },
    sync() {
      const gen = generation;
      const snapshot = copy(live);
      const wrote = dirty;
      dirty = false;
      // Resolve in a later microtask, like a real fsync; a crash in between loses it.
      return new Promise<void>((resolve) =>
        queueMicrotask(() => {
          if (gen !== generation) return;
          if (wrote) fsyncs++;
          durable = snapshot;
          resolve();
        }),
      );
    },
    snapshotIndex: () => live.snapshot?.meta.index ?? 0,
    async saveSnapshot(meta, data) {
      await store.writeSnapshot(meta, [data]);
      await store.recordSnapshot(meta);
    },
    async writeSnapshot(meta, parts) {
      const gen = generation;
      await Promise.resolve();
      if (gen !== generation) return new Promise<void>(() => {});
      written.set(snapshotKey(meta), concatBytes(parts));
    },
    async recordSnapshot(meta) {
      const gen = generation;
      await Promise.resolve();
      if (gen !== generation) return new Promise<void>(() => {});
      const data = written.get(snapshotKey(meta));
      if (!data) throw new Error(`memory log store: snapshot ${meta.index} was never written`);
      written.clear();
      const snap = { meta, data };
      // Entries after the snapshot survive only if the log agrees with it at its index (etcd's rule).
      const after = (ents: Entry[]) =>
        ents.some((e) => e.index === meta.index && e.term === meta.term) ? ents.filter((e) => e.index > meta.index) : [];
      // Like an append-only log, the fsync that makes the snapshot durable covers every earlier save.
      live.snapshot = snap;
      live.entries = after(live.entries);
      durable = copy(live);
    },
    loadSnapshot: () => live.snapshot,
    readSnapshot: () => Promise.resolve(live.snapshot),
    compact(index) {
      live.entries = live.entries.filter((e) => e.index > index);
    },
    close() {},
    crash() {
      generation++;
      written.clear();
      live = copy(durable);
      dirty = false;
    },
    durableEntries: () => durable.entries.slice(),
  };
  return store;
}

const snapshotKey = (meta: Snapshot) => `${meta.term}/${meta.index}`;
