/**
 * A StateAccess for HTTP route tests: records every read (with its options) and command, and answers
 * from canned values, so a test checks exactly what a route asks of the replicated state.
 */
import type { QueryMeta, ReadOptions, ReadQuery, StateAccess } from "../../src/http/index.ts";
import type { StateCommand, StateResult } from "../../src/state/index.ts";

export interface FakeState extends StateAccess {
  readonly reads: { query: ReadQuery; options: ReadOptions }[];
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
    writes: [],
    values: {},
    meta: { index: 42, knownLeader: true, lastContactMs: 0 },
    writeResult: { type: "ok" },
    async read(query, options) {
      fake.reads.push({ query, options });
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
