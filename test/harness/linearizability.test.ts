import { describe, expect, test } from "bun:test";
import { seededRng } from "../../src/platform/rng.ts";
import { checkLinearizable, kvModel, type KvInput, type KvOutput, type Operation } from "./linearizability.ts";

type Op = Operation<KvInput, KvOutput>;
const put = (c: number, key: string, value: string, t0: number, t1: number): Op => ({ clientId: c, input: { op: "put", key, value }, output: {}, callTime: t0, returnTime: t1 });
const get = (c: number, key: string, value: string | undefined, t0: number, t1: number): Op => ({ clientId: c, input: { op: "get", key }, output: { value }, callTime: t0, returnTime: t1 });
const cas = (c: number, key: string, expected: string | undefined, value: string, ok: boolean, t0: number, t1: number): Op => ({ clientId: c, input: { op: "cas", key, expected, value }, output: { ok }, callTime: t0, returnTime: t1 });

describe("linearizability checker", () => {
  test("sequential history is linearizable", () => {
    expect(checkLinearizable(kvModel, [put(0, "x", "1", 0, 1), get(1, "x", "1", 2, 3), cas(0, "x", "1", "2", true, 4, 5), get(1, "x", "2", 6, 7)]).kind).toBe("ok");
  });

  test("a stale read after a completed write is not linearizable", () => {
    const r = checkLinearizable(kvModel, [put(0, "x", "1", 0, 1), put(0, "x", "2", 2, 3), get(1, "x", "1", 4, 5)]);
    expect(r.kind).toBe("illegal");
  });

  test("concurrent write lets a read see either value, but not both orders at once", () => {
    expect(checkLinearizable(kvModel, [put(0, "x", "1", 0, 1), put(1, "x", "2", 2, 10), get(2, "x", "1", 3, 4), get(2, "x", "2", 5, 6)]).kind).toBe("ok");
    // Once a read saw "2", a later read cannot see "1" again.
    expect(checkLinearizable(kvModel, [put(0, "x", "1", 0, 1), put(1, "x", "2", 2, 10), get(2, "x", "2", 3, 4), get(2, "x", "1", 5, 6)]).kind).toBe("illegal");
  });

  test("an unknown outcome may or may not have happened", () => {
    const lost = { ...put(0, "x", "9", 0, 0), returnTime: Infinity };
    expect(checkLinearizable(kvModel, [lost, get(1, "x", undefined, 5, 6)]).kind).toBe("ok");
    expect(checkLinearizable(kvModel, [lost, get(1, "x", "9", 5, 6)]).kind).toBe("ok");
    expect(checkLinearizable(kvModel, [lost, get(1, "x", "9", 5, 6), get(1, "x", undefined, 7, 8)]).kind).toBe("illegal");
  });

  test("an unknown outcome within a window takes effect before the window ends, or never", () => {
    // put 2's answer never came; it may take effect until t=5 (outcomeUnknown), or, unbounded, any time.
    const bounded = { ...put(1, "x", "2", 2, 5), outcomeUnknown: true };
    const unbounded = { ...bounded, returnTime: Infinity };
    const reads = [put(0, "x", "1", 0, 1), get(2, "x", "1", 6, 7), get(2, "x", "2", 8, 9)];
    expect(checkLinearizable(kvModel, [unbounded, ...reads]).kind).toBe("ok");
    expect(checkLinearizable(kvModel, [bounded, ...reads]).kind).toBe("illegal");
    // Within the window either outcome explains the reads; a cas's answer is not held against it.
    expect(checkLinearizable(kvModel, [bounded, put(0, "x", "1", 0, 1), get(2, "x", "2", 6, 7)]).kind).toBe("ok");
    // ...or never: nothing overwrote it, and reads after its window still see the old value.
    expect(checkLinearizable(kvModel, [bounded, put(0, "x", "1", 0, 1), get(2, "x", "1", 6, 7), get(2, "x", "1", 8, 9)]).kind).toBe("ok");
    const unknownCas = { ...cas(1, "x", "1", "3", false, 2, 5), outcomeUnknown: true };
    expect(checkLinearizable(kvModel, [put(0, "x", "1", 0, 1), unknownCas, get(2, "x", "3", 6, 7)]).kind).toBe("ok");
  });

  test("cas must agree with the state", () => {
    expect(checkLinearizable(kvModel, [put(0, "k", "a", 0, 1), cas(1, "k", "b", "c", true, 2, 3)]).kind).toBe("illegal");
    expect(checkLinearizable(kvModel, [put(0, "k", "a", 0, 1), cas(1, "k", "b", "c", false, 2, 3), get(0, "k", "a", 4, 5)]).kind).toBe("ok");
  });

  test("keys are independent partitions", () => {
    const r = checkLinearizable(kvModel, [put(0, "a", "1", 0, 1), put(0, "b", "1", 2, 3), get(1, "a", "1", 4, 5), get(1, "b", undefined, 6, 7)]);
    expect(r).toMatchObject({ kind: "illegal", partition: 1 });
  });

  test("random sequentially-consistent register histories replayed in real time are linearizable", () => {
    // Each op executes atomically at a random instant inside its [call, return] window: always linearizable.
    for (let seed = 1; seed <= 30; seed++) {
      const rng = seededRng(seed);
      const events: { at: number; op: (v: string | undefined) => { op: Op; value: string | undefined } }[] = [];
      const ops: Op[] = [];
      for (let i = 0; i < 40; i++) {
        const t0 = rng.int(200), t1 = t0 + 1 + rng.int(30), at = t0 + rng.int(t1 - t0 + 1), c = rng.int(5);
        const kind = rng.int(3), v = String(rng.int(4));
        events.push({
          at,
          op: (cur) => {
            if (kind === 0) return { op: get(c, "r", cur, t0, t1), value: cur };
            if (kind === 1) return { op: put(c, "r", v, t0, t1), value: v };
            const swaps = cur === v;
            return { op: cas(c, "r", v, String(rng.int(4)), swaps, t0, t1), value: swaps ? undefined : cur };
          },
        });
      }
      events.sort((a, b) => a.at - b.at);
      let cur: string | undefined;
      for (const e of events) {
        const { op } = e.op(cur);
        if (op.input.op === "put") cur = op.input.value;
        if (op.input.op === "cas" && op.output.ok) cur = op.input.value;
        ops.push(op);
      }
      const r = checkLinearizable(kvModel, ops);
      if (r.kind !== "ok") throw new Error(`seed ${seed}: ${JSON.stringify(r)}`);
    }
  });
});
