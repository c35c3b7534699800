import { describe, expect, test } from "bun:test";
import type { FederationStateWrite } from "../model/index.ts";
import { gateway, write } from "../model/federation_state_fixtures.test.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { decodeCommand, encodeCommand } from "./codec.ts";
import type { StateCommand } from "./commands.ts";
import { harness, ok, utf8, ws } from "./fixtures.test.ts";
import { federationStateGet, federationStateList } from "./queries_federation.ts";
import { checkSnapshot } from "./snapshot_check.ts";
import { createStateStore } from "./store.ts";
import { waitFor } from "./watch.ts";

const upsert = (state: FederationStateWrite, cas?: number): StateCommand =>
  ({ type: "federation-state", op: "upsert", state, ...(cas === undefined ? {} : { cas }) });
const del = (datacenter: string, cas?: number): StateCommand =>
  ({ type: "federation-state", op: "delete", datacenter, ...(cas === undefined ? {} : { cas }) });
const text = (b: Uint8Array) => new TextDecoder().decode(b);
/** The snapshot without its lastIndex: what a refused command must leave exactly as it was. */
const tables = (h: ReturnType<typeof harness>) => text(h.store.snapshot()).replace(/"lastIndex":\d+/, "");
const tableIndex = (h: ReturnType<typeof harness>) => federationStateList(h.store, ws()).index;

