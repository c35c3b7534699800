import { describe, expect, test } from "bun:test";
import { memoryLogger } from "../platform/index.ts";
import { createEventChannel } from "./event_channel.ts";

type E = { readonly type: string; readonly n: number };

describe("event channel", () => {
  test("holds events for the first subscriber, keeps order under re-entrant publishes, survives a throwing subscriber", () => {
    const log = memoryLogger();
    const ch = createEventChannel<E>(log, "test", 2);
    ch.publish([{ type: "a", n: 1 }, { type: "a", n: 2 }, { type: "a", n: 3 }]); // only 2 are held
    const seen: number[] = [];
    ch.subscribe((e) => {
      seen.push(e.n);
      if (e.n === 1) ch.publish([{ type: "b", n: 10 }]); // re-entrant: queued after 2
    });
    expect(seen).toEqual([1, 2, 10]);
    ch.subscribe(() => {
      throw new Error("boom");
    });
    ch.publish([{ type: "c", n: 20 }]);
    expect(seen).toEqual([1, 2, 10, 20]);
    expect(log.lines.filter((l) => l.includes("test subscriber threw")).length).toBe(1);
  });

  test("unsubscribing stops delivery", () => {
    const ch = createEventChannel<E>(memoryLogger(), "test");
    const seen: number[] = [];
    const cancel = ch.subscribe((e) => seen.push(e.n));
    ch.publish([{ type: "a", n: 1 }]);
    cancel();
    ch.publish([{ type: "a", n: 2 }]);
    expect(seen).toEqual([1]);
  });
});
