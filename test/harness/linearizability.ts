/**
 * A linearizability checker (Wing and Gong's search with Lowe's memoisation, as in the porcupine
 * checker), with P-compositionality: a history is split into independent partitions (per key for a KV
 * store) and each is checked alone, which keeps the search small.
 *
 * Operations carry integer call/return times from the simulated clock. An operation whose outcome is
 * unknown (the client gave up, the server crashed) has `returnTime: Infinity`: the search may place it
 * anywhere after its call, including after everything else, which is the same as "maybe never happened".
 */

export interface Operation<I, O> {
  readonly clientId: number;
  readonly input: I;
  readonly callTime: number;
  /** The observed result; ignored by models when the outcome is unknown (`returnTime` Infinity, or `outcomeUnknown`). */
  readonly output: O;
  readonly returnTime: number;
  /**
   * The outcome is unknown but the operation took effect, if at all, before `returnTime` (a bounded
   * window instead of Infinity's "any time after the call").
   */
  readonly outcomeUnknown?: boolean;
}

export interface Model<S, I, O> {
  init(): S;
  /** Whether `input` applied to `state` may produce `output`, and the state after it. Must not mutate `state`. */
  step(state: S, input: I, output: O, outcomeKnown: boolean): { ok: boolean; next: S };
  /** A string that is equal for equal states (used for memoisation). */
  key(state: S): string;
  /** Splits a history into independent sub-histories; default: one partition. */
  partition?(history: readonly Operation<I, O>[]): Operation<I, O>[][];
  describe?(input: I, output: O): string;
}

export type CheckResult =
  | { readonly kind: "ok" }
  | { readonly kind: "illegal"; readonly partition: number; readonly longestPrefix: readonly string[] }
  | { readonly kind: "unknown"; readonly reason: string };

interface Entry {
  isCall: boolean;
  time: number;
  id: number;
  match: Entry | undefined;
  prev: Entry | undefined;
  next: Entry | undefined;
}

/** Checks the whole history; `maxSteps` bounds the search per partition (then the result is "unknown"). */
export function checkLinearizable<S, I, O>(model: Model<S, I, O>, history: readonly Operation<I, O>[], maxSteps = 5_000_000): CheckResult {
  const parts = model.partition ? model.partition(history) : [history.slice()];
  for (let p = 0; p < parts.length; p++) {
    const r = checkPartition(model, parts[p]!, maxSteps);
    if (r === "unknown") return { kind: "unknown", reason: `partition ${p} exceeded ${maxSteps} steps` };
    if (r !== true) return { kind: "illegal", partition: p, longestPrefix: r };
  }
  return { kind: "ok" };
}

function buildList<I, O>(ops: readonly Operation<I, O>[]): Entry {
  const entries: Entry[] = [];
  ops.forEach((op, id) => {
    if (!(op.returnTime >= op.callTime)) throw new Error(`operation ${id} returns before it is called`);
    const call: Entry = { isCall: true, time: op.callTime, id, match: undefined, prev: undefined, next: undefined };
    const ret: Entry = { isCall: false, time: op.returnTime, id, match: undefined, prev: undefined, next: undefined };
    call.match = ret;
    entries.push(call, ret);
  });
  // Calls sort before returns at equal times, so touching operations count as concurrent (the permissive reading).
  entries.sort((a, b) => a.time - b.time || (a.isCall === b.isCall ? a.id - b.id : a.isCall ? -1 : 1));
  const head: Entry = { isCall: false, time: -Infinity, id: -1, match: undefined, prev: undefined, next: undefined };
  let last = head;
  for (const e of entries) {
    last.next = e;
    e.prev = last;
    last = e;
  }
  return head;
}

function lift(e: Entry): void {
  e.prev!.next = e.next;
  if (e.next) e.next.prev = e.prev;
  const m = e.match!;
  m.prev!.next = m.next;
  if (m.next) m.next.prev = m.prev;
}

function unlift(e: Entry): void {
  const m = e.match!;
  m.prev!.next = m;
  if (m.next) m.next.prev = m;
  e.prev!.next = e;
  if (e.next) e.next.prev = e;
}

