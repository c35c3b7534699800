import { describe, expect, test } from "bun:test";
import type { Message } from "../raft/index.ts";
import { EMPTY_CONF_STATE } from "../raft/index.ts";
import { createMemoryNetwork } from "./transport_memory.ts";

const hb = (from: string, to: string, commit: number): Message => ({ type: "MsgHeartbeat", from, to, term: 1, commit, context: "" });
const snap = { type: "MsgSnap", from: "a", to: "b", term: 1, snapshot: { index: 5, term: 1, confState: EMPTY_CONF_STATE } } as const;

describe("memory transport", () => {
  test("delivers in order, asynchronously, to the addressed node only", async () => {
    const net = createMemoryNetwork();
    const [a, b, c] = ["a", "b", "c"].map((id) => net.join(id));
    const got: Record<string, Message[]> = { a: [], b: [], c: [] };
    a!.onMessage((m) => got.a!.push(m));
    b!.onMessage((m) => { got.b!.push(m); if (m.from === "a") b!.send(hb("b", "a", 100 + (m as { commit: number }).commit)); });
    c!.onMessage((m) => got.c!.push(m));
    a!.send(hb("a", "b", 1));
    a!.send(hb("a", "b", 2));
    expect(got.b).toEqual([]); // never inside send
    await Promise.resolve();
    await Promise.resolve();
    expect(got.b!.map((m) => (m as { commit: number }).commit)).toEqual([1, 2]);
    await Promise.resolve();
    expect(got.a!.map((m) => (m as { commit: number }).commit)).toEqual([101, 102]);
    expect(got.c).toEqual([]);
    expect(net.members()).toEqual(["a", "b", "c"]);
  });

  test("snapshots: true with a copied buffer when delivered, false for unknown or closed peers", async () => {
    const net = createMemoryNetwork();
    const a = net.join("a"), b = net.join("b");
    const data = new Uint8Array([1, 2, 3]);
    let received: Uint8Array | undefined;
    b.onSnapshot((m, d) => { expect(m).toEqual(snap); received = d; });
    expect(await a.sendSnapshot("b", snap, data)).toBe(true);
    expect([...received!]).toEqual([1, 2, 3]);
    expect(received).not.toBe(data);
    expect(await a.sendSnapshot("zz", snap, data)).toBe(false);
    await b.close();
    expect(await a.sendSnapshot("b", snap, data)).toBe(false);
  });

  test("close drops traffic both ways, fails pending snapshots, and lets the id rejoin", async () => {
    const net = createMemoryNetwork();
    const a = net.join("a"), b = net.join("b");
    const got: Message[] = [];
    b.onMessage((m) => got.push(m));
    b.onSnapshot(() => {});
    const pending = a.sendSnapshot("b", snap, new Uint8Array(1));
    a.send(hb("a", "b", 1));
    await a.close();
    expect(await pending).toBe(false);
    expect(got).toEqual([]);
    expect(() => net.join("b")).toThrow("already joined");
    const a2 = net.join("a");
    a2.send(hb("a", "b", 2));
    await Promise.resolve();
    expect(got.map((m) => (m as { commit: number }).commit)).toEqual([2]);
  });
});
