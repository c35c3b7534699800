import { describe, expect, test } from "bun:test";
import { INITIAL_PLAN, nextIndex, planAnswer, planFailure, type PlanState } from "./plan.ts";
import { readAnswer, watchRequest } from "./query.ts";
import { checkDefinition, eventIdToIndex, goJson, kvPair, pruneEvents, watchResult } from "./results.ts";
import { parseWatchSpec, type WatchParams } from "./spec.ts";

describe("watch plan (api/watch/plan.go)", () => {
  const answer = (s: PlanState, index: bigint, result: string) => planAnswer(s, index, result);

  test("the first answer fires; the same index again does nothing; a new index with the same result advances without firing", () => {
    const a = answer(INITIAL_PLAN, 10n, "A");
    expect(a).toEqual({ state: { lastIndex: 10n, lastResult: "A", failures: 0 }, fire: true });
    expect(answer(a.state, 10n, "B")).toEqual({ state: a.state, fire: false });
    const c = answer(a.state, 12n, "A");
    expect(c).toEqual({ state: { lastIndex: 12n, lastResult: "A", failures: 0 }, fire: false });
    expect(answer(c.state, 13n, "B")).toEqual({ state: { lastIndex: 13n, lastResult: "B", failures: 0 }, fire: true });
  });

  test("an index that goes backwards resets the next blocking index to 0 (and fires on a new result)", () => {
    expect(nextIndex(null, 5n)).toBe(5n);
    expect(nextIndex(10n, 5n)).toBe(0n);
    expect(nextIndex(10n, 10n)).toBe(10n);
    const a = answer(INITIAL_PLAN, 10n, "A").state;
    expect(answer(a, 5n, "B")).toEqual({ state: { lastIndex: 0n, lastResult: "B", failures: 0 }, fire: true });
    expect(answer(a, 5n, "A")).toEqual({ state: { lastIndex: 0n, lastResult: "A", failures: 0 }, fire: false });
    // From 0 every index is forwards again.
    expect(answer({ lastIndex: 0n, lastResult: "A", failures: 0 }, 7n, "A").state.lastIndex).toBe(7n);
  });

  test("a hashed index (an event list's) has no order: a smaller one is kept, not reset", () => {
    expect(nextIndex(10n, 5n, true)).toBe(5n);
    const a = planAnswer(INITIAL_PLAN, 10n, "A", true).state;
    expect(planAnswer(a, 5n, "B", true)).toEqual({ state: { lastIndex: 5n, lastResult: "B", failures: 0 }, fire: true });
  });

  test("a failure forgets the index and backs off 5s x failures^2 up to 180s; the next answer fires even when unchanged", () => {
    let s: PlanState = answer(INITIAL_PLAN, 10n, "A").state;
    const retries: number[] = [];
    for (let i = 0; i < 8; i++) {
      const f = planFailure(s);
      retries.push(f.retryMs);
      s = f.state;
    }
    expect(retries).toEqual([5_000, 20_000, 45_000, 80_000, 125_000, 180_000, 180_000, 180_000]);
    expect(s).toEqual({ lastIndex: null, lastResult: "A", failures: 8 });
    expect(answer(s, 10n, "A")).toEqual({ state: { lastIndex: 10n, lastResult: "A", failures: 0 }, fire: true });
  });
});