/** true when linearizable, "unknown" when out of budget, else the longest linearized prefix found (for the report). */
function checkPartition<S, I, O>(model: Model<S, I, O>, ops: readonly Operation<I, O>[], maxSteps: number): true | "unknown" | string[] {
  const head = buildList(ops);
  const cache = new Set<string>();
  const calls: { entry: Entry; state: S; variant: number }[] = [];
  let state = model.init();
  let entry = head.next;
  let best: number[] = [];
  let steps = 0;
  // The memo key of "these operations linearized, this state": a 64-bit Zobrist hash of the set
  // (two 32-bit words, updated in O(1) per step) instead of the set itself, which made every step
  // O(n) in a long history. Two different sets colliding (about n_states^2 / 2^65) can only make the
  // search skip a configuration it never saw, so a collision could turn "ok" into "illegal", never the
  // reverse: a linearizable verdict is always exact.
  const zobrist = zobristTable(ops.length);
  let h1 = 0;
  let h2 = 0;
  const toggle = (id: number) => {
    h1 ^= zobrist[2 * id]!;
    h2 ^= zobrist[2 * id + 1]!;
  };
  // An operation whose outcome is unknown may also have had no effect at all: after its effect
  // (variant 0) fails to extend, it is tried once more as a no-op (variant 1). Without this, an unknown
  // write with a bounded window had to take effect inside it, and one that never happened could only
  // be explained by a later write overwriting it (a false "illegal" otherwise).
  let variant = 0;
  while (head.next !== undefined) {
    if (++steps > maxSteps) return "unknown";
    if (entry!.isCall) {
      const op = ops[entry!.id]!;
      const known = op.returnTime !== Infinity && !op.outcomeUnknown;
      const { ok, next } = variant === 0 ? model.step(state, op.input, op.output, known) : { ok: true, next: state };
      if (ok) {
        toggle(entry!.id);
        const key = `${h1},${h2}|${model.key(next)}`;
        if (!cache.has(key)) {
          cache.add(key);
          calls.push({ entry: entry!, state, variant });
          if (calls.length > best.length) best = calls.map((c) => c.entry.id);
          state = next;
          lift(entry!);
          entry = head.next;
          variant = 0;
          continue;
        }
        toggle(entry!.id);
      }
      if (variant === 0 && !known) {
        variant = 1;
        continue;
      }
      entry = entry!.next;
      variant = 0;
    } else {
      const top = calls.pop();
      if (!top) {
        const describe = model.describe ?? ((i: I, o: O) => `${JSON.stringify(i)} -> ${JSON.stringify(o)}`);
        return best.map((id) => `client ${ops[id]!.clientId}: ${describe(ops[id]!.input, ops[id]!.output)}`);
      }
      state = top.state;
      toggle(top.entry.id);
      unlift(top.entry);
      const topOp = ops[top.entry.id]!;
      const topKnown = topOp.returnTime !== Infinity && !topOp.outcomeUnknown;
      if (top.variant === 0 && !topKnown) {
        entry = top.entry;
        variant = 1;
      } else {
        entry = top.entry.next;
        variant = 0;
      }
    }
  }
  return true;
}

/** Two pseudo-random 32-bit words per operation, the same for every run (xorshift32 from a fixed seed). */
function zobristTable(n: number): Uint32Array {
  const t = new Uint32Array(2 * n);
  let x = 0x9e3779b9;
  for (let i = 0; i < t.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    t[i] = x >>> 0;
  }
  return t;
}

// ---- The KV model used by the simulation: get, put and compare-and-set on string keys. ----

export type KvInput =
  | { readonly op: "get"; readonly key: string }
  | { readonly op: "put"; readonly key: string; readonly value: string }
  | { readonly op: "cas"; readonly key: string; readonly expected: string | undefined; readonly value: string };

/** get returns the value (undefined when absent); put returns nothing; cas returns whether it swapped. */
export type KvOutput = { readonly value?: string; readonly ok?: boolean };

/** A register per key; partitions by key (P-compositionality). */
export const kvModel: Model<string | undefined, KvInput, KvOutput> = {
  init: () => undefined,
  step(state, input, output, known) {
    switch (input.op) {
      case "get":
        return { ok: !known || output.value === state, next: state };
      case "put":
        return { ok: true, next: input.value };
      case "cas": {
        const swaps = state === input.expected;
        if (!known) return { ok: true, next: swaps ? input.value : state };
        return { ok: output.ok === swaps, next: swaps ? input.value : state };
      }
    }
  },
  key: (s) => (s === undefined ? "\u0000" : "=" + s),
  partition(history) {
    const byKey = new Map<string, Operation<KvInput, KvOutput>[]>();
    for (const op of history) {
      const list = byKey.get(op.input.key) ?? [];
      list.push(op);
      byKey.set(op.input.key, list);
    }
    return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
  },
  describe(input, output) {
    switch (input.op) {
      case "get":
        return `get(${input.key}) -> ${output.value ?? "<none>"}`;
      case "put":
        return `put(${input.key}, ${input.value})`;
      case "cas":
        return `cas(${input.key}, ${input.expected ?? "<none>"} -> ${input.value}) -> ${output.ok}`;
    }
  },
};
