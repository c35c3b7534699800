import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { decodeQuery, decodeQueryResponse, encodeQuery, encodeQueryResponse } from "./codec.ts";
import { QUERY_DEFAULTS, QueryEngine, type QueryEvent, type QueryHost } from "./query.ts";
import type { QueryMsg } from "./types.ts";

const text = (s: string) => new TextEncoder().encode(s);

/** An engine named `name` over a recording host. */
function engine(name: string, o: { live?: number; tags?: Record<string, string>; internal?: QueryHost["internal"] } = {}) {
  const rec = { broadcasts: [] as { key: string; payload: Uint8Array }[], sent: [] as { to: string; payload: Uint8Array; toName: string }[], events: [] as QueryEvent[] };
  const host: QueryHost = {
    name,
    localAddr: () => `${name}:8301`,
    tags: () => o.tags ?? {},
    liveMembers: () => o.live ?? 3,
    broadcast: (key, payload) => void rec.broadcasts.push({ key, payload }),
    send: (to, payload, toName) => void rec.sent.push({ to, payload, toName }),
    emit: (e) => void rec.events.push(e),
    internal: o.internal ?? (() => undefined),
  };
  return { q: new QueryEngine(host, QUERY_DEFAULTS, seededRng(7)), rec };
}

const msg = (over: Partial<QueryMsg> = {}): QueryMsg => ({
  ltime: 5, id: 99, sourceNode: "origin", sourceAddr: "origin:8301", requestAck: false, noBroadcast: false, timeoutMs: 1000,
  filters: [], name: "app", payload: text("p"), ...over,
});