describe("federation-state writes", () => {
  test("a write in the primary: CreateIndex = ModifyIndex = PrimaryModifyIndex = the Raft index", () => {
    const h = harness();
    expect(h.apply(upsert(write({ Datacenter: "dc2", PrimaryModifyIndex: 0 })))).toEqual(ok);
    expect(federationStateGet(h.store, ws(), "dc2")).toEqual({
      index: 1, value: { ...write({ Datacenter: "dc2" }), PrimaryModifyIndex: 1, CreateIndex: 1, ModifyIndex: 1 },
    });
  });

  test("an update keeps CreateIndex; a replicated PrimaryModifyIndex is kept as it is", () => {
    const h = harness();
    h.apply(upsert(write({ PrimaryModifyIndex: 0 })));
    h.apply({ type: "kv", op: "set", entry: { Key: "k" } });
    h.apply(upsert(write({ PrimaryModifyIndex: 77, UpdatedAt: "2020-06-01T00:00:00Z" })));
    expect(federationStateGet(h.store, ws(), "dc2").value).toEqual({ ...write({ PrimaryModifyIndex: 77, UpdatedAt: "2020-06-01T00:00:00Z" }), CreateIndex: 1, ModifyIndex: 3 });
    expect(tableIndex(h)).toBe(3);
  });

  test("datacenters are matched case-insensitively; the stored name is the last write's", () => {
    const h = harness();
    h.apply(upsert(write({ Datacenter: "DC2" })));
    h.apply(upsert(write({ Datacenter: "dc2" })));
    expect(federationStateList(h.store, ws()).value.map((s) => [s.Datacenter, s.CreateIndex, s.ModifyIndex])).toEqual([["dc2", 1, 2]]);
    expect(federationStateGet(h.store, ws(), "Dc2").value?.Datacenter).toBe("dc2");
    h.apply(del("DC2"));
    expect(federationStateList(h.store, ws()).value).toEqual([]);
  });

  test("the list is in lowercase-datacenter order; no gateways leaves MeshGateways out (omitempty)", () => {
    const h = harness();
    for (const dc of ["dc3", "DC1", "dc2"]) h.apply(upsert(write({ Datacenter: dc, MeshGateways: dc === "dc2" ? [] : undefined })));
    const list = federationStateList(h.store, ws()).value;
    expect(list.map((s) => s.Datacenter)).toEqual(["DC1", "dc2", "dc3"]);
    expect(list.every((s) => !("MeshGateways" in s))).toBe(true);
    expect(JSON.stringify(list[1])).toBe('{"Datacenter":"dc2","UpdatedAt":"2020-05-01T12:00:00Z","PrimaryModifyIndex":42,"CreateIndex":3,"ModifyIndex":3}');
  });

  test("an empty datacenter is refused with Consul's text and writes nothing", () => {
    const h = harness();
    h.apply(upsert(write()));
    const before = tables(h);
    expect(h.apply(upsert(write({ Datacenter: "" })))).toEqual({ type: "error", error: "missing datacenter on federation state" });
    expect(h.apply(upsert(write({ Datacenter: "" }), 0))).toEqual({ type: "error", error: "missing datacenter on federation state" });
    expect(tables(h)).toBe(before);
  });

  test("deleting a missing state is a no-op that leaves the table index alone", () => {
    const h = harness();
    h.apply(upsert(write()));
    expect(h.apply(del("dc9"))).toEqual(ok);
    expect(tableIndex(h)).toBe(1);
    expect(h.apply(del("dc2"))).toEqual(ok);
    expect(federationStateGet(h.store, ws(), "dc2")).toEqual({ index: 3, value: null });
  });

  test("CAS: an upsert with 0 only creates, otherwise it must name the stored ModifyIndex; so must a delete", () => {
    const h = harness();
    expect(h.apply(upsert(write(), 5))).toEqual({ type: "cas", ok: false });
    expect(h.apply(upsert(write(), 0))).toEqual({ type: "cas", ok: true });
    expect(h.apply(upsert(write({ UpdatedAt: "2020-06-01T00:00:00Z" }), 0))).toEqual({ type: "cas", ok: false });
    expect(h.apply(upsert(write({ UpdatedAt: "2020-06-01T00:00:00Z" }), 2))).toEqual({ type: "cas", ok: true });
    expect(federationStateGet(h.store, ws(), "dc2").value).toMatchObject({ UpdatedAt: "2020-06-01T00:00:00Z", CreateIndex: 2, ModifyIndex: 4 });
    expect(h.apply(del("dc2", 2))).toEqual({ type: "cas", ok: false });
    expect(h.apply(del("dc9", 0))).toEqual({ type: "cas", ok: false });
    expect(tableIndex(h)).toBe(4);
    expect(h.apply(del("dc2", 4))).toEqual({ type: "cas", ok: true });
    expect(federationStateList(h.store, ws())).toEqual({ index: 7, value: [] });
  });

  test("a write wakes blocked readers of the table; a write to another table does not", async () => {
    const h = harness();
    h.apply(upsert(write({ Datacenter: "dc1" })));
    const outcomes: string[] = [];
    for (const read of [federationStateList, (s: typeof h.store, w: ReturnType<typeof ws>) => federationStateGet(s, w, "dc2")]) {
      const w = ws();
      read(h.store, w);
      void waitFor(w, { clock: h.clock, timeoutMs: 60_000 }).then((o) => outcomes.push(o));
    }
    h.apply({ type: "kv", op: "set", entry: { Key: "k" } });
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(outcomes).toEqual([]);
    h.apply(upsert(write({ Datacenter: "dc2" })));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(outcomes).toEqual(["changed", "changed"]);
  });
});

