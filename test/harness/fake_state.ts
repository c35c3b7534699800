/**
 * A StateAccess for HTTP route tests: records every read (with its options) and command, and answers
 * from canned values, so a test checks exactly what a route asks of the replicated state.
 */
import type { QueryMeta, ReadOptions, ReadQuery, StateAccess } from "../../src/http/index.ts";
import type { StateCommand, StateResult } from "../../src/state/index.ts";

export interface FakeState extends StateAccess {
  /** Reads with their options (the abort signal apart, in `signals`). */
  readonly reads: { query: ReadQuery; options: ReadOptions }[];
  readonly signals: (AbortSignal | undefined)[];
  /** When set, a read waits for this before answering (to hold it open). */
  hold?: Promise<void>;
  readonly writes: { command: StateCommand; datacenter: string | undefined }[];
  /** The value the next reads answer with, by read type. */
  readonly values: Partial<Record<ReadQuery["type"], unknown>>;
  meta: QueryMeta;
  /** The result every write answers with. */
  writeResult: StateResult;
  /** When set, reads and writes reject with this message. */
  failWith?: string;
}

export function fakeState(): FakeState {
  const fake: FakeState = {
    reads: [],
    signals: [],
    writes: [],
    values: {},
    meta: { index: 42, knownLeader: true, lastContactMs: 0 },
    writeResult: { type: "ok" },
    async read(query, { signal, ...options }) {
      fake.reads.push({ query, options });
      fake.signals.push(signal);
      if (fake.hold) await fake.hold;
      if (fake.failWith) throw new Error(fake.failWith);
      return { value: fake.values[query.type] as never, meta: fake.meta };
    },
    async write(command, datacenter) {
      fake.writes.push({ command, datacenter });
      if (fake.failWith) throw new Error(fake.failWith);
      return fake.writeResult;
    },
  };
  return fake;
}
