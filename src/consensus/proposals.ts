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
  /** Hex of this incarnation's random prefix; also makes read contexts unique across restarts. */
  readonly incarnation: string;

  constructor(rng: Rng) {
    this.prefix = rng.bytes(8);
    this.incarnation = hex(this.prefix, 0, 8);
  }

  /** Wraps `command` in a fresh envelope; returns the envelope and the id's key. */
  wrap(command: Uint8Array): { data: Uint8Array; key: string } {
    const data = new Uint8Array(PROPOSAL_ID_BYTES + command.length);
    data.set(this.prefix, 0);
    const n = ++this.counter;
    putU32(data, 8, Math.floor(n / 0x1_0000_0000));
    putU32(data, 12, n >>> 0);
    data.set(command, PROPOSAL_ID_BYTES);
    return { data, key: idKey(data) };
  }
}

/**
 * Which proposals have been applied, so that a proposal delivered twice (the transport may duplicate
 * a forwarded MsgProp, and the leader then appends it twice) is applied once. Part of the replicated
 * state: every replica makes the same decisions from the same log, and it travels in snapshots.
 *
 * Per proposer incarnation it keeps the highest counter and the counters within `window` below it;
 * anything older than the window counts as a duplicate (a proposal that late has long timed out).
 * At most `maxProposers` incarnations are kept; the one applied least recently is forgotten first.
 */
export class AppliedProposals {
  private readonly byPrefix = new Map<string, { max: number; recent: Set<number>; lastIndex: number }>();

  constructor(private readonly window = 4096, private readonly maxProposers = 1024) {}

  /** Records the proposal at `index`; returns false if it was applied before (skip it). */
  firstTime(data: Uint8Array, index: number): boolean {
    if (data.length < PROPOSAL_ID_BYTES) return true;
    const prefix = hex(data, 0, 8);
    const counter = getU32(data, 8) * 0x1_0000_0000 + getU32(data, 12);
    let p = this.byPrefix.get(prefix);
    if (!p) {
      if (this.byPrefix.size >= this.maxProposers) this.evictOldest();
      p = { max: 0, recent: new Set(), lastIndex: index };
      this.byPrefix.set(prefix, p);
    }
    if (counter <= p.max - this.window || p.recent.has(counter)) return false;
    p.recent.add(counter);
    p.lastIndex = index;
    if (counter > p.max) {
      // Drop the counters that fell out of the window: only those between the old and the new lower
      // bound, so the usual step of one costs one deletion (a scan per apply cost ~5% of a KV write).
      const from = p.max - this.window + 1;
      const to = counter - this.window;
      if (to - from < this.window) {
        for (let c = from; c <= to; c++) p.recent.delete(c);
      } else {
        for (const c of p.recent) if (c <= to) p.recent.delete(c);
      }
      p.max = counter;
    }
    return true;
  }

  private evictOldest(): void {
    let oldest: string | undefined;
    let at = Infinity;
    for (const [k, v] of this.byPrefix) if (v.lastIndex < at || (v.lastIndex === at && k < oldest!)) [oldest, at] = [k, v.lastIndex];
    if (oldest !== undefined) this.byPrefix.delete(oldest);
  }

  /** Plain data for a snapshot (sorted, so equal states encode equally). */
  encode(): unknown {
    return [...this.byPrefix.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, v.max, [...v.recent].sort((a, b) => a - b), v.lastIndex]);
  }

  /** Replaces the contents with a snapshot's. */
  restore(data: unknown): void {
    this.byPrefix.clear();
    for (const [k, max, recent, lastIndex] of data as [string, number, number[], number][]) {
      this.byPrefix.set(k, { max, recent: new Set(recent), lastIndex });
    }
  }
}

/** Big-endian u32 by hand (cheaper on Bun than a DataView over `.buffer` in the per-entry path). */
function putU32(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 24;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

function getU32(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function hex(data: Uint8Array, from: number, to: number): string {
  let s = "";
  for (let i = from; i < to; i++) s += HEX[data[i]!]!;
  return s;
}

const SNAPSHOT_MAGIC = 0x43574453; // "CWDS"

/**
 * A driver snapshot: the applied-proposals table followed by the state machine's own bytes.
 * `[u32 magic][u32 table length][table JSON][state machine bytes]`.
 */
export function encodeDriverSnapshot(table: unknown, machine: Uint8Array): Uint8Array {
  const head = driverSnapshotHead(table);
  const out = new Uint8Array(head.length + machine.length);
  out.set(head);
  out.set(machine, head.length);
  return out;
}

/** A driver snapshot's bytes before the state machine's: magic, table length and table. */
export function driverSnapshotHead(table: unknown): Uint8Array {
  const t = new TextEncoder().encode(JSON.stringify(table));
  const out = new Uint8Array(8 + t.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, SNAPSHOT_MAGIC);
  view.setUint32(4, t.length);
  out.set(t, 8);
  return out;
}

/** Splits a driver snapshot; throws on bytes that are not one. */
export function decodeDriverSnapshot(data: Uint8Array): { table: unknown; machine: Uint8Array } {
  if (data.length < 8) throw new Error("snapshot too short");
  const view = new DataView(data.buffer, data.byteOffset, data.length);
  if (view.getUint32(0) !== SNAPSHOT_MAGIC) throw new Error("not a Causeway snapshot (bad magic)");
  const len = view.getUint32(4);
  if (8 + len > data.length) throw new Error("snapshot table truncated");
  return { table: JSON.parse(new TextDecoder().decode(data.subarray(8, 8 + len))), machine: data.subarray(8 + len) };
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
  return hex(data, 0, PROPOSAL_ID_BYTES);
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
