import { describe, expect, test } from "bun:test";
import type { CoordinateEntry, NetworkCoordinate } from "../model/index.ts";
import { decodeCommand, encodeCommand } from "./codec.ts";
import { harness, ok, register, ws } from "./fixtures.test.ts";
import { coordinateList, coordinateNode } from "./queries_coordinate.ts";
import { checkSnapshot } from "./snapshot_check.ts";
import { createStateStore } from "./store.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { waitFor } from "./watch.ts";

const coord = (x: number, more: Partial<NetworkCoordinate> = {}): NetworkCoordinate => ({ Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 0.5, Adjustment: 0, Height: 1e-5, ...more });
const entry = (Node: string, x: number, Segment = ""): CoordinateEntry => ({ Node, Segment, Coord: coord(x) });
const batch = (...updates: CoordinateEntry[]) => ({ type: "coordinate-batch" as const, updates });
const enc = new TextEncoder();

function withNodes(...names: string[]) {
  const h = harness();
  for (const n of names) h.apply(register(n));
  return h;
}

describe("coordinate-batch", () => {
  test("upserts by (node, segment), skips unknown nodes, bumps the index", () => {
    const h = withNodes("b", "a");
    expect(h.apply(batch(entry("b", 0.1), entry("ghost", 0.2), entry("a", 0.3), entry("a", 0.4, "seg1")))).toEqual(ok);
    const all = coordinateList(h.store, ws());
    expect(all.index).toBe(3);
    expect(all.value.map((c) => [c.Node, c.Segment, c.Coord.Vec[0]])).toEqual([["a", "", 0.3], ["a", "seg1", 0.4], ["b", "", 0.1]]);
    h.apply(batch(entry("A", 0.9)));
    expect(coordinateNode(h.store, ws(), "a").value.map((c) => [c.Node, c.Segment, c.Coord.Vec[0]])).toEqual([["A", "", 0.9], ["a", "seg1", 0.4]]);
    expect(coordinateNode(h.store, ws(), "a").index).toBe(4);
    expect(coordinateNode(h.store, ws(), "nobody").value).toEqual([]);
  });

  test("an update for a missing node is skipped but the index still moves (Consul inserts the index entry)", () => {
    const h = withNodes("a");
    h.apply(batch(entry("ghost", 0.1)));
    expect(coordinateList(h.store, ws())).toEqual({ index: 2, value: [] });
  });

  test("non-finite coordinates are skipped at apply (a bad client of the past)", () => {
    const h = withNodes("a");
    h.apply(batch({ Node: "a", Segment: "", Coord: coord(Number.NaN) }, entry("a", 0.1, "s")));
    expect(coordinateList(h.store, ws()).value.map((c) => c.Segment)).toEqual(["s"]);
  });

  test("deregistering the node deletes its coordinates and moves the index; a service deregistration does not", () => {
    const h = withNodes("a", "b");
    h.apply(batch(entry("a", 0.1), entry("a", 0.2, "s"), entry("b", 0.3)));
    h.apply({ type: "deregister", req: { Node: "b", ServiceID: "nope" } });
    expect(coordinateList(h.store, ws()).index).toBe(3);
    h.apply({ type: "deregister", req: { Node: "A" } });
    expect(coordinateList(h.store, ws())).toEqual({ index: 5, value: [entry("b", 0.3)] });
  });

  test("a blocking read of the coordinates wakes on a batch", async () => {
    const h = withNodes("a");
    const w = ws();
    coordinateList(h.store, w);
    let outcome: string | undefined;
    void waitFor(w, { clock: h.clock, timeoutMs: 60_000 }).then((o) => (outcome = o));
    h.apply(register("b"));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(outcome).toBeUndefined();
    h.apply(batch(entry("a", 0.1)));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(outcome).toBe("changed");
  });
});

