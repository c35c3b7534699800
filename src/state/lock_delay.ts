/**
 * Per-server KV lock-delay (Consul's agent/consul/state/delay.go): after a session is invalidated,
 * the keys it held cannot be locked for the session's LockDelay. It lives in memory on each server,
 * from that server's clock, and is not replicated: the FSM never consults it, only a proposer does
 * before proposing a lock (Consul's kvsPreApply), so replicas never diverge.
 *
 * Unlike Consul, a replica snapshot carries the delays still running (as milliseconds left when it was
 * taken), and restoring one starts them again from the restoring server's now. Consul's restore
 * starts with none, so a server that restarts from its snapshot, or catches up from the leader's,
 * and then wins an election grants a lock its old holder may still believe it has. Starting the
 * remainder again at restore only lengthens a delay (by the snapshot's age), never shortens it.
 */
import type { TxnError } from "../model/index.ts";
import type { Clock } from "../platform/index.ts";
import type { StateCommand, StateResult } from "./commands.ts";

const SWEEP_AT = 1024;

/** Lock-delay expiry per key, in this server's monotonic time; expired entries are dropped lazily. */
export class LockDelays {
  private readonly until = new Map<string, number>();
  constructor(private readonly clock: Clock) {}

  /** Puts `key` under delay for `ms` from now (replacing an earlier delay, as Consul does). */
  set(key: string, ms: number): void {
    const now = this.clock.monotonic();
    if (this.until.size >= SWEEP_AT) for (const [k, t] of this.until) if (t <= now) this.until.delete(k);
    this.until.set(key, now + ms);
  }

  /** Milliseconds left of `key`'s delay; 0 when none. */
  remainingMs(key: string): number {
    const t = this.until.get(key);
    if (t === undefined) return 0;
    const left = t - this.clock.monotonic();
    if (left > 0) return left;
    this.until.delete(key);
    return 0;
  }

  /** The delays still running, as [key, ms left], sorted by key (for a replica snapshot). */
  running(): [string, number][] {
    const now = this.clock.monotonic();
    const out: [string, number][] = [];
    for (const [k, t] of this.until) if (t > now) out.push([k, Math.ceil(t - now)]);
    return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  /** Drops every delay; returns how many were still running. */
  clear(): number {
    const now = this.clock.monotonic();
    let running = 0;
    for (const t of this.until.values()) if (t > now) running++;
    this.until.clear();
    return running;
  }
}

/**
 * Whether `cmd` acquires a lock (a KV lock or a txn with a lock op): such a command must be checked
 * against lock-delays on the leader (Consul's KVS.Apply forwards before kvsPreApply), whose applied
 * state is the newest; a lagging follower may not have applied the session invalidation that started
 * a delay yet.
 */
export function acquiresLock(cmd: StateCommand): boolean {
  if (cmd.type === "kv") return cmd.op === "lock";
  return cmd.type === "txn" && cmd.ops.some((op) => op.KV?.Verb === "lock");
}

/** What lockDelayRejection needs of a store. */
export interface LockDelaySource {
  lockDelayRemainingMs(key: string): number;
}

/**
 * The answer to give without proposing when `cmd` locks a key still under lock-delay on this server
 * (Consul's kvsPreApply): `{type: "kv", ok: false}` for a KV lock, a txn failure naming each delayed
 * lock op ("failed to lock key \"k\" due to lock delay"); undefined when the command may be proposed.
 * Only the proposer consults lock-delays, so every replica applies the same log.
 */
export function lockDelayRejection(store: LockDelaySource, cmd: StateCommand): StateResult | undefined {
  if (cmd.type === "kv") {
    return cmd.op === "lock" && store.lockDelayRemainingMs(cmd.entry.Key) > 0 ? { type: "kv", ok: false } : undefined;
  }
  if (cmd.type !== "txn") return undefined;
  const Errors: TxnError[] = [];
  cmd.ops.forEach((op, OpIndex) => {
    if (op.KV?.Verb === "lock" && store.lockDelayRemainingMs(op.KV.Key) > 0) {
      Errors.push({ OpIndex, What: `failed to lock key ${JSON.stringify(op.KV.Key)} due to lock delay` });
    }
  });
  return Errors.length ? { type: "txn", Results: null, Errors } : undefined;
}