describe("watch parameters (watch.Parse and the funcs.go factories)", () => {
  const cases: [WatchParams, unknown][] = [
    [{ type: "" }, { error: "Watch type must be specified" }],
    [{ type: "frob" }, { error: "Unsupported watch type: frob" }],
    [{ type: "key" }, { error: "Must specify a single key to watch" }],
    [{ type: "key", key: "a", stale: true }, { type: "key", key: "a", stale: true }],
    [{ type: "key", key: "a", prefix: "p", service: "s" }, { error: "Invalid parameters: [prefix service]" }],
    [{ type: "keyprefix" }, { error: "Must specify a single prefix to watch" }],
    [{ type: "keyprefix", prefix: "p" }, { type: "keyprefix", prefix: "p", stale: false }],
    [{ type: "services", stale: true }, { type: "services", stale: true }],
    [{ type: "nodes", name: "x" }, { error: "Invalid parameters: [name]" }],
    [{ type: "service", tag: ["a"] }, { error: "Must specify a single service to watch" }],
    [{ type: "service", service: "web", tag: ["a", "b"], passingonly: true }, { type: "service", service: "web", tags: ["a", "b"], passingOnly: true, stale: false }],
    [{ type: "checks" }, { type: "checks", service: "", state: "any", stale: false }],
    [{ type: "checks", service: "web" }, { type: "checks", service: "web", state: "", stale: false }],
    [{ type: "checks", service: "web", state: "critical" }, { error: "Cannot specify service and state" }],
    [{ type: "checks", state: "passing", tag: ["x"] }, { error: "Invalid parameters: [tag]" }],
    [{ type: "event", name: "deploy" }, { type: "event", name: "deploy" }],
    [{ type: "event", stale: true }, { error: "Invalid parameters: [stale]" }],
    [{ type: "connect_roots" }, { error: "Type connect_roots is not supported in the CLI tool" }],
    [{ type: "connect_leaf", service: "web" }, { error: "Type connect_leaf is not supported in the CLI tool" }],
    [{ type: "agent_service", service: "web" }, { error: "Invalid parameters: [service]" }],
  ];
  test.each(cases)("%j", (params: WatchParams, want: unknown) => {
    expect(parseWatchSpec(params)).toEqual(want as never);
  });
});

describe("watch requests and answers (funcs.go through the Go API client)", () => {
  const line = (r: ReturnType<typeof watchRequest>) => `${r.path} ${JSON.stringify(r.query)}${r.accept404 ? " 404ok" : ""}`;

  test("each type's endpoint; ?index= and ?wait= only when blocking on a non-zero index", () => {
    expect(line(watchRequest({ type: "key", key: "/a b/c", stale: true }, null))).toBe('/v1/kv/a%20b/c {"stale":""} 404ok');
    expect(line(watchRequest({ type: "key", key: "a", stale: false }, 0n))).toBe("/v1/kv/a {} 404ok");
    expect(line(watchRequest({ type: "keyprefix", prefix: "app/", stale: false }, 7n))).toBe('/v1/kv/app/ {"index":"7","wait":"4m","recurse":""} 404ok');
    expect(line(watchRequest({ type: "services", stale: false }, null))).toBe("/v1/catalog/services {}");
    expect(line(watchRequest({ type: "nodes", stale: false }, null))).toBe("/v1/catalog/nodes {}");
    expect(line(watchRequest({ type: "service", service: "web", tags: ["a", "b"], passingOnly: true, stale: false }, null))).toBe('/v1/health/service/web {"tag":["a","b"],"passing":"1"}');
    expect(line(watchRequest({ type: "checks", service: "web", state: "", stale: false }, null))).toBe("/v1/health/checks/web {}");
    expect(line(watchRequest({ type: "checks", service: "", state: "critical", stale: false }, null))).toBe("/v1/health/state/critical {}");
    expect(line(watchRequest({ type: "event", name: "deploy" }, 18446744073709551615n))).toBe('/v1/event/list {"index":"18446744073709551615","wait":"4m","name":"deploy"}');
    expect(() => watchRequest({ type: "checks", service: "", state: "bogus", stale: false }, null)).toThrow("Unsupported state: bogus");
  });

  test("the index header: absent is 0, beyond 2^53 exact, not a uint64 is the Go client's error", () => {
    const spec = { type: "services", stale: false } as const;
    expect(readAnswer(spec, null, 200, null, {}).index).toBe(0n);
    expect(readAnswer(spec, null, 200, "18446744073709551615", {}).index).toBe(18446744073709551615n);
    expect(() => readAnswer(spec, null, 200, "-1", {})).toThrow('Failed to parse X-Consul-Index: strconv.ParseUint: parsing "-1": invalid syntax');
  });

  test("a 404 of a key is null, of a prefix null; a key answer is its first pair", () => {
    expect(readAnswer({ type: "key", key: "a", stale: false }, null, 404, "3", "ignored").result).toBeNull();
    expect(readAnswer({ type: "keyprefix", prefix: "a", stale: false }, null, 404, "3", null).result).toBeNull();
    expect(readAnswer({ type: "key", key: "a", stale: false }, null, 200, "3", [{ Key: "a", Value: "eA==" }]).result).toMatchObject({ Key: "a", Value: "eA==" });
  });
});