describe("query engine", () => {
  test("default timeout is gossip interval * 16 * ceil(log10(n + 1)) (serf DefaultQueryTimeout)", () => {
    expect(engine("a", { live: 1 }).q.defaultTimeoutMs()).toBe(200 * 16);
    expect(engine("a", { live: 9 }).q.defaultTimeoutMs()).toBe(200 * 16);
    expect(engine("a", { live: 10 }).q.defaultTimeoutMs()).toBe(200 * 16 * 2);
    expect(engine("a", { live: 150 }).q.defaultTimeoutMs()).toBe(200 * 16 * 3);
  });

  test("start processes locally, gossips once, and collects our own answer; closes at the deadline", () => {
    const { q, rec } = engine("a");
    const s = q.start("app", text("x"), { requestAck: true, timeoutMs: 500 }, 100);
    expect(s.deadline).toBe(600);
    expect(rec.broadcasts.map((b) => b.key)).toEqual([`q${s.ltime}:${s.id}`]);
    expect(decodeQuery(rec.broadcasts[0]!.payload)).toMatchObject({ sourceNode: "a", sourceAddr: "a:8301", requestAck: true, timeoutMs: 500, name: "app" });
    expect(rec.events.map((e) => e.type)).toEqual(["query-ack", "query"]); // our ack, then the query to answer
    const incoming = (rec.events[1] as Extract<QueryEvent, { type: "query" }>).query;
    q.respond(incoming, text("mine"), 120);
    expect(rec.sent).toEqual([]); // answered in place, not over the network
    expect(rec.events.at(-1)).toEqual({ type: "query-response", ltime: s.ltime, id: s.id, from: "a", payload: text("mine") });
    expect(q.nextDeadline()).toBe(600);
    q.tick(599);
    expect(q.open).toBe(1);
    q.tick(600);
    expect(q.open).toBe(0);
    expect(rec.events.at(-1)).toEqual({ type: "query-closed", ltime: s.ltime, id: s.id });
  });

  test("the same (ltime, id) is processed once; another id at the same ltime is a different query", () => {
    const { q, rec } = engine("b");
    const m = msg();
    q.receive(m, encodeQuery(m), 0);
    q.receive(m, encodeQuery(m), 1);
    q.receive({ ...m, id: 100 }, encodeQuery({ ...m, id: 100 }), 2);
    expect(rec.events.filter((e) => e.type === "query").length).toBe(2);
    expect(rec.broadcasts.length).toBe(2);
    expect(q.counters.duplicateQueries).toBe(1);
  });

  test("a query older than the de-duplication window is dropped", () => {
    const { q, rec } = engine("b");
    const late = msg({ ltime: 2000 });
    q.receive(late, encodeQuery(late), 0);
    const old = msg({ ltime: 1000 });
    q.receive(old, encodeQuery(old), 0);
    expect(q.counters.oldQueries).toBe(1);
    expect(rec.events.length).toBe(1);
  });

  test("an ack and our answer go straight to the originator's address and name, once; late answers throw", () => {
    const { q, rec } = engine("b");
    const m = msg({ requestAck: true });
    q.receive(m, encodeQuery(m), 10);
    expect(rec.sent.map((s) => [s.to, s.toName, decodeQueryResponse(s.payload)])).toEqual([
      ["origin:8301", "origin", { ltime: 5, id: 99, from: "b", ack: true, payload: new Uint8Array(0) }],
    ]);
    const incoming = (rec.events[0] as Extract<QueryEvent, { type: "query" }>).query;
    expect(incoming).toEqual({ name: "app", payload: text("p"), ltime: 5, id: 99, from: "origin", addr: "origin:8301", deadline: 1010 });
    q.respond(incoming, text("r"), 20);
    expect(decodeQueryResponse(rec.sent[1]!.payload)).toEqual({ ltime: 5, id: 99, from: "b", ack: false, payload: text("r") });
    expect(rec.sent[1]!.toName).toBe("origin"); // serf SendToAddress with Address.Name: the query's source node
    expect(() => q.respond(incoming, text("again"), 21)).toThrow("response already sent");
    const m2 = msg({ id: 7 });
    q.receive(m2, encodeQuery(m2), 10);
    const in2 = (rec.events[1] as Extract<QueryEvent, { type: "query" }>).query;
    expect(() => q.respond(in2, text("late"), 1011)).toThrow("response is past the deadline");
    expect(() => q.respond(in2, new Uint8Array(1024), 20)).toThrow("response exceeds limit of 1024 bytes");
  });

  test("no-broadcast queries are not re-gossiped", () => {
    const { q, rec } = engine("b");
    const m = msg({ noBroadcast: true });
    q.receive(m, encodeQuery(m), 0);
    expect(rec.broadcasts).toEqual([]);
    expect(rec.events.length).toBe(1);
  });

  test("filters: node list and tag regexps must all pass; the query is still re-gossiped", () => {
    const { q, rec } = engine("b", { tags: { role: "consul", dc: "dc1" } });
    const cases: [QueryMsg["filters"], boolean][] = [
      [[{ type: "nodes", nodes: ["a", "b"] }], true],
      [[{ type: "nodes", nodes: ["a"] }], false],
      [[{ type: "tag", tag: "role", expr: "^con" }], true],
      [[{ type: "tag", tag: "role", expr: "node" }], false],
      [[{ type: "tag", tag: "missing", expr: "^$" }], true],
      [[{ type: "tag", tag: "role", expr: "(" }], false], // a bad expression fails, as in serf
      [[{ type: "tag", tag: "role", expr: "consul" }, { type: "nodes", nodes: ["c"] }], false],
    ];
    cases.forEach(([filters], i) => {
      const m = msg({ id: i, filters });
      q.receive(m, encodeQuery(m), 0);
    });
    const processed = rec.events.filter((e) => e.type === "query").map((e) => (e as Extract<QueryEvent, { type: "query" }>).query.id);
    expect(processed).toEqual(cases.flatMap(([, ok], i) => (ok ? [i] : [])));
    expect(rec.broadcasts.length).toBe(cases.length);
  });

  test("internal queries are answered by the host and never reported; no answer means no response", () => {
    const asked: string[] = [];
    const { q, rec } = engine("b", {
      internal: (name, _payload, max) => {
        asked.push(name);
        expect(max).toBe(1024 - encodeQueryResponse({ ltime: 5, id: 1, from: "b", ack: false, payload: new Uint8Array(0) }).length);
        return name === "_serf_ping" ? undefined : text("answer");
      },
    });
    for (const [id, name] of [[1, "_serf_list-keys"], [2, "_serf_ping"]] as const) {
      const m = msg({ id, name });
      q.receive(m, encodeQuery(m), 0);
    }
    expect(asked).toEqual(["_serf_list-keys", "_serf_ping"]);
    expect(rec.events).toEqual([]);
    expect(rec.sent.map((s) => decodeQueryResponse(s.payload))).toEqual([{ ltime: 5, id: 1, from: "b", ack: false, payload: text("answer") }]);
  });

  test("responses: stray, late, mismatched and repeated ones are dropped; close() ends collection early", () => {
    const { q, rec } = engine("a");
    const s = q.start("app", text("x"), { timeoutMs: 100 }, 0);
    rec.events.length = 0;
    const r = (from: string, over: object = {}) => ({ ltime: s.ltime, id: s.id, from, ack: false, payload: text(from), ...over });
    q.receiveResponse(r("b"), 10);
    q.receiveResponse(r("b"), 11);
    q.receiveResponse(r("c", { id: s.id + 1 }), 12);
    q.receiveResponse(r("d", { ltime: s.ltime + 7 }), 13);
    q.receiveResponse(r("e", { ack: true }), 14);
    q.receiveResponse(r("f"), 101);
    expect(rec.events.map((e) => `${e.type}:${"from" in e ? e.from : ""}`)).toEqual(["query-response:b", "query-ack:e"]);
    expect(q.counters).toMatchObject({ duplicateResponses: 1, strayResponses: 3 });
    expect(q.close(s.ltime)).toBe(true);
    expect(q.close(s.ltime)).toBe(false);
    q.receiveResponse(r("g"), 50);
    expect(rec.events.map((e) => e.type)).toEqual(["query-response", "query-ack", "query-closed"]);
  });

  test("a query over 1024 bytes is refused before anything is sent", () => {
    const { q, rec } = engine("a");
    expect(() => q.start("big", new Uint8Array(1000), {}, 0)).toThrow("query exceeds limit of 1024 bytes");
    expect(rec.broadcasts).toEqual([]);
    expect(q.open).toBe(0);
  });

  test("Lamport times: each new query is stamped past everything witnessed", () => {
    const { q } = engine("a");
    const first = q.start("x", text(""), {}, 0);
    const m = msg({ ltime: 40 });
    q.receive(m, encodeQuery(m), 0);
    const next = q.start("x", text(""), {}, 0);
    expect(first.ltime).toBe(1);
    expect(next.ltime).toBe(41);
  });
});
