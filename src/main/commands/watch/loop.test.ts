import { describe, expect, test } from "bun:test";
import { runWatchLoop, watchErrorLine } from "./loop.ts";
import type { WatchAnswer } from "./query.ts";

/** A scripted watch: each step answers the query (or fails it); when the script ends the loop is stopped. */
function scripted(steps: readonly (WatchAnswer | Error)[]) {
  const stop = new AbortController();
  const asked: (bigint | null)[] = [];
  const fired: [bigint, unknown][] = [];
  const slept: number[] = [];
  const errors: string[] = [];
  let i = 0;
  const done = runWatchLoop({
    query: async (lastIndex) => {
      asked.push(lastIndex);
      const step = steps[i++];
      if (step === undefined) {
        stop.abort();
        throw new Error("stopped");
      }
      if (step instanceof Error) throw step;
      return step;
    },
    handle: async (index, result) => {
      fired.push([index, result]);
      return true;
    },
    sleep: async (ms) => void slept.push(ms),
    onError: (err, retryMs) => errors.push(`${err.message} ${retryMs}`),
    signal: stop.signal,
  });
  return { done, asked, fired, slept, errors };
}

describe("the watch loop (Plan.RunWithClientAndHclog)", () => {
  test("blocks on each new index, fires on the first answer and on changed results only", async () => {
    const w = scripted([{ index: 3n, result: "a" }, { index: 3n, result: "a" }, { index: 5n, result: "a" }, { index: 6n, result: "b" }]);
    await w.done;
    expect(w.asked).toEqual([null, 3n, 3n, 5n, 6n]);
    expect(w.fired).toEqual([[3n, "a"], [6n, "b"]]);
    expect(w.errors).toEqual([]);
  });

  test("an index that goes backwards is asked again from 0, and the handler gets the answer's own index", async () => {
    const w = scripted([{ index: 10n, result: "a" }, { index: 4n, result: "b" }, { index: 4n, result: "b" }]);
    await w.done;
    expect(w.asked).toEqual([null, 10n, 0n, 4n]);
    expect(w.fired).toEqual([[10n, "a"], [4n, "b"]]);
  });

  test("errors back off 5s, 20s, ... and forget the index; the answer after them fires again though unchanged", async () => {
    const w = scripted([{ index: 7n, result: "a" }, new Error("boom"), new Error("boom"), { index: 7n, result: "a" }]);
    await w.done;
    expect(w.errors).toEqual(["boom 5000", "boom 20000"]);
    expect(w.slept).toEqual([5000, 20000]);
    expect(w.asked).toEqual([null, 7n, null, null, 7n]);
    expect(w.fired).toEqual([[7n, "a"], [7n, "a"]]);
  });

  test("a handler that returns false stops the loop; an abort during a query stops it without logging", async () => {
    const stop = new AbortController();
    let queries = 0;
    await runWatchLoop({
      query: async () => ({ index: BigInt(++queries), result: queries }),
      handle: async () => false,
      sleep: async () => {},
      onError: () => expect.unreachable(),
      signal: stop.signal,
    });
    expect(queries).toBe(1);
    const errors: string[] = [];
    await runWatchLoop({
      query: async () => {
        stop.abort();
        throw new Error("aborted");
      },
      handle: async () => true,
      sleep: async () => {},
      onError: (e) => errors.push(e.message),
      signal: stop.signal,
    });
    expect(errors).toEqual([]);
  });

  test("the error line is hclog's, values with spaces quoted", () => {
    expect(watchErrorLine(new Date(0), "key", new Error('Get "http://x/v1/kv/a": connection refused'), 80_000)).toBe(
      '1970-01-01T00:00:00.000Z [ERROR] watch.watch: Watch errored: type=key error="Get \\"http://x/v1/kv/a\\": connection refused" retry=1m20s\n',
    );
  });
});
