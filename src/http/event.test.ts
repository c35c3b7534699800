import { describe, expect, test } from "bun:test";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";
import type { UserEventView } from "../model/index.ts";
import type { EventsApi } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const event = (ID: string, Name = "deploy"): UserEventView => ({ ID, Name, Payload: new TextEncoder().encode("p"), NodeFilter: "", ServiceFilter: "", TagFilter: "", Version: 1, LTime: 2 });

/** IDs whose list index (Consul's uuidToUint64) is 10 and 20. */
const E10 = "00000000-0000-000a-0000-000000000000", E20 = "00000000-0000-0014-0000-000000000000";

function setup() {
  const fired: Parameters<EventsApi["fire"]>[0][] = [];
  let events: UserEventView[] = [event(E10)];
  const waits: number[] = [];
  const api: EventsApi = {
    fire: async (f) => (fired.push(f), event("new", f.name)),
    list: (name) => ({ events: events.filter((e) => !name || e.Name === name), index: 0n }),
    waitForEvent: async (ms) => {
      waits.push(ms);
      events = [...events, event(E20)];
      return "changed";
    },
  };
  return { fired, waits, app: createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, events: api, random: () => 0 }) };
}

describe("/v1/event", () => {
  test("fire passes the name, payload and filters and answers the event with a base64 payload", async () => {
    const { app, fired } = setup();
    const res = await app.request("/v1/event/fire/deploy?node=web&service=api&tag=v2", { method: "PUT", body: "hello" });
    expect(await res.json()).toMatchObject({ ID: "new", Name: "deploy", Payload: "cA==", Version: 1 });
    expect(fired[0]).toEqual({ name: "deploy", payload: new TextEncoder().encode("hello"), nodeFilter: "web", serviceFilter: "api", tagFilter: "v2" });
  });

  test("bad filters are refused before anything is gossiped", async () => {
    const { app, fired } = setup();
    const tagOnly = await app.request("/v1/event/fire/x?tag=v2", { method: "PUT" });
    expect(tagOnly.status).toBe(400);
    expect((await tagOnly.text()).trim()).toBe("Cannot provide tag filter without service filter");
    const badRegexp = await app.request("/v1/event/fire/x?node=(", { method: "PUT" });
    expect(badRegexp.status).toBe(400);
    expect(fired).toEqual([]);
  });

  test("list answers the events with their index, and blocks only while the client's index is current", async () => {
    const { app, waits } = setup();
    const first = await app.request("/v1/event/list?name=deploy");
    expect(first.headers.get("X-Consul-Index")).toBe("10");
    expect(((await first.json()) as unknown[]).length).toBe(1);
    await app.request("/v1/event/list?index=5");
    expect(waits).toEqual([]);
    const blocked = await app.request("/v1/event/list?index=10&wait=2s");
    expect(waits).toEqual([2000]);
    expect(blocked.headers.get("X-Consul-Index")).toBe("20");
  });

  test("with ACLs the index is the visible list's: an unreadable event neither moves it nor ends the wait", async () => {
    const waits: number[] = [];
    let events = [event(E10, "deploy")];
    const api: EventsApi = {
      fire: async () => event("x"),
      list: () => ({ events, index: 0n }),
      // The first wake-up brings an event the token cannot read; the second times out.
      waitForEvent: async (ms) => (waits.push(ms), waits.length === 1 ? ((events = [...events, event(E20, "secret")]), "changed") : "timeout"),
    };
    let now = 0;
    const clock = { now: () => now, monotonic: () => now, setTimer: () => () => {} };
    const aclAuthorizer = async () => ({ check: (_r: string, _a: string, name?: string) => (name === "secret" ? "deny" : "allow") }) as never;
    const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, events: api, random: () => 0, aclAuthorizer, clock: clock as never });
    const first = await app.request("/v1/event/list");
    expect(first.headers.get("X-Consul-Index")).toBe("10");
    const origWait = api.waitForEvent;
    api.waitForEvent = async (ms, signal) => ((now += 400), origWait(ms, signal));
    const blocked = await app.request("/v1/event/list?index=10&wait=1s");
    expect(blocked.headers.get("X-Consul-Index")).toBe("10");
    expect(((await blocked.json()) as { Name: string }[]).map((e) => e.Name)).toEqual(["deploy"]);
    // It waited again for the rest of the time after the unreadable event woke it.
    expect(waits).toEqual([1000, 600]);
  });

  test("an index past 2^53 is compared in all its 64 bits (it names the last event a watch saw)", async () => {
    const waits: number[] = [];
    const api: EventsApi = {
      fire: async () => event("x"),
      list: () => ({ events: [event("b54fe110-7af5-cafc-d1fb-afc8ba432b1c")], index: 0n }),
      waitForEvent: async (ms) => (waits.push(ms), "timeout"),
    };
    const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, events: api, random: () => 0 });
    const current = await app.request("/v1/event/list?index=7256511592453824992&wait=1s");
    expect(current.headers.get("X-Consul-Index")).toBe("7256511592453824992");
    expect(waits).toEqual([1000]);
    await app.request("/v1/event/list?index=7256511592453824993&wait=1s");
    expect(waits).toEqual([1000]);
  });
});