describe("watch results in the Go API's layout", () => {
  test("a KV pair: the struct's field order, zero values for what is absent, Namespace only when set, uint64 flags exact", () => {
    const pair = kvPair({ Flags: 18446744073709551615n, Value: "eA==", Key: "a", ModifyIndex: 4, Extra: 1 });
    expect(goJson(pair)).toBe('{"Key":"a","CreateIndex":0,"ModifyIndex":4,"LockIndex":0,"Flags":18446744073709551615,"Value":"eA==","Session":""}');
    expect(kvPair({ Key: "a", Namespace: "ns" }).Namespace).toBe("ns");
  });

  test("the service map with sorted keys; Go's HTML-safe escapes; four-space indentation", () => {
    expect(goJson(watchResult({ type: "services", stale: false }, { web: ["<b>"], api: null, consul: [] }), true)).toBe(
      '{\n    "api": null,\n    "consul": [],\n    "web": [\n        "\\u003cb\\u003e"\n    ]\n}',
    );
    expect(goJson(null, true)).toBe("null");
    expect(goJson([], true)).toBe("[]");
  });

  test("a check definition through its MarshalJSON: durations first, Go-formatted", () => {
    expect(checkDefinition({ HTTP: "http://x", Interval: "90s", Timeout: "1s", Header: { b: ["2"], a: ["1"] } })).toEqual({
      Interval: "1m30s", Timeout: "1s", DeregisterCriticalServiceAfter: "0s", HTTP: "http://x", Header: { a: ["1"], b: ["2"] }, Method: "", Body: "", TLSSkipVerify: false, TCP: "",
    });
    expect(Object.keys(checkDefinition({}))).toEqual(["Interval", "Timeout", "DeregisterCriticalServiceAfter", "HTTP", "Header", "Method", "Body", "TLSSkipVerify", "TCP"]);
  });

  test("health entries: Node, Service (omitempty fields dropped), Checks", () => {
    const [entry] = watchResult({ type: "service", service: "web", tags: [], passingOnly: false, stale: false }, [
      { Node: { Node: "n1", Address: "10.0.0.1" }, Service: { ID: "web1", Service: "web", Port: 80, Weights: { Passing: 1, Warning: 1 } }, Checks: [] },
    ]) as Record<string, Record<string, unknown>>[];
    expect(Object.keys(entry!)).toEqual(["Node", "Service", "Checks"]);
    expect(Object.keys(entry!.Service!)).toEqual(["ID", "Service", "Tags", "Meta", "Port", "Address", "Weights", "EnableTagOverride"]);
    expect(entry!.Node).toMatchObject({ ID: "", Node: "n1", TaggedAddresses: null, Meta: null });
  });

  test("event IDs to indexes as api.Event.IDToIndex; pruning keeps the events after the one the last index came from", () => {
    expect(eventIdToIndex("00000000-0000-0001-0000-000000000003")).toBe(1n ^ 3n);
    expect(eventIdToIndex("6a5bfd6d-3fe8-4833-a576-2b6217b776ca")).toBe(0x6a5bfd6d3fe84833n ^ 0xa5762b6217b776can);
    expect(eventIdToIndex("not-a-uuid")).toBeUndefined();
    const events = [{ ID: "00000000-0000-0000-0000-000000000001" }, { ID: "00000000-0000-0000-0000-000000000002" }, { ID: "00000000-0000-0000-0000-000000000003" }];
    expect(pruneEvents(events, 2n)).toEqual([events[2]!]);
    expect(pruneEvents(events, 3n)).toEqual([]);
    expect(pruneEvents(events, 9n)).toEqual(events);
    expect(pruneEvents(events, null)).toEqual(events);
    expect(pruneEvents(null, 2n)).toBeNull();
  });
});
