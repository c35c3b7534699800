import { describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { seededRng } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import type { GossipStream } from "./transport.ts";
import { createMemoryNetwork } from "./transport_memory.ts";

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(opts: { loss?: number } = {}) {
  const clock = simClock();
  const net = createMemoryNetwork({ clock, rng: seededRng(5), latencyMs: [1, 20], ...opts });
  const inbox = new Map<string, Array<{ from: string; bytes: number[] }>>();
  const accepted = new Map<string, GossipStream[]>();
  const bind = (addr: string) => {
    const t = net.transport(addr);
    inbox.set(addr, []);
    accepted.set(addr, []);
    t.listen({ packet: (from, b) => inbox.get(addr)!.push({ from, bytes: [...b] }), stream: (s) => accepted.get(addr)!.push(s) });
    return t;
  };
  return { clock, net, inbox, accepted, bind };
}

describe("memory network", () => {
  test("packets arrive after a latency, possibly reordered, with the sender's address", () => {
    const { clock, inbox, bind } = setup();
    const a = bind("a");
    bind("b");
    for (let i = 0; i < 20; i++) void a.sendPacket("b", new Uint8Array([i]));
    expect(inbox.get("b")).toEqual([]);
    clock.advance(25);
    const got = inbox.get("b")!;
    expect(got.every((p) => p.from === "a")).toBe(true);
    expect(got.map((p) => p.bytes[0]).sort((x, y) => x! - y!)).toEqual([...Array(20).keys()]);
    expect(got.map((p) => p.bytes[0])).not.toEqual([...Array(20).keys()]);
  });

  test("loss, closed ends and blocked pairs drop packets", async () => {
    const lossy = setup({ loss: 0.5 });
    const a = lossy.bind("a");
    lossy.bind("b");
    for (let i = 0; i < 100; i++) void a.sendPacket("b", new Uint8Array([1]));
    lossy.clock.advance(25);
    expect(lossy.net.stats.dropped + lossy.net.stats.delivered).toBe(100);
    expect(lossy.inbox.get("b")!.length).toBeGreaterThan(20);
    expect(lossy.inbox.get("b")!.length).toBeLessThan(80);

    const { clock, net, inbox, bind } = setup();
    const x = bind("x");
    const y = bind("y");
    net.setBlocked("x", "y", true);
    void x.sendPacket("y", new Uint8Array([1]));
    clock.advance(25);
    net.setBlocked("x", "y", false);
    await y.close();
    void x.sendPacket("y", new Uint8Array([2]));
    clock.advance(25);
    expect(inbox.get("y")).toEqual([]);
    await expect(x.sendPacket("y", new Uint8Array(70_000))).rejects.toThrow(/exceeds/);
  });

  test("streams deliver bytes in order across random chunks, then a clean end", async () => {
    const { clock, accepted, bind } = setup();
    const a = bind("a");
    bind("b");
    let st: GossipStream | undefined;
    void a.dialStream("b", 1000).then((s) => (st = s));
    clock.advance(25);
    await flush();
    const server = accepted.get("b")![0]!;
    expect(server.remote).toBe("a");
    expect(st!.remote).toBe("b");
    const payload = seededRng(9).bytes(5000);
    await st!.write(payload.subarray(0, 2500));
    await st!.write(payload.subarray(2500));
    st!.close();
    const chunks: Uint8Array[] = [];
    let end: Error | undefined | null = null;
    server.read({ data: (c) => chunks.push(c), end: (e) => (end = e) });
    clock.advance(100);
    expect(chunks.length).toBeGreaterThan(2);
    expect(Buffer.concat(chunks).equals(Buffer.from(payload))).toBe(true);
    expect(end).toBeUndefined();
    await expect(st!.write(new Uint8Array(1))).rejects.toThrow(/closed/);
  });

  test("abort resets the peer; dialing a closed address is refused; closing aborts open streams", async () => {
    const { clock, accepted, bind } = setup();
    const a = bind("a");
    const b = bind("b");
    let refused: unknown;
    a.dialStream("nobody", 1000).catch((e) => (refused = e));
    let st: GossipStream | undefined;
    void a.dialStream("b", 1000).then((s) => (st = s));
    clock.advance(25);
    await flush();
    expect(String(refused)).toContain("refused");
    const server = accepted.get("b")![0]!;
    let serverEnd: Error | undefined | null = null;
    server.read({ data() {}, end: (e) => (serverEnd = e) });
    let clientEnd: Error | undefined | null = null;
    st!.read({ data() {}, end: (e) => (clientEnd = e) });
    await b.close();
    expect(serverEnd).toBeInstanceOf(Error);
    clock.advance(25);
    expect(clientEnd).toBeInstanceOf(Error);
    expect(() => b.close()).not.toThrow();
  });
});
