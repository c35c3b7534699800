/**
 * The wanfed transport's outbound side over in-memory connections and a simulated clock: routing,
 * the packet pool (reuse, failure marking, idle reaping), "no path" and dial failures, streams, close.
 * Chunking of in-memory connections is drawn from the seed in each test's name.
 */
import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { runSimTimers, simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { GatewayLocator } from "./locator.ts";
import { WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./names.ts";
import { WanGossipPacketDecoder } from "./packet_framing.ts";
import { NoGatewayError, type GatewayResolution } from "./wanfed_dialer.ts";
import { collect, fakeDial, recordingTransport } from "./wanfed_fixtures.test.ts";
import { wanfedRoute } from "./wanfed_route.ts";
import { createWanfedTransport } from "./wanfed_transport.ts";

const run = (clock: SimClock, ms: number, until?: () => boolean) => runSimTimers(clock, ms, until);
const bytes = (...b: number[]) => new Uint8Array(b);
const silent = silentLogger();
const decodeAll = (all: Uint8Array) => new WanGossipPacketDecoder().push(all).map((p) => [...p]);

/** Tracks a promise without awaiting it. */
function watch<T>(p: Promise<T>): { state: "pending" | "resolved" | "rejected"; error?: Error } {
  const w: { state: "pending" | "resolved" | "rejected"; error?: Error } = { state: "pending" };
  p.then(() => void (w.state = "resolved"), (e: Error) => Object.assign(w, { state: "rejected", error: e }));
  return w;
}

/** Server s1 of dc1 (10.1.0.1:8302); members of dc2 at 10.2.0.x; dc2's gateway (as the locator would pick) gw2:8443. */
function setup(seed: number, options: {
  behaviour?: () => "ok" | "fail" | "hold";
  resolve?: (dc: string) => GatewayResolution;
  domain?: string;
  writeTimeoutMs?: number;
} = {}) {
  const clock = simClock();
  const rng = seededRng(seed);
  const local = recordingTransport("10.1.0.1:8302");
  const { dial, calls } = fakeDial(clock, rng, options.behaviour);
  const names = new Map([
    ["10.1.0.2:8302", "s2.dc1"],
    ["10.2.0.1:8302", "s1.dc2"],
    ["10.2.0.2:8302", "s2.dc2"],
  ]);
  const resolved: string[] = [];
  const transport = createWanfedTransport({
    local, localDc: "dc1", domain: options.domain ?? "consul",
    nameOf: (addr) => names.get(addr),
    resolveGateway: options.resolve ?? ((dc) => (resolved.push(dc), { ok: true, address: `gw-${dc}:8443` })),
    dial, clock, logger: silent, writeTimeoutMs: options.writeTimeoutMs,
  });
  return { clock, local, calls, names, resolved, transport };
}

describe("routing (wanfedRoute)", () => {
  const routing = { localDc: "dc1", domain: "consul", nameOf: (a: string) => ({ "10.0.0.2:8302": "s2.dc1", "10.2.0.1:8302": "s1.dc2", "10.9.9.9:8302": "s1.a.dc2" } as Record<string, string>)[a] };
  const rows: [string, string, unknown][] = [
    ["a member of this datacenter: the ordinary transport", "10.0.0.2:8302", { via: "local", addr: "10.0.0.2:8302" }],
    ["an address the pool does not know: the ordinary transport", "10.7.0.1:8302", { via: "local", addr: "10.7.0.1:8302" }],
    ["a member of another datacenter: its gateway, SNI <node>.server.<dc>.<domain>", "10.2.0.1:8302",
      { via: "gateway", name: "s1.dc2", node: "s1", dc: "dc2", sni: "s1.server.dc2.consul" }],
    ["the join placeholder *.<primary>/192.0.2.2: any server of the primary", "*.dc2/192.0.2.2:8302",
      { via: "gateway", name: "*.dc2", node: "*", dc: "dc2", sni: "server.dc2.consul" }],
    ["name/addr of this datacenter: the address, over the ordinary transport", "s2.dc1/10.0.0.2:8302", { via: "local", addr: "10.0.0.2:8302" }],
    ["name/addr names win over the pool's view", "s3.dc3/10.0.0.2:8302", { via: "gateway", name: "s3.dc3", node: "s3", dc: "dc3", sni: "s3.server.dc3.consul" }],
  ];
  for (const [name, to, want] of rows) test(name, () => expect(wanfedRoute(to, routing)).toEqual(want as never));

  const named: [string, string, string, unknown][] = [
    ["the member name wins over the pool's view of the address", "10.2.0.1:8302", "s7.dc3",
      { via: "gateway", name: "s7.dc3", node: "s7", dc: "dc3", sni: "s7.server.dc3.consul" }],
    ["a member name of this datacenter: the address, over the ordinary transport", "10.2.0.1:8302", "s1.dc1", { via: "local", addr: "10.2.0.1:8302" }],
    ["an address the pool does not know, with a member name: its gateway", "10.7.0.1:8302", "s1.dc2",
      { via: "gateway", name: "s1.dc2", node: "s1", dc: "dc2", sni: "s1.server.dc2.consul" }],
    ["the member name wins over a name/addr form too", "s3.dc3/10.0.0.2:8302", "s2.dc2",
      { via: "gateway", name: "s2.dc2", node: "s2", dc: "dc2", sni: "s2.server.dc2.consul" }],
    ["an empty member name counts as none", "10.2.0.1:8302", "", { via: "gateway", name: "s1.dc2", node: "s1", dc: "dc2", sni: "s1.server.dc2.consul" }],
  ];
  for (const [name, to, toName, want] of named) test(name, () => expect(wanfedRoute(to, routing, toName)).toEqual(want as never));

  test("a given member name is used without asking the pool", () => {
    const asked: string[] = [];
    const counting = { ...routing, nameOf: (a: string) => (asked.push(a), routing.nameOf(a)) };
    expect(wanfedRoute("10.2.0.1:8302", counting, "s1.dc2")).toMatchObject({ via: "gateway", name: "s1.dc2" });
    expect(asked).toEqual([]);
    expect(wanfedRoute("10.2.0.1:8302", counting)).toMatchObject({ via: "gateway", name: "s1.dc2" });
    expect(asked).toEqual(["10.2.0.1:8302"]);
  });

  test("bad names are refused with memberlist's and Consul's messages", () => {
    expect(() => wanfedRoute("/10.0.0.1:8302", routing)).toThrow('gossip address "/10.0.0.1:8302": empty node name provided');
    expect(() => wanfedRoute("s1.example.dc2/10.0.0.1:8302", routing)).toThrow("node name does not encode a datacenter: s1.example.dc2");
    expect(() => wanfedRoute("10.9.9.9:8302", routing)).toThrow("node name does not encode a datacenter: s1.a.dc2");
    expect(() => wanfedRoute("10.2.0.1:8302", routing, "node1.example.com")).toThrow("node name does not encode a datacenter: node1.example.com");
    expect(() => wanfedRoute("10.2.0.1:8302", routing, "s1")).toThrow(RangeError);
  });

  test("the domain's trailing dot is dropped from the SNI", () => {
    expect(wanfedRoute("10.2.0.1:8302", { ...routing, domain: "example.com." })).toMatchObject({ sni: "s1.server.dc2.example.com" });
  });
});

describe("wanfed transport: sending", () => {
  test("seed 1: same datacenter and unknown addresses go to the local transport unchanged, with no gateway lookup", async () => {
    const { local, calls, resolved, transport } = setup(1);
    await transport.sendPacket("10.1.0.2:8302", bytes(1));
    await transport.sendPacket("10.8.0.1:8302", bytes(2));
    await transport.sendPacket("s2.dc1/10.1.0.2:8302", bytes(3));
    await expect(transport.dialStream("10.1.0.2:8302", 500)).rejects.toThrow("recording transport: dial 10.1.0.2:8302");
    expect(local.packets.map(([to, b]) => [to, [...b]])).toEqual([["10.1.0.2:8302", [1]], ["10.8.0.1:8302", [2]], ["10.1.0.2:8302", [3]]]);
    expect(local.dialed).toEqual(["10.1.0.2:8302"]);
    expect(calls).toEqual([]);
    expect(resolved).toEqual([]);
    expect(transport.localAddr).toBe("10.1.0.1:8302");
    expect(transport.maxPacketBytes).toBe(65_507);
  });

  test("seed 4: retireConnections drops the pooled connections; the next packet asks the locator and dials again", async () => {
    const { clock, calls, resolved, transport } = setup(4);
    await run(clock, 0);
    const first = transport.sendPacket("10.2.0.1:8302", bytes(1));
    await run(clock, 5);
    await first;
    expect(transport.retireConnections()).toBe(1);
    expect(transport.stats().pool.open).toBe(0);
    const again = transport.sendPacket("10.2.0.1:8302", bytes(2));
    await run(clock, 5);
    await again;
    expect([calls.length, resolved]).toEqual([2, ["dc2", "dc2"]]);
    expect(transport.retireConnections()).toBe(1);
    expect(transport.retireConnections()).toBe(0);
    await transport.close();
  });

  for (const seed of [2, 3]) {
    test(`seed ${seed}: packets to another datacenter go through its gateway as frames on one pooled connection`, async () => {
      const { clock, local, calls, resolved, transport } = setup(seed);
      await run(clock, 0);
      const first = transport.sendPacket("10.2.0.1:8302", bytes(1, 2, 3));
      const concurrent = [transport.sendPacket("10.2.0.1:8302", bytes(4)), transport.sendPacket("10.2.0.1:8302", bytes())];
      await run(clock, 5);
      await Promise.all([first, ...concurrent]);
      for (let i = 0; i < 5; i++) await transport.sendPacket("10.2.0.1:8302", bytes(10 + i));
      expect(calls.map((c) => [c.gateway, c.sni, c.alpn, c.timeoutMs])).toEqual([["gw-dc2:8443", "s1.server.dc2.consul", WAN_GOSSIP_PACKET_ALPN, 10_000]]);
      expect(resolved).toEqual(["dc2"]); // the locator is asked per dial, not per packet (Consul's pool)
      const far = collect(calls[0]!.server!);
      await run(clock, 10);
      expect(decodeAll(far.bytes())).toEqual([[1, 2, 3], [4], [], [10], [11], [12], [13], [14]]);
      expect(local.packets).toEqual([]);

      // A name/addr address shares the pool entry of that member's name.
      const viaName = transport.sendPacket("s2.dc2/198.51.100.7:8302", bytes(9));
      const second = transport.sendPacket("10.2.0.2:8302", bytes(10));
      await run(clock, 5);
      await Promise.all([viaName, second]);
      expect(calls.map((c) => c.sni)).toEqual(["s1.server.dc2.consul", "s2.server.dc2.consul"]);
      expect(transport.stats().pool).toEqual({ dials: 2, reused: 8, failed: 0, reaped: 0, open: 2 });
      expect(transport.stats().gatewayPacketsSent).toBe(10);
      await transport.close();
    });
  }

  test("seed 20: two datacenters' servers at the same address: the member name picks the datacenter, not the pool's view", async () => {
    const { clock, local, calls, names, resolved, transport } = setup(20);
    names.set("10.0.0.5:8302", "s5.dc2"); // dc1, dc2 and dc3 all have a server at 10.0.0.5; the pool's view names one
    const sends = [
      transport.sendPacket("10.0.0.5:8302", bytes(1), "s5.dc2"),
      transport.sendPacket("10.0.0.5:8302", bytes(2), "s5.dc3"),
      transport.sendPacket("10.0.0.5:8302", bytes(3), "s5.dc1"),
      transport.sendPacket("10.0.0.5:8302", bytes(4), "s5.dc3"),
    ];
    await run(clock, 5);
    await Promise.all(sends);
    expect(calls.map((c) => [c.gateway, c.sni, c.alpn])).toEqual([
      ["gw-dc2:8443", "s5.server.dc2.consul", WAN_GOSSIP_PACKET_ALPN],
      ["gw-dc3:8443", "s5.server.dc3.consul", WAN_GOSSIP_PACKET_ALPN],
    ]);
    const [toDc2, toDc3] = [collect(calls[0]!.server!), collect(calls[1]!.server!)];
    await run(clock, 10);
    expect(decodeAll(toDc2.bytes())).toEqual([[1]]);
    expect(decodeAll(toDc3.bytes())).toEqual([[2], [4]]);
    // This datacenter's own 10.0.0.5 over the ordinary transport, which is handed the name too.
    expect(local.packets.map(([to, b]) => [to, [...b]])).toEqual([["10.0.0.5:8302", [3]]]);
    expect(local.names).toEqual([["packet", "s5.dc1"]]);

    const dialing = transport.dialStream("10.0.0.5:8302", 2000, "s5.dc3");
    await run(clock, 5);
    expect((await dialing).remote).toBe("s5.dc3 via gw-dc3:8443");
    expect(calls[2]).toMatchObject({ gateway: "gw-dc3:8443", sni: "s5.server.dc3.consul", alpn: WAN_GOSSIP_STREAM_ALPN });
    await expect(transport.dialStream("10.0.0.5:8302", 500, "s5.dc1")).rejects.toThrow("recording transport: dial 10.0.0.5:8302");
    expect(local.names.at(-1)).toEqual(["dial", "s5.dc1"]);

    // No name (a join to a bare address): the pool's view decides.
    await transport.sendPacket("10.0.0.5:8302", bytes(5));
    await run(clock, 10);
    expect(decodeAll(toDc2.bytes())).toEqual([[1], [5]]);
    expect(resolved).toEqual(["dc2", "dc3", "dc3"]);
    await expect(transport.sendPacket("10.0.0.5:8302", bytes(6), "s5.rack.dc3")).rejects.toThrow("node name does not encode a datacenter: s5.rack.dc3");
    await transport.close();
  });

  test("seed 4: a failed write marks the connection failed: aborted, and the next packet dials afresh", async () => {
    const { clock, calls, transport } = setup(4);
    const p = transport.sendPacket("10.2.0.1:8302", bytes(1));
    await run(clock, 5);
    await p;
    calls[0]!.client!.failWrites = true;
    await expect(transport.sendPacket("10.2.0.1:8302", bytes(2))).rejects.toThrow("pipe: write failed (injected)");
    expect(calls[0]!.client!.local).toBe("abort");
    expect(transport.stats().pool).toMatchObject({ failed: 1, open: 0 });
    const again = transport.sendPacket("10.2.0.1:8302", bytes(3));
    await run(clock, 5);
    await again;
    expect(calls.length).toBe(2);
    const far = collect(calls[1]!.server!);
    await run(clock, 5);
    expect(decodeAll(far.bytes())).toEqual([[3]]);
    expect(transport.stats().gatewayPacketErrors).toBe(1);
    await transport.close();
  });

  test("seed 5: a write the connection does not accept within the write timeout fails it; sendPacket does not hang", async () => {
    const { clock, calls, transport } = setup(5, { writeTimeoutMs: 3000 });
    const p = transport.sendPacket("10.2.0.1:8302", bytes(1));
    await run(clock, 5);
    await p;
    calls[0]!.client!.holdWrites = true;
    const stuck = watch(transport.sendPacket("10.2.0.1:8302", bytes(2)));
    await run(clock, 2990);
    expect(stuck.state).toBe("pending");
    await run(clock, 20);
    expect(stuck.state).toBe("rejected");
    expect(stuck.error!.message).toBe("write not accepted within 3000 ms");
    expect(calls[0]!.client!.local).toBe("abort");
    await transport.close();
  });

  test("seed 6: a pooled connection the far end closes leaves the pool at once", async () => {
    const { clock, calls, transport } = setup(6);
    const p = transport.sendPacket("10.2.0.1:8302", bytes(1));
    await run(clock, 5);
    await p;
    calls[0]!.server!.close();
    await run(clock, 5);
    expect(transport.stats().pool).toMatchObject({ failed: 1, open: 0 });
    const again = transport.sendPacket("10.2.0.1:8302", bytes(2));
    await run(clock, 5);
    await again;
    expect(calls.length).toBe(2);
    await transport.close();
  });

  test("seed 7: an idle connection is closed after 2 minutes by the 1 s reaper; use keeps it; the reaper stops when the pool is empty", async () => {
    const { clock, calls, transport } = setup(7);
    const p = transport.sendPacket("10.2.0.1:8302", bytes(1));
    await run(clock, 1);
    await p;
    const conn = calls[0]!.client!;
    await run(clock, 100_000);
    await transport.sendPacket("10.2.0.1:8302", bytes(2)); // at ~100 s: idle again from here
    await run(clock, 119_000);
    expect(conn.local).toBeUndefined();
    await run(clock, 2_000); // idle for 2 min, seen by the next reaper round
    expect(conn.local).toBe("close");
    expect(transport.stats().pool).toEqual({ dials: 1, reused: 1, failed: 0, reaped: 1, open: 0 });
    const far = collect(calls[0]!.server!);
    await run(clock, 10);
    expect(far.ended).toBe("clean");
    expect(decodeAll(far.bytes())).toEqual([[1], [2]]);
    expect(clock.pending()).toBe(0);
    await transport.close();
  });

  test("seed 8: no healthy gateway rejects at once with the locator's message, for packets and streams, without dialling", async () => {
    const locator = new GatewayLocator({ localDc: "dc1", primaryDc: "dc1" }, 0);
    const rng = seededRng(8);
    const { calls, transport } = setup(8, { resolve: (dc) => locator.pick(dc, rng) });
    const err = await transport.sendPacket("10.2.0.1:8302", bytes(1)).catch((e: Error) => e);
    expect(err).toBeInstanceOf(NoGatewayError);
    expect((err as NoGatewayError).message).toBe("no path to datacenter dc2: no healthy mesh gateway");
    expect((err as NoGatewayError).datacenter).toBe("dc2");
    await expect(transport.dialStream("*.dc2/192.0.2.2:8302", 1000)).rejects.toThrow("no path to datacenter dc2: no healthy mesh gateway");
    expect(calls).toEqual([]);
    expect(transport.stats()).toMatchObject({ gatewayPacketErrors: 1, pool: { open: 0 } });
    await transport.close();
  });

  test("seed 9: a failed dial rejects every packet waiting for it, naming the SNI and gateway", async () => {
    const { clock, transport } = setup(9, { behaviour: () => "fail" });
    const sends = [watch(transport.sendPacket("10.2.0.1:8302", bytes(1))), watch(transport.sendPacket("10.2.0.1:8302", bytes(2)))];
    await run(clock, 5);
    for (const s of sends) {
      expect(s.state).toBe("rejected");
      expect(s.error!.message).toBe("dial s1.server.dc2.consul via mesh gateway gw-dc2:8443: connection refused");
    }
    expect(transport.stats().pool).toMatchObject({ dials: 1, open: 0 });
    await transport.close();
  });

  test("seed 10: a dial that never answers times out (10 s for packets, the caller's for streams); a late connection is aborted", async () => {
    const { clock, calls, transport } = setup(10, { behaviour: () => "hold" });
    const packet = watch(transport.sendPacket("10.2.0.1:8302", bytes(1)));
    const stream = watch(transport.dialStream("10.2.0.2:8302", 2000));
    await run(clock, 1999);
    expect([packet.state, stream.state]).toEqual(["pending", "pending"]);
    await run(clock, 1);
    expect(stream.error?.message).toBe("dial s2.server.dc2.consul via mesh gateway gw-dc2:8443: timed out after 2000 ms");
    await run(clock, 8000);
    expect(packet.error?.message).toBe("dial s1.server.dc2.consul via mesh gateway gw-dc2:8443: timed out after 10000 ms");
    calls[0]!.complete!(true);
    await run(clock, 1);
    expect(calls[0]!.client!.local).toBe("abort");
    await transport.close();
  });

  test("seed 11: packets over the local transport's limit are refused for every route", async () => {
    const { calls, transport } = setup(11);
    await expect(transport.sendPacket("10.2.0.1:8302", new Uint8Array(65_508))).rejects.toThrow("65508 bytes exceeds 65507");
    await expect(transport.sendPacket("10.1.0.2:8302", new Uint8Array(65_508))).rejects.toThrow("65508 bytes exceeds 65507");
    expect(calls).toEqual([]);
    await transport.close();
  });

  test("seed 12: a bad member name is a local error", async () => {
    const { names, transport } = setup(12);
    names.set("10.2.0.9:8302", "s9.rack.dc2");
    await expect(transport.sendPacket("10.2.0.9:8302", bytes(1))).rejects.toThrow("node name does not encode a datacenter: s9.rack.dc2");
    await expect(transport.dialStream("/10.2.0.9:8302", 100)).rejects.toThrow("empty node name provided");
    await transport.close();
  });
});

describe("wanfed transport: streams to another datacenter", () => {
  for (const seed of [13, 14]) {
    test(`seed ${seed}: a fresh connection per stream with the stream ALPN; bytes both ways`, async () => {
      const { clock, calls, transport } = setup(seed);
      const dialing = transport.dialStream("*.dc2/192.0.2.2:8302", 3000);
      await run(clock, 5);
      const s = await dialing;
      expect(s.remote).toBe("*.dc2 via gw-dc2:8443");
      expect(calls.map((c) => [c.gateway, c.sni, c.alpn, c.timeoutMs])).toEqual([["gw-dc2:8443", "server.dc2.consul", WAN_GOSSIP_STREAM_ALPN, 3000]]);
      const mine = collect(s);
      const far = collect(calls[0]!.server!);
      await s.write(bytes(1, 2, 3));
      await calls[0]!.server!.write(bytes(9, 8));
      calls[0]!.server!.close();
      s.close();
      await run(clock, 10);
      expect([...far.bytes()]).toEqual([1, 2, 3]);
      expect([...mine.bytes()]).toEqual([9, 8]);
      expect([mine.ended, far.ended]).toEqual(["clean", "clean"]);

      const second = transport.dialStream("10.2.0.1:8302", 3000);
      await run(clock, 5);
      await second;
      expect(calls.map((c) => c.sni)).toEqual(["server.dc2.consul", "s1.server.dc2.consul"]);
      expect(transport.stats().gatewayStreams).toBe(2);
      await transport.close();
    });
  }
});

describe("wanfed transport: close", () => {
  test("seed 15: closes pooled connections, in-flight dials, streams and the reaper, then the local transport", async () => {
    let hold = false;
    const { clock, local, calls, transport } = setup(15, { behaviour: () => (hold ? "hold" : "ok") });
    const sent = transport.sendPacket("10.2.0.1:8302", bytes(1));
    const dialing = transport.dialStream("10.2.0.2:8302", 5000);
    await run(clock, 5);
    await sent;
    const stream = await dialing;
    const streamSeen = collect(stream);
    hold = true;
    const waiting = watch(transport.sendPacket("*.dc3/192.0.2.2:8302", bytes(2)));
    await run(clock, 1);
    expect(waiting.state).toBe("pending");

    await transport.close();
    await run(clock, 0);
    expect(waiting.state).toBe("rejected");
    expect(waiting.error!.message).toContain("wanfed transport closed while dialling");
    expect(calls[0]!.client!.local).toBe("abort");
    expect(calls[1]!.client!.local).toBe("abort");
    expect(streamSeen.ended).toBe("pipe: aborted locally");
    expect(local.closed).toBe(true);
    calls[2]!.complete!(true);
    await run(clock, 1);
    expect(calls[2]!.client!.local).toBe("abort");
    await run(clock, 10);
    expect(clock.pending()).toBe(0); // no reaper, no timers left
    await expect(transport.sendPacket("10.2.0.1:8302", bytes(3))).rejects.toThrow("transport closed");
    await expect(transport.dialStream("10.2.0.1:8302", 100)).rejects.toThrow("transport closed");
    await transport.close(); // idempotent
  });
});
