import { describe, expect, test } from "bun:test";
import type { CoordinateEntry, QuerySource } from "../model/index.ts";
import { createStateStore, WatchSet, type StateCommand } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { computeDistanceMs, intersect, sortByDistanceFrom, type CoordinatesOf } from "./near.ts";
import { runRead } from "./run_read.ts";

/** A coordinate `ms` milliseconds from the origin along the first axis (height 0, so distances are exact). */
const at = (ms: number) => ({ Vec: [ms / 1000, 0, 0, 0, 0, 0, 0, 0], Error: 0.2, Adjustment: 0, Height: 0 });
const entry = (Node: string, ms: number, Segment = ""): CoordinateEntry => ({ Node, Segment, Coord: at(ms) });
const lookup = (...entries: CoordinateEntry[]): CoordinatesOf => (node) => entries.filter((e) => e.Node.toLowerCase() === node.toLowerCase());

describe("sortByDistanceFrom (Consul's sortNodesByDistanceFrom)", () => {
  const coords = lookup(entry("src", 0), entry("far", 50), entry("near", 5), entry("mid", 20), entry("twin-a", 20));
  test.each([
    ["by distance, stable for ties, unknown nodes last in their order", "src", ["x1", "far", "twin-a", "near", "x2", "mid"], ["near", "twin-a", "mid", "far", "x1", "x2"]],
    ["from another node (the source itself is at 0)", "far", ["near", "src", "far", "mid"], ["far", "mid", "near", "src"]],
    ["source matched case-insensitively", "SRC", ["far", "near"], ["near", "far"]],
    ["a source without a coordinate leaves the order", "nobody", ["far", "near", "mid"], ["far", "near", "mid"]],
    ["an empty source leaves the order", "", ["far", "near"], ["far", "near"]],
  ])("%s", (_what, source, nodes, want) => {
    expect(sortByDistanceFrom(nodes, (n) => n, source, coords)).toEqual(want);
  });

  test("segments: a single-segment side picks the segment; otherwise the default one", () => {
    expect(intersect([entry("a", 1, "s1")], [entry("b", 2, ""), entry("b", 3, "s1")]).map((c) => c?.Vec[0])).toEqual([0.001, 0.003]);
    expect(intersect([entry("a", 1, ""), entry("a", 4, "s1")], [entry("b", 2, ""), entry("b", 3, "s1")]).map((c) => c?.Vec[0])).toEqual([0.001, 0.002]);
    expect(intersect([entry("a", 1, "s1")], [entry("b", 2, "s2")])).toEqual([undefined, at(2)]);
    expect(computeDistanceMs(undefined, at(1))).toBe(Infinity);
    expect(computeDistanceMs(at(1), at(4))).toBeCloseTo(3, 9);
  });
});

describe("near on the server's reads", () => {
  function setup() {
    const store = createStateStore({ clock: simClock() });
    let idx = 0;
    const apply = (c: StateCommand) => expect(store.apply(++idx, c)).toEqual({ type: "ok" });
    for (const node of ["a", "b", "c", "d"]) {
      apply({
        type: "register",
        req: { Node: node, Address: "10.0.0.1", Service: { ID: "web", Service: "web" } as never, Check: { CheckID: "c", Name: "c", Status: "passing", ServiceID: "web" } as never },
      });
    }
    apply({ type: "coordinate-batch", updates: [entry("a", 30), entry("b", 0), entry("c", 10)] });
    apply({
      type: "prepared-query", op: "create",
      query: {
        ID: "8f246b77-f3e1-ff88-5b48-8ec93abf3e05", Name: "web", Session: "", Token: "", Template: { Type: "", Regexp: "", RemoveEmptyTags: false },
        Service: {
          Service: "web", Failover: { NearestN: 0, Datacenters: null }, OnlyPassing: false, IgnoreCheckIDs: null, Near: "", Tags: null,
          NodeMeta: null, ServiceMeta: null, Connect: false,
        },
        DNS: { TTL: "" },
      },
    });
    const read = (q: Parameters<typeof runRead>[2]) => runRead(store, new WatchSet(), q, { term: () => 1, datacenter: "dc1" });
    return { read };
  }

  test("catalog and health reads sort by distance from near; nodes without coordinates last; the index is the read's", () => {
    const { read } = setup();
    const plain = read({ type: "catalog-nodes" });
    const near = read({ type: "catalog-nodes", near: "b" });
    expect((near.value as { Node: string }[]).map((n) => n.Node)).toEqual(["b", "c", "a", "d"]);
    expect(near.index).toBe(plain.index);
    const names = (q: Parameters<typeof runRead>[2], nodeOf: (x: never) => string) => (read(q).value as never[]).map(nodeOf);
    expect(names({ type: "catalog-service-nodes", service: "web", connect: false, near: "a" }, (n: { Node: string }) => n.Node)).toEqual(["a", "c", "b", "d"]);
    expect(names({ type: "health-service-nodes", service: "web", passingOnly: false, connect: false, near: "c" }, (n: { Node: { Node: string } }) => n.Node.Node))
      .toEqual(["c", "b", "a", "d"]);
    expect(names({ type: "health-service-checks", service: "web", near: "a" }, (c: { Node: string }) => c.Node)).toEqual(["a", "c", "b", "d"]);
    expect(names({ type: "health-state", state: "any", near: "b" }, (c: { Node: string }) => c.Node)).toEqual(["b", "c", "a", "d"]);
  });

  test("a prepared query sorts near its source with the stored coordinates (rttFrom)", () => {
    const { read } = setup();
    const agent: QuerySource = { Datacenter: "dc1", Segment: "", Node: "d", Ip: "" };
    const r = read({ type: "prepared-query-execute", idOrName: "web", agent, source: { ...agent, Node: "a" }, limit: 0, connect: false });
    expect((r.value as { value: { Nodes: { Node: { Node: string } }[] } }).value.Nodes.map((n) => n.Node.Node)).toEqual(["a", "c", "b", "d"]);
  });
});