describe("coordinate-batch codec", () => {
  test("round-trips", () => {
    const cmd = batch(entry("a", 0.25), entry("b", -1e-3, "seg"));
    expect(decodeCommand(encodeCommand(cmd))).toEqual(cmd);
  });

  test.each([
    [{ updates: "x" }, "coordinate-batch.updates must be an array"],
    [{ updates: [{ Node: 1, Segment: "", Coord: coord(0) }] }, "updates[0].Node must be a string"],
    [{ updates: [{ Node: "a", Coord: coord(0) }] }, "updates[0].Segment must be a string"],
    [{ updates: [{ Node: "a", Segment: "", Coord: { ...coord(0), Vec: [1, 2, 3] } }] }, "updates[0].Coord.Vec must be an array of 8 finite numbers"],
    [{ updates: [{ Node: "a", Segment: "", Coord: { ...coord(0), Vec: [1, 2, 3, 4, 5, 6, 7, "8"] } }] }, "Coord.Vec must be an array of 8 finite numbers"],
    [{ updates: [{ Node: "a", Segment: "", Coord: { Vec: coord(0).Vec, Error: 1, Adjustment: 0 } }] }, "Coord.Height must be a finite number"],
    [{ updates: [{ Node: "a", Segment: "" }] }, "updates[0].Coord must be an object"],
  ])("rejects %j", (body, message) => {
    expect(() => decodeCommand(enc.encode(JSON.stringify({ type: "coordinate-batch", ...body })))).toThrow(message);
  });

  test("an integral component past 2^53 survives the log (its exact-number reader hands back a bigint)", () => {
    const big = { Node: "a", Segment: "", Coord: { ...coord(0), Vec: [9223372036854775808, 0, 0, 0, 0, 0, 0, 0], Height: 2 ** 60 } };
    const cmd = decodeCommand(encodeCommand({ type: "coordinate-batch", updates: [big] }));
    expect(cmd).toEqual({ type: "coordinate-batch", updates: [big] });
  });

  test("rejects a non-finite component written as a huge literal", () => {
    const text = `{"type":"coordinate-batch","updates":[{"Node":"a","Segment":"","Coord":{"Vec":[1e999,0,0,0,0,0,0,0],"Error":1,"Adjustment":0,"Height":0}}]}`;
    expect(() => decodeCommand(enc.encode(text))).toThrow("Coord.Vec must be an array of 8 finite numbers");
  });
});

describe("coordinates in snapshots", () => {
  test("snapshot, restore and check keep them; a snapshot without the table restores it empty", () => {
    const h = withNodes("a", "b");
    h.apply(batch(entry("b", 0.3), entry("a", 0.1, "s")));
    const snap = h.store.snapshot();
    expect(() => checkSnapshot(snap)).not.toThrow();
    const other = createStateStore({ clock: simClock() });
    other.restore(snap);
    expect(coordinateList(other, ws())).toEqual(coordinateList(h.store, ws()));
    expect(other.snapshot()).toEqual(snap);
    const doc = JSON.parse(new TextDecoder().decode(snap));
    delete doc.coordinates;
    other.restore(enc.encode(JSON.stringify(doc)));
    expect(coordinateList(other, ws()).value).toEqual([]);
  });

  test("the check refuses coordinates of missing nodes, duplicates and bad shapes", () => {
    const h = withNodes("a");
    h.apply(batch(entry("a", 0.1)));
    const doc = JSON.parse(new TextDecoder().decode(h.store.snapshot()));
    const variant = (coordinates: unknown) => enc.encode(JSON.stringify({ ...doc, coordinates }));
    expect(() => checkSnapshot(variant([entry("zed", 0.1)]))).toThrow('coordinates[0] is for node "zed", which the snapshot does not have');
    expect(() => checkSnapshot(variant([entry("a", 0.1), entry("A", 0.2)]))).toThrow('coordinates[1] repeats the coordinate of node "A" in segment ""');
    expect(() => checkSnapshot(variant([{ Node: "a", Segment: "", Coord: { ...coord(0), Vec: [0] } }]))).toThrow("invalid snapshot: coordinates[0].Coord.Vec must be an array of 8 finite numbers");
    expect(() => createStateStore({ clock: simClock() }).restore(variant([{ Node: "a" }]))).toThrow("invalid state snapshot: coordinates[0].Segment must be a string");
  });
});
