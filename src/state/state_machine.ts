/**
 * The consensus driver's view of the store: apply log bytes, snapshot, restore. Structurally the
 * consensus StateMachine<StateResult> (src/state may not import src/consensus, which sits above it).
 */
import { decodeCommand } from "./codec.ts";
import type { StateCommand, StateResult } from "./commands.ts";
import type { StateStore } from "./store.ts";

/** Same shape as src/consensus StateMachine<R>. */
export interface ReplicatedStateMachine<R> {
  apply(index: number, command: Uint8Array): R;
  snapshot(): Uint8Array;
  /** snapshot()'s bytes as of the call, in parts, encoded with `pause()` awaited between slices. */
  snapshotInSlices?(pause: () => Promise<void>): Promise<readonly Uint8Array[]>;
  restore(data: Uint8Array): void;
}

/**
 * Wraps `store` for the Raft driver. An entry that does not decode is answered with
 * `{type: "error"}` (the same on every server) and changes nothing; apply never throws. `decoded`
 * holds commands the proposer already decoded, keyed by their bytes object (the Raft driver applies
 * a server's own proposal with the object it was given): those are not decoded again.
 */
export function createStateMachine(store: StateStore, decoded?: WeakMap<Uint8Array, StateCommand>): ReplicatedStateMachine<StateResult> {
  return {
    apply(index, command) {
      let cmd = decoded?.get(command);
      if (cmd) return store.apply(index, cmd);
      try {
        cmd = decodeCommand(command);
      } catch (e) {
        store.skip(index);
        return { type: "error", error: e instanceof Error ? e.message : String(e) };
      }
      return store.apply(index, cmd);
    },
    snapshot: () => store.replicaSnapshot(),
    snapshotInSlices: (pause) => store.replicaSnapshotInSlices(pause),
    restore: (data) => store.restore(data),
  };
}
