/**
 * A semaphore with `limit` slots under a prefix, as Consul 1.8's api.Semaphore (api/semaphore.go) runs
 * it for `consul lock -n N`: a session with Behavior "delete" (its keys go with it), a contender key
 * `<prefix>/<session>` acquired with it, then a loop over the prefix listing that adds our session
 * to the `.lock` holder set with CAS when a slot is free (semaphore_core.ts decides), blocking on the
 * listing's index while all slots are taken. Release takes our session out of the set with CAS and
 * deletes the contender key; destroy deletes `.lock` with CAS when no live holder is left.
 */
import { acquisitionLoop, createContender, failingAs, monitorHeld, removeUnlessInUse, type Contender, type ContenderOptions } from "./contender.ts";
import {
  contenderKey,
  SEMAPHORE_FLAG_VALUE,
  semaphoreAcquireStep,
  semaphoreDestroyStep,
  semaphoreLockKey,
  semaphoreReleaseStep,
  semaphoreStillHeld,
} from "./semaphore_core.ts";

/** api.ErrSemaphoreConflict's text. */
export const SEMAPHORE_CONFLICT = "Existing key does not match semaphore use";

export interface SemaphoreOptions extends ContenderOptions {
  /** The KV prefix (not empty: Consul's SemaphoreOpts refuses "missing prefix"). */
  readonly prefix: string;
  /** The number of holders allowed at once; every contender must agree on it. */
  readonly limit: number;
}

/** A semaphore contender (not reusable: acquire once, release once). */
export function createSemaphore(o: SemaphoreOptions): Contender {
  const { api, prefix, limit } = o;
  const lockKey = semaphoreLockKey(prefix);
  const cas = (value: string, index: bigint) => failingAs("failed to update lock", api.cas(lockKey, value, SEMAPHORE_FLAG_VALUE, index));
  return createContender(o, {
    noun: "Semaphore",
    sessionBehavior: "delete",
    async waitFor(session, stop) {
      let made = false;
      let cause = "<nil>";
      try {
        made = await api.acquire(contenderKey(prefix, session), session, SEMAPHORE_FLAG_VALUE);
      } catch (err) {
        cause = (err as Error).message;
      }
      if (!made) throw new Error(`failed to make contender entry: ${cause}`);
      return acquisitionLoop(o, stop, (index, waitMs) => api.list(prefix, { index, waitMs }), "failed to read prefix", async (listing, { index }) => {
        const step = semaphoreAcquireStep(listing.value, prefix, session, limit);
        if (step.kind === "conflict") throw new Error(SEMAPHORE_CONFLICT);
        if (step.kind === "limit-conflict") throw new Error(`semaphore limit conflict (lock: ${step.lockLimit}, local: ${limit})`);
        if (step.kind === "full") return { kind: "read", index: listing.index };
        // A failed CAS lost a race with another contender: read again.
        return (await cas(step.value, step.index)) ? { kind: "held" } : { kind: "read", index };
      });
    },
    monitor: (session, stop) => monitorHeld((index) => api.list(prefix, { index, consistent: true }), (pairs) => semaphoreStillHeld(pairs, prefix, session, limit), o, stop),
    async release(session) {
      for (;;) {
        const step = semaphoreReleaseStep((await api.get(lockKey)).value, session, limit);
        if (step.kind === "none" || (await cas(step.value, step.index))) break;
      }
      await api.delete(contenderKey(prefix, session));
    },
    async destroy() {
      const pairs = (await failingAs("failed to read prefix", api.list(prefix))).value;
      const step = semaphoreDestroyStep(pairs, prefix, limit);
      await removeUnlessInUse(step, (index) => api.deleteCas(lockKey, index), { conflict: SEMAPHORE_CONFLICT, removeFailed: "failed to remove semaphore", inUse: "Semaphore in use" });
    },
  });
}