describe("codec", () => {
  test("round-trips upserts and deletes, with and without cas", () => {
    const cmds: StateCommand[] = [upsert(write()), upsert(write({ MeshGateways: undefined, PrimaryModifyIndex: 0 }), 0), del("dc2"), del("dc2", 9)];
    for (const c of cmds) expect(decodeCommand(encodeCommand(c))).toEqual(c);
  });

  test("drops a state's Raft indexes, a null MeshGateways and null Checks, and keeps Consul's field order", () => {
    const raw = { type: "federation-state", op: "upsert", state: { ModifyIndex: 3, PrimaryModifyIndex: 1, UpdatedAt: "2020-05-01T12:00:00Z", MeshGateways: null, Datacenter: "dc2", CreateIndex: 2 } };
    const cmd = decodeCommand(utf8(JSON.stringify(raw)));
    expect(JSON.stringify(cmd)).toBe('{"type":"federation-state","op":"upsert","state":{"Datacenter":"dc2","UpdatedAt":"2020-05-01T12:00:00Z","PrimaryModifyIndex":1}}');
    const withNullChecks = { ...raw, state: { ...raw.state, MeshGateways: [{ ...gateway(), Checks: null }] } };
    expect((decodeCommand(utf8(JSON.stringify(withNullChecks))) as { state: FederationStateWrite }).state.MeshGateways![0]!.Checks).toEqual([]);
  });

  test.each([
    ["an unknown op", { op: "cas", state: write() }, "federation-state.op must be upsert or delete"],
    ["no state", { op: "upsert" }, "federation-state.state must be an object"],
    ["a datacenter that is not a string", { op: "upsert", state: { ...write(), Datacenter: 2 } }, "federation-state.state.Datacenter must be a string"],
    ["a time that is not RFC 3339", { op: "upsert", state: { ...write(), UpdatedAt: "yesterday" } }, "federation-state.state.UpdatedAt must be an RFC 3339 time"],
    ["a negative PrimaryModifyIndex", { op: "upsert", state: { ...write(), PrimaryModifyIndex: -1 } }, "federation-state.state.PrimaryModifyIndex must be a non-negative integer"],
    ["gateways that are not a list", { op: "upsert", state: { ...write(), MeshGateways: {} } }, "federation-state.state.MeshGateways must be an array or null"],
    ["a gateway without a node", { op: "upsert", state: { ...write(), MeshGateways: [{ ...gateway(), Node: null }] } }, "federation-state.state.MeshGateways[0].Node must be an object"],
    ["a node without an address", { op: "upsert", state: { ...write(), MeshGateways: [{ ...gateway(), Node: { ...gateway().Node, Address: 1 } }] } }, "MeshGateways[0].Node.Address must be a string"],
    ["a service of an unknown kind", { op: "upsert", state: { ...write(), MeshGateways: [gateway({}, { Kind: "bridge" as never })] } }, 'MeshGateways[0].Service.Kind "bridge" is not a service kind'],
    ["a service without an ID", { op: "upsert", state: { ...write(), MeshGateways: [gateway({}, { ID: undefined as never })] } }, "MeshGateways[0].Service.ID must be a string"],
    ["a check in no status", { op: "upsert", state: { ...write(), MeshGateways: [{ ...gateway(), Checks: [{ CheckID: "c", Node: "n", Status: "fine" }] }] } }, "MeshGateways[0].Checks[0].Status must be passing, warning or critical"],
    ["a delete without a datacenter", { op: "delete" }, "federation-state.datacenter must be a string"],
    ["a negative cas", { op: "delete", datacenter: "dc2", cas: -1 }, "federation-state.cas must be a non-negative integer"],
  ])("refuses %s", (_: string, body: Record<string, unknown>, message: string) => {
    expect(() => decodeCommand(utf8(JSON.stringify({ type: "federation-state", ...body })))).toThrow(message);
  });

  test("an index past 2^53 is exact in the log (a bigint) and refused, not rounded", () => {
    const json = `{"type":"federation-state","op":"upsert","state":{"Datacenter":"dc2","UpdatedAt":"2020-05-01T12:00:00Z","PrimaryModifyIndex":18446744073709551615}}`;
    expect(() => decodeCommand(utf8(json))).toThrow("federation-state.state.PrimaryModifyIndex must be a non-negative integer");
    expect(() => decodeCommand(utf8('{"type":"federation-state","op":"delete","datacenter":"dc2","cas":9007199254740993}'))).toThrow("federation-state.cas must be a non-negative integer");
  });
});

