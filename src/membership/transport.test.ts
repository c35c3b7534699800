import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { FrameReader, FrameTooLargeError, StreamError, encodeFrame, readFrame, withStreamDeadline, type GossipStream, type StreamSink } from "./transport.ts";

const bytes = (...b: number[]) => new Uint8Array(b);

describe("stream framing", () => {
  test("encodeFrame writes a big-endian u32 length", () => {
    expect([...encodeFrame(bytes(7, 8, 9))]).toEqual([0, 0, 0, 3, 7, 8, 9]);
    expect([...encodeFrame(bytes())]).toEqual([0, 0, 0, 0]);
  });

  test("frames survive any chunking: byte at a time, several per chunk, random splits", () => {
    const payloads = [bytes(1), bytes(), seededRng(1).bytes(3000), bytes(2, 3)];
    const wire = new Uint8Array(payloads.reduce((n, p) => n + 4 + p.length, 0));
    let off = 0;
    for (const p of payloads) { wire.set(encodeFrame(p), off); off += 4 + p.length; }

    const oneByOne = new FrameReader(1 << 16);
    const got1 = [...wire].flatMap((b) => oneByOne.push(bytes(b)));
    expect(got1).toEqual(payloads);

    expect(new FrameReader(1 << 16).push(wire)).toEqual(payloads);

    for (const seed of [1, 2, 3, 4, 5]) {
      const rng = seededRng(seed);
      const r = new FrameReader(1 << 16);
      const got: Uint8Array[] = [];
      for (let i = 0; i < wire.length;) {
        const n = 1 + rng.int(Math.min(700, wire.length - i));
        got.push(...r.push(wire.subarray(i, i + n)));
        i += n;
      }
      expect(got).toEqual(payloads);
      expect(r.buffered).toBe(0);
    }
  });

  test("an oversize header throws before its body arrives", () => {
    const r = new FrameReader(10);
    expect(r.push(bytes(0, 0))).toEqual([]);
    expect(() => r.push(bytes(0, 11))).toThrow(FrameTooLargeError);
    expect(new FrameReader(10).push(encodeFrame(new Uint8Array(10)))).toHaveLength(1);
  });
});

/** A stream fed by hand. */
function fakeStream(): GossipStream & { sink?: StreamSink; aborted: boolean } {
  const s = {
    remote: "peer",
    aborted: false,
    sink: undefined as StreamSink | undefined,
    read(sink: StreamSink) { s.sink = sink; },
    write: () => Promise.resolve(),
    close() {},
    abort() { s.aborted = true; s.sink?.end(new Error("aborted")); },
  };
  return s;
}

describe("readFrame", () => {
  test("resolves with the first frame and ignores the rest", async () => {
    const s = fakeStream();
    const p = readFrame(s, 100);
    s.sink!.data(bytes(0, 0, 0, 2, 5));
    s.sink!.data(bytes(6, 0, 0, 0, 1, 9));
    expect([...await p]).toEqual([5, 6]);
  });

  test("rejects oversize (and aborts) or a stream that ends early", async () => {
    const big = fakeStream();
    const p1 = readFrame(big, 4);
    big.sink!.data(bytes(0, 0, 0, 5));
    const e1 = await p1.catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(StreamError);
    expect((e1 as StreamError).reason).toBe("oversize");
    expect(big.aborted).toBe(true);

    const short = fakeStream();
    const p2 = readFrame(short, 100);
    short.sink!.data(bytes(0, 0, 0, 5, 1));
    short.sink!.end();
    const e2 = await p2.catch((e: unknown) => e);
    expect((e2 as StreamError).reason).toBe("ended");
    expect((e2 as Error).message).toContain("after 5 bytes");
  });
});

describe("withStreamDeadline", () => {
  test("on expiry rejects with a timeout (not the abort it causes) and aborts tracked streams", async () => {
    const clock = simClock();
    const s = fakeStream();
    const p = withStreamDeadline(clock, 500, async (track) => {
      track(s);
      return await readFrame(s, 100);
    });
    const settled = p.catch((e: unknown) => e);
    clock.advance(499);
    expect(s.aborted).toBe(false);
    clock.advance(1);
    const e = await settled;
    expect((e as StreamError).reason).toBe("timeout");
    expect(s.aborted).toBe(true);
    expect(clock.pending()).toBe(0);
  });

  test("a finished exchange cancels its timer and leaves its streams alone", async () => {
    const clock = simClock();
    const s = fakeStream();
    const v = await withStreamDeadline(clock, 500, async (track) => { track(s); return 7; });
    expect(v).toBe(7);
    expect(s.aborted).toBe(false);
    expect(clock.pending()).toBe(0);
  });
});
