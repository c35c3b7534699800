/**
 * Proposal envelopes and the waiters for their outcome.
 *
 * Every command a node proposes is wrapped as `[16-byte proposal id][command]`. The id is 8 random
 * bytes drawn once per node incarnation plus an 8-byte counter, so the proposer recognises its own
 * entries when they are applied (on any node they apply the same way; only the proposer has a waiter).
 */
import type { Rng } from "../platform/index.ts";

export const PROPOSAL_ID_BYTES = 16;

export class ProposalIds {
  private readonly prefix: Uint8Array;
  private counter = 0;

  constructor(rng: Rng) {
    this.prefix = rng.bytes(8);
  }

  /** Wraps `command` in a fresh envelope; returns the envelope and the id's key. */
  wrap(command: Uint8Array): { data: Uint8Array; key: string } {
    const data = new Uint8Array(PROPOSAL_ID_BYTES + command.length);
    data.set(this.prefix, 0);
    const view = new DataView(data.buffer);
    const n = ++this.counter;
    view.setUint32(8, Math.floor(n / 0x1_0000_0000));
    view.setUint32(12, n >>> 0);
    data.set(command, PROPOSAL_ID_BYTES);
    return { data, key: idKey(data) };
  }
}

/** The id key of an envelope, or undefined when `data` is too short to be one (a leader's no-op is empty). */
export function envelopeKey(data: Uint8Array): string | undefined {
  return data.length >= PROPOSAL_ID_BYTES ? idKey(data) : undefined;
}

/** The command inside an envelope (a view, not a copy). */
export function envelopeCommand(data: Uint8Array): Uint8Array {
  return data.subarray(PROPOSAL_ID_BYTES);
}

function idKey(data: Uint8Array): string {
  let s = "";
  for (let i = 0; i < PROPOSAL_ID_BYTES; i++) s += data[i]!.toString(16).padStart(2, "0");
  return s;
}

/** A promise waiting for something, with a deadline; settled at most once. */
export interface Waiter<T> {
  resolve(value: T): void;
  reject(err: Error): void;
}

/**
 * Waiters keyed by string, each with a timeout from the injected timer function. Settling removes the
 * waiter and cancels its timer.
 */
export class WaiterSet<T> {
  private readonly waiters = new Map<string, { w: Waiter<T>; cancel: () => void }>();

  constructor(private readonly setTimer: (ms: number, fn: () => void) => () => void) {}

  get size(): number {
    return this.waiters.size;
  }

  /** Registers a waiter that fails with `onTimeout()` after `timeoutMs`. */
  add(key: string, timeoutMs: number, onTimeout: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const cancel = this.setTimer(timeoutMs, () => {
        if (this.waiters.delete(key)) reject(onTimeout());
      });
      this.waiters.set(key, { w: { resolve, reject }, cancel });
    });
  }

  has(key: string): boolean {
    return this.waiters.has(key);
  }

  resolve(key: string, value: T): boolean {
    const e = this.waiters.get(key);
    if (!e) return false;
    this.waiters.delete(key);
    e.cancel();
    e.w.resolve(value);
    return true;
  }

  reject(key: string, err: Error): void {
    const e = this.waiters.get(key);
    if (!e) return;
    this.waiters.delete(key);
    e.cancel();
    e.w.reject(err);
  }

  rejectAll(err: () => Error): void {
    for (const key of [...this.waiters.keys()]) this.reject(key, err());
  }

  keys(): string[] {
    return [...this.waiters.keys()];
  }
}
