/**
 * A lock on one key, as Consul 1.8's api.Lock (api/lock.go) runs it for `consul lock` with -n 1: a
 * session with the session TTL, renewed in the background; a blocking read of the key while another
 * session holds it; `?acquire=` with the lock flags when it is free; after a refused acquire with
 * nobody holding the key (a lock-delay) a pause of LOCK_RETRY_MS; then blocking reads (consistent)
 * to notice the loss. Release is `?release=`; destroy deletes the key with CAS when nobody holds it.
 */
import { delay } from "../../../platform/index.ts";
import { ABORTED, acquisitionLoop, createContender, failingAs, monitorHeld, removeUnlessInUse, untilAborted, type Contender, type ContenderOptions, type LoopStep } from "./contender.ts";
import { LOCK_FLAG_VALUE, LOCK_RETRY_MS, lockDestroyStep, lockReadStep, lockStillHeld, refusedAcquireStep } from "./core.ts";

/** api.ErrLockConflict's text. */
export const LOCK_CONFLICT = "Existing key does not match lock use";

export interface KeyLockOptions extends ContenderOptions {
  /** The lock key: `<prefix>/.lock` for `consul lock`. */
  readonly key: string;
}

const HELD: LoopStep = { kind: "held" };
const STOP: LoopStep = { kind: "stop" };

/** A lock on `o.key` (not reusable: acquire once, release once). */
export function createKeyLock(o: KeyLockOptions): Contender {
  const { api, key } = o;
  return createContender(o, {
    noun: "Lock",
    waitFor: (session, stop) =>
      acquisitionLoop(o, stop, (index, waitMs) => api.get(key, { index, waitMs }), "failed to read lock", async (read, { waitMs }) => {
        const step = lockReadStep(read.value, session);
        if (step === "conflict") throw new Error(LOCK_CONFLICT);
        if (step === "held") return HELD;
        if (step === "wait") return { kind: "read", index: read.index };
        if (await failingAs("failed to acquire lock", api.acquire(key, session, LOCK_FLAG_VALUE))) return HELD;
        // Why was it refused? Held by someone after all (wait on it), or a lock-delay (pause, then retry).
        const again = await untilAborted(api.get(key, { waitMs }), stop);
        if (again === ABORTED) return STOP;
        if (refusedAcquireStep(again.value) === "wait") return { kind: "read", index: again.index };
        return (await delay(o.clock, LOCK_RETRY_MS, stop)) ? { kind: "read", index: 0n } : STOP;
      }),
    monitor: (session, stop) => monitorHeld((index) => api.get(key, { index, consistent: true }), (pair) => lockStillHeld(pair, session), o, stop),
    async release(session) {
      await failingAs("failed to release lock", api.release(key, session, LOCK_FLAG_VALUE));
    },
    async destroy() {
      const pair = (await failingAs("failed to read lock", api.get(key))).value;
      await removeUnlessInUse(lockDestroyStep(pair), (index) => api.deleteCas(key, index), { conflict: LOCK_CONFLICT, removeFailed: "failed to remove lock", inUse: "Lock in use" });
    },
  });
}
