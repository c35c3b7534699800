import { describe, expect, test } from "bun:test";
import { RequestQueue } from "./xds_client_queue.ts";

describe("RequestQueue", () => {
  test("yields pushed items in order, waits for more, and ends after end()", async () => {
    const q = new RequestQueue<number>();
    q.push(1);
    const got: number[] = [];
    const drained = (async () => {
      for await (const x of q) got.push(x);
    })();
    q.push(2);
    await Promise.resolve();
    q.push(3);
    q.end();
    q.push(4); // ignored after end
    await drained;
    expect(got).toEqual([1, 2, 3]);
  });

  test("a consumer that stops early (return) ends the queue", async () => {
    const q = new RequestQueue<string>();
    q.push("a");
    q.push("b");
    for await (const x of q) {
      expect(x).toBe("a");
      break;
    }
    q.push("c");
    const rest: string[] = [];
    for await (const x of q) rest.push(x);
    expect(rest).toEqual([]);
  });
});
