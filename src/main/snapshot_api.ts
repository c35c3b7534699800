/**
 * `/v1/snapshot` over the replicated state: saving reads the whole state from the serving server
 * (the leader unless ?stale) and wraps it in an archive; restoring verifies the archive and replaces
 * the state of every server through one replicated command.
 */
import type { HttpApiDeps, StateAccess } from "../http/index.ts";
import type { Clock } from "../platform/index.ts";
import { readSnapshotArchive, writeSnapshotArchive } from "../state/index.ts";

export function snapshotApiOver(state: StateAccess, clock: Clock): NonNullable<HttpApiDeps["snapshots"]> {
  return {
    async save(options) {
      const { value, meta } = await state.read({ type: "snapshot" }, { ...options, minIndex: 0, maxWaitMs: 0 });
      return { archive: writeSnapshotArchive(value.state, { index: value.index, term: value.term, nowMs: clock.now() }), meta };
    },
    async restore(archive, datacenter) {
      const { state: data } = readSnapshotArchive(archive);
      const result = await state.write({ type: "restore", data }, datacenter);
      if (result.type === "error") throw new Error(`restore failed: ${result.error}`);
    },
  };
}