describe("snapshots", () => {
  function withStates() {
    const h = harness();
    h.apply(upsert(write({ Datacenter: "dc1", PrimaryModifyIndex: 0, MeshGateways: undefined })));
    h.apply(upsert(write({ Datacenter: "dc2", PrimaryModifyIndex: 900 })));
    return h;
  }

  test("federation states and their table index survive a snapshot, pass the restore checks and keep working", () => {
    const h = withStates();
    const snap = h.store.snapshot();
    expect(() => checkSnapshot(snap)).not.toThrow();
    const copy = createStateStore({ clock: simClock() });
    copy.restore(snap);
    expect(copy.snapshot()).toEqual(snap);
    expect(federationStateList(copy, ws())).toEqual(federationStateList(h.store, ws()));
    copy.apply(3, upsert(write({ Datacenter: "DC1" })));
    expect(federationStateGet(copy, ws(), "dc1")).toMatchObject({ index: 3, value: { CreateIndex: 1, ModifyIndex: 3 } });
  });

  test("an integer past 2^53 inside a gateway's proxy Config stays exact through the log and a snapshot", () => {
    const h = harness();
    const big = text(encodeCommand(upsert(write({ MeshGateways: [gateway({}, { Proxy: { MeshGateway: {}, Expose: {}, Config: { n: 1 } } })] }))))
      .replace('"Config":{"n":1}', '"Config":{"n":18446744073709551615}');
    expect(h.store.apply(1, decodeCommand(utf8(big)))).toEqual(ok);
    const snap = h.store.snapshot();
    expect(text(snap)).toContain('"n":18446744073709551615');
    const copy = createStateStore({ clock: simClock() });
    copy.restore(snap);
    expect(copy.snapshot()).toEqual(snap);
    expect(federationStateGet(copy, ws(), "dc2").value?.MeshGateways?.[0]?.Service.Proxy.Config).toEqual({ n: 18446744073709551615n });
  });

  test("a snapshot from before federation states restores an empty table", () => {
    const doc = JSON.parse(text(withStates().store.snapshot()));
    delete doc.federationStates;
    doc.indexes = [];
    const copy = createStateStore({ clock: simClock() });
    copy.restore(utf8(JSON.stringify(doc)));
    expect(federationStateList(copy, ws())).toEqual({ index: 0, value: [] });
  });

  test("the restore checks refuse bad federation-state rows", () => {
    const doc = JSON.parse(text(withStates().store.snapshot()));
    const refused = (patch: (d: typeof doc) => void) => {
      const d = structuredClone(doc);
      patch(d);
      try {
        checkSnapshot(utf8(JSON.stringify(d)));
        return "accepted";
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refused((d) => d.federationStates.push({ ...d.federationStates[1], Datacenter: "DC2" })))
      .toBe('invalid snapshot: federationStates[2] repeats the federation state of datacenter "DC2"');
    expect(refused((d) => (d.federationStates[0].ModifyIndex = 99))).toBe("invalid snapshot: federationStates[0].ModifyIndex (99) is above the snapshot's lastIndex (2)");
    expect(refused((d) => delete d.federationStates[0].CreateIndex)).toBe("invalid snapshot: federationStates[0].CreateIndex must be a non-negative integer");
    expect(refused((d) => (d.federationStates[1].UpdatedAt = "now"))).toBe("invalid snapshot: federationStates[1].UpdatedAt must be an RFC 3339 time");
    expect(refused((d) => (d.federationStates[1].MeshGateways[0].Service.Port = "443"))).toBe("invalid snapshot: federationStates[1].MeshGateways[0].Service.Port must be a number");
    expect(refused((d) => (d.federationStates = {}))).toBe("invalid snapshot: federationStates must be an array");
    // PrimaryModifyIndex is the primary's: it may be past this snapshot's lastIndex.
    expect(refused((d) => (d.federationStates[1].PrimaryModifyIndex = 10_000))).toBe("accepted");
  });

  test("restoring a snapshot with two states for one datacenter fails and changes nothing", () => {
    const h = withStates();
    const doc = JSON.parse(text(h.store.snapshot()));
    doc.federationStates.push({ ...doc.federationStates[0], Datacenter: "DC1" });
    const before = h.store.snapshot();
    expect(() => h.store.restore(utf8(JSON.stringify(doc)))).toThrow('invalid state snapshot: federationStates[2] repeats datacenter "DC1"');
    expect(h.store.snapshot()).toEqual(before);
  });
});
