import { describe, expect, test } from "bun:test";
import { memoryLogger } from "../platform/index.ts";
import { decodeWire, encodeWire, type QueryOptions, type StateCaller } from "../rpc/index.ts";
import { flushMacrotask, simClock } from "../../test/harness/sim_clock.ts";
import type { ConnectCa, PrimaryRoots } from "./connect_ca.ts";
import { secondaryCaRoutine } from "./leader_ca_secondary.ts";

const ROOTS: PrimaryRoots = { roots: [], trustDomain: "abc.consul", activeRootId: "r1" };

/** A StateCaller whose reads the test answers one by one; signIntermediate answers at once. */
function fakeCaller() {
  const reads: { options: QueryOptions; query: unknown; answer: (r: { roots: PrimaryRoots; index: number } | Error) => void }[] = [];
  const signed: [string, string | undefined][] = [];
  const caller = {
    query: (q: Uint8Array, options: QueryOptions = {}) =>
      new Promise((resolve, reject) => {
        reads.push({
          options, query: decodeWire(q),
          answer: (r) => (r instanceof Error ? reject(r) : resolve({ result: encodeWire(r.roots), index: r.index, knownLeader: true, lastContactMs: 0 })),
        });
        options.signal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })));
      }),
    signIntermediate: async (csr: string, dc?: string) => (signed.push([csr, dc]), "CERT"),
  } as unknown as StateCaller;
  return { caller, reads, signed };
}

function setup() {
  const clock = simClock();
  const logger = memoryLogger("info");
  const { caller, reads, signed } = fakeCaller();
  const adopted: PrimaryRoots[] = [];
  const ca = {
    adoptPrimaryRoots: async (p: PrimaryRoots, sign: (csr: string) => Promise<string>) => {
      adopted.push(p);
      await sign("CSR");
      return true;
    },
  } as unknown as ConnectCa;
  const routine = secondaryCaRoutine({ ca, primaryDc: "dc1", state: () => caller, clock, logger });
  const settle = async () => {
    for (let i = 0; i < 5; i++) await flushMacrotask();
  };
  return { clock, logger, reads, signed, adopted, routine, settle };
}

describe("secondary CA leader routine", () => {
  test("watches the primary's roots with blocking reads and adopts each answer, signing through the primary", async () => {
    const { reads, signed, adopted, routine, settle } = setup();
    routine.start();
    await settle();
    expect(reads).toHaveLength(1);
    expect(reads[0]!.query).toEqual({ type: "ca-roots" });
    expect(reads[0]!.options).toMatchObject({ datacenter: "dc1", minIndex: 0, maxWaitMs: 300_000 });
    reads[0]!.answer({ roots: ROOTS, index: 42 });
    await settle();
    expect(adopted).toEqual([ROOTS]);
    expect(signed).toEqual([["CSR", "dc1"]]);
    // The next read blocks from the answer's index.
    expect(reads[1]!.options.minIndex).toBe(42);
    routine.stop();
    await settle();
    expect(reads[1]!.options.signal?.aborted).toBe(true);
  });

  test("a failed read backs off (2 s, then 4 s) and starts the watch over; stop ends the wait", async () => {
    const { clock, logger, reads, adopted, routine, settle } = setup();
    routine.start();
    await settle();
    reads[0]!.answer(new Error("no path to datacenter dc1: no healthy mesh gateway"));
    await settle();
    expect(logger.lines.some((l) => l.includes("following the primary's CA failed") && l.includes("no healthy mesh gateway"))).toBe(true);
    clock.advance(1_999);
    await settle();
    expect(reads).toHaveLength(1);
    clock.advance(1);
    await settle();
    expect(reads).toHaveLength(2);
    reads[1]!.answer(new Error("still down"));
    await settle();
    clock.advance(3_999);
    await settle();
    expect(reads).toHaveLength(2);
    clock.advance(1);
    await settle();
    expect(reads).toHaveLength(3);
    expect(reads[2]!.options.minIndex).toBe(0);
    reads[2]!.answer({ roots: ROOTS, index: 7 });
    await settle();
    expect(adopted).toHaveLength(1);
    routine.stop();
    await settle();
    expect(clock.pending()).toBe(0);
  });
});
