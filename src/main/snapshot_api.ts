/**
 * `/v1/snapshot` over the replicated state: saving reads the whole state from the serving server
 * (the leader unless ?stale) and wraps it in an archive; restoring verifies the archive (decompressed as
 * a stream with a size limit, so a gzip bomb is refused early in constant memory) and sends the state to
 * a server, which checks it and replaces the state of every server through the replicated log.
 * Refusals carry their HTTP status (`statusCode`): 400 for an archive that is not a good snapshot, 413
 * for one over the size limit, and whatever the server's refusal carries (StateAccess).
 */
import type { HttpApiDeps, StateAccess } from "../http/index.ts";
import { nextTimerTurn, type Clock } from "../platform/index.ts";
import { readSnapshotArchiveStreaming, SnapshotArchiveError, writeSnapshotArchiveAsync } from "../state/index.ts";

export function snapshotApiOver(state: StateAccess, clock: Clock): NonNullable<HttpApiDeps["snapshots"]> {
  return {
    async save(options) {
      const { value, meta } = await state.read({ type: "snapshot" }, { ...options, minIndex: 0, maxWaitMs: 0 });
      const pause = () => nextTimerTurn(clock);
      return { archive: await writeSnapshotArchiveAsync(value.state, { index: value.index, term: value.term, nowMs: clock.now() }, pause), meta };
    },
    async restore(archive, datacenter, token) {
      let data: Uint8Array;
      try {
        data = (await readSnapshotArchiveStreaming(archive)).state;
      } catch (err) {
        if (err instanceof SnapshotArchiveError) throw Object.assign(err, { statusCode: err.reason === "too-large" ? 413 : 400 });
        throw err;
      }
      const result = await state.write({ type: "restore", data }, datacenter, token);
      if (result.type === "error") throw new Error(`restore failed: ${result.error}`);
    },
  };
}
