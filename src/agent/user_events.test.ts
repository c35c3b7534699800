import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import { eventIndex } from "../model/index.ts";
import { createEventsApi, decodeUserEvent, encodeUserEvent, eventMatches, EVENT_BUFFER_SIZE, EventBuffer, USER_EVENT_PREFIX } from "./user_events.ts";
import type { UserEventView } from "../model/index.ts";

const ev = (ID: string, over: Partial<UserEventView> = {}): UserEventView => ({
  ID, Name: "deploy", Payload: null, NodeFilter: "", ServiceFilter: "", TagFilter: "", Version: 1, LTime: 0, ...over,
});
const local = { nodeName: "web-1", services: () => [{ service: "web", tags: ["v2", "canary"] }] };

describe("user events", () => {
  test("encode and decode keep the event; the receiver stamps its Lamport time; garbage is undefined", () => {
    const e = ev("0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", { Payload: new TextEncoder().encode("hi"), NodeFilter: "web" });
    expect(decodeUserEvent(encodeUserEvent(e), 7)).toEqual({ ...e, LTime: 7 });
    expect(decodeUserEvent(new TextEncoder().encode("nope"), 1)).toBeUndefined();
  });

  test("filters: node, service, and tag within the service", () => {
    expect(eventMatches(ev("a"), local)).toBe(true);
    expect(eventMatches(ev("a", { NodeFilter: "^web" }), local)).toBe(true);
    expect(eventMatches(ev("a", { NodeFilter: "^db" }), local)).toBe(false);
    expect(eventMatches(ev("a", { ServiceFilter: "web", TagFilter: "canary" }), local)).toBe(true);
    expect(eventMatches(ev("a", { ServiceFilter: "web", TagFilter: "v1" }), local)).toBe(false);
    expect(eventMatches(ev("a", { ServiceFilter: "db" }), local)).toBe(false);
  });

  test("the list index follows the newest event's ID like Consul's uuidToUint64: all 64 bits, big-endian halves", () => {
    expect(eventIndex("00000000-0000-0000-0000-000000000000")).toBe(0n);
    expect(eventIndex("01000000-0000-0000-0300-000000000000")).toBe(0x0200000000000000n);
    expect(eventIndex("b54fe110-7af5-cafc-d1fb-afc8ba432b1c")).toBe(7256511592453824992n);
    expect(eventIndex("not-a-uuid")).toBe(0n);
  });

  test("the buffer keeps the last 256, once each, and tells listeners", () => {
    const b = new EventBuffer();
    let told = 0;
    const stop = b.onAdd(() => told++);
    for (let i = 0; i < EVENT_BUFFER_SIZE + 10; i++) b.add(ev(`id-${i}`));
    expect(b.add(ev(`id-${EVENT_BUFFER_SIZE + 9}`))).toBe(false);
    expect(b.list("").length).toBe(EVENT_BUFFER_SIZE);
    expect(b.list("")[0]!.ID).toBe("id-10");
    stop();
    b.add(ev("late"));
    expect(told).toBe(EVENT_BUFFER_SIZE + 10);
  });

  test("fire gossips under consul:event:<name>; received events are listed and wake waiters", async () => {
    const clock = simClock();
    let subscriber: ((e: { type: string; name?: string; payload?: Uint8Array; ltime?: number }) => void) | undefined;
    const sent: [string, Uint8Array][] = [];
    const api = createEventsApi({
      lan: { userEvent: (name, payload) => void sent.push([name, payload]), subscribe: (fn) => (subscriber = fn) },
      local, clock, newId: () => "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c",
    });
    const fired = await api.fire({ name: "deploy", payload: null, nodeFilter: "", serviceFilter: "", tagFilter: "" });
    expect(sent[0]![0]).toBe(`${USER_EVENT_PREFIX}deploy`);
    const waiting = api.waitForEvent(10_000, new AbortController().signal);
    subscriber!({ type: "user", name: sent[0]![0], payload: sent[0]![1], ltime: 3 });
    expect(await waiting).toBe("changed");
    expect(api.list("deploy").events).toEqual([{ ...fired, LTime: 3 }]);
    expect(api.list("other")).toEqual({ events: [], index: 1n }); // not 0: a blocking watch must wait, not loop
    expect(api.list("deploy").index).toBe(eventIndex(fired.ID));
    const timedOut = api.waitForEvent(5_000, new AbortController().signal);
    clock.advance(5_000);
    expect(await timedOut).toBe("timeout");
  });
});
