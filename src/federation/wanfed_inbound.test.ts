/**
 * The wanfed transport's inbound side (what the server port hands over for the two WAN gossip ALPN
 * protocols) over in-memory connections and a simulated clock. Chunking and packet sizes are drawn
 * from the seed in each test's name.
 */
import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { runSimTimers, simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { encodeWanGossipPacket, WAN_GOSSIP_PACKET_MAX_BYTES } from "./packet_framing.ts";
import { collect, pipe, recordingHandler, recordingTransport, type PipeEnd } from "./wanfed_fixtures.test.ts";
import { createWanfedTransport } from "./wanfed_transport.ts";

const run = (clock: SimClock, ms: number, until?: () => boolean) => runSimTimers(clock, ms, until);
const GW = "198.18.0.9:443";

function setup(seed: number, listen = true) {
  const clock = simClock();
  const rng = seededRng(seed);
  const local = recordingTransport("10.1.0.1:8302");
  const transport = createWanfedTransport({
    local, localDc: "dc1", domain: "consul", nameOf: () => undefined,
    resolveGateway: () => ({ ok: false, message: "unused" }),
    dial: () => Promise.reject(new Error("unused")),
    clock, logger: silentLogger(),
  });
  const handler = recordingHandler();
  if (listen) transport.listen(handler);
  /** A connection as the server port would hand it over; the test writes on `client`. */
  const connect = (kind: "packet" | "stream"): PipeEnd => {
    const [client, server] = pipe(clock, rng);
    if (kind === "packet") transport.acceptPacketConnection(server, GW);
    else transport.acceptStreamConnection(server, GW);
    return client;
  };
  return { clock, rng, local, transport, handler, connect };
}

describe("wanfed transport: inbound packet connections", () => {
  for (const seed of [21, 22, 23]) {
    test(`seed ${seed}: frames split at random points arrive as whole packets, in order, from the gateway's address`, async () => {
      const { clock, rng, transport, handler, connect } = setup(seed);
      const client = connect("packet");
      const sent = Array.from({ length: 40 }, (_, i) => Uint8Array.from({ length: rng.int(i % 7 === 0 ? 3000 : 60) }, () => rng.int(256)));
      const stream = new Uint8Array(Buffer.concat(sent.map(encodeWanGossipPacket)));
      // Write in random pieces, a few ms apart, so headers and bodies straddle chunks.
      for (let off = 0; off < stream.length;) {
        const n = 1 + rng.int(200);
        await client.write(stream.subarray(off, off + n));
        off += n;
        await run(clock, rng.int(3));
      }
      await run(clock, 10);
      expect(handler.packets.length).toBe(sent.length);
      expect(handler.packets.every(([from]) => from === GW)).toBe(true);
      expect(handler.packets.map(([, b]) => Buffer.from(b).toString("hex"))).toEqual(sent.map((b) => Buffer.from(b).toString("hex")));
      expect(transport.stats()).toMatchObject({ inboundPackets: 40, inboundPacketConnections: 1 });
      client.close();
      await run(clock, 10);
      expect(client.endSeen).toBe("clean"); // we closed our side too
      expect(transport.stats().inboundPacketConnections).toBe(0);
      await transport.close();
    });
  }

  test("seed 24: a header over 4 MiB resets the connection; packets before it were delivered, nothing after", async () => {
    const { clock, transport, handler, connect } = setup(24);
    const client = connect("packet");
    await client.write(encodeWanGossipPacket(new Uint8Array([1, 2])));
    await run(clock, 10);
    const huge = new Uint8Array(4);
    new DataView(huge.buffer).setUint32(0, WAN_GOSSIP_PACKET_MAX_BYTES + 1, false);
    await client.write(huge);
    await client.write(encodeWanGossipPacket(new Uint8Array([3])));
    await run(clock, 10);
    expect(handler.packets.map(([, b]) => [...b])).toEqual([[1, 2]]);
    expect(client.endSeen).toBe("pipe: connection reset by peer");
    expect(transport.stats().inboundPacketConnections).toBe(0);
    await transport.close();
  });

  test("seed 25: exactly 4 MiB is accepted", async () => {
    const { clock, transport, handler, connect } = setup(25);
    const client = connect("packet");
    await client.write(encodeWanGossipPacket(new Uint8Array(WAN_GOSSIP_PACKET_MAX_BYTES)));
    await run(clock, 50, () => handler.packets.length === 1);
    expect(handler.packets[0]![1].length).toBe(WAN_GOSSIP_PACKET_MAX_BYTES);
    expect(client.endSeen).toBeUndefined();
    await transport.close();
  });

  test("seed 26: no whole packet for 2 minutes closes the connection; each packet restarts the wait", async () => {
    const { clock, transport, handler, connect } = setup(26);
    const client = connect("packet");
    await run(clock, 110_000);
    await client.write(encodeWanGossipPacket(new Uint8Array([1])));
    await run(clock, 115_000); // 225 s since the start, 115 s since the packet
    expect(client.endSeen).toBeUndefined();
    await client.write(encodeWanGossipPacket(new Uint8Array([2])).subarray(0, 3)); // a header begun, never finished
    await run(clock, 5_010);
    expect(client.endSeen).toBe("clean");
    expect(handler.packets.map(([, b]) => [...b])).toEqual([[1]]);
    expect(transport.stats().inboundPacketConnections).toBe(0);
    await transport.close();
  });

  test("seed 27: a connection that ends inside a packet delivers no part of it", async () => {
    const { clock, transport, handler, connect } = setup(27);
    const client = connect("packet");
    const two = new Uint8Array(Buffer.concat([encodeWanGossipPacket(new Uint8Array([1])), encodeWanGossipPacket(new Uint8Array([2, 2, 2]))]));
    await client.write(two.subarray(0, two.length - 1));
    client.close();
    await run(clock, 10);
    expect(handler.packets.map(([, b]) => [...b])).toEqual([[1]]);
    expect(client.endSeen).toBe("clean");
    expect(transport.stats().inboundPacketConnections).toBe(0);
    await transport.close();
  });

  test("seed 28: a handler that throws loses that packet only", async () => {
    const { clock, transport, connect } = setup(28, false);
    const got: number[] = [];
    transport.listen({
      packet(_from, b) {
        if (b[0] === 1) throw new Error("boom");
        got.push(b[0]!);
      },
      stream: (s) => s.abort(),
    });
    const client = connect("packet");
    for (const v of [1, 2, 3]) await client.write(encodeWanGossipPacket(new Uint8Array([v])));
    await run(clock, 10);
    expect(got).toEqual([2, 3]);
    expect(client.endSeen).toBeUndefined();
    await transport.close();
  });

  test("seed 29: before listen and after close, connections are reset at once", async () => {
    const s = setup(29, false);
    const early = s.connect("packet");
    const earlyStream = s.connect("stream");
    await run(s.clock, 10);
    expect([early.endSeen, earlyStream.endSeen]).toEqual(["pipe: connection reset by peer", "pipe: connection reset by peer"]);
    s.transport.listen(s.handler);
    await s.transport.close();
    const late = s.connect("packet");
    const lateStream = s.connect("stream");
    await run(s.clock, 10);
    expect([late.endSeen, lateStream.endSeen]).toEqual(["pipe: connection reset by peer", "pipe: connection reset by peer"]);
    expect(s.handler.packets).toEqual([]);
    expect(s.handler.streams).toEqual([]);
  });

  test("seed 30: listen forwards to the local transport; close resets inbound connections and closes it", async () => {
    const { clock, local, transport, handler, connect } = setup(30);
    expect(local.handler).toBe(handler);
    expect(() => transport.listen(handler)).toThrow("listen called twice");
    const packets = connect("packet");
    const stream = connect("stream");
    await run(clock, 10);
    expect(handler.streams.length).toBe(1);
    await transport.close();
    await run(clock, 10);
    expect([packets.endSeen, stream.endSeen]).toEqual(["pipe: connection reset by peer", "pipe: connection reset by peer"]);
    expect(local.closed).toBe(true);
    expect(clock.pending()).toBe(0);
  });
});

describe("wanfed transport: inbound streams", () => {
  for (const seed of [31, 32]) {
    test(`seed ${seed}: handed to the handler as a GossipStream named by the gateway's address; bytes both ways`, async () => {
      const { clock, transport, handler, connect } = setup(seed);
      const client = connect("stream");
      expect(handler.streams.map((s) => s.remote)).toEqual([GW]);
      const s = handler.streams[0]!;
      const inbound = collect(s);
      const back = collect(client);
      await client.write(new Uint8Array([1, 2, 3, 4, 5]));
      await run(clock, 10);
      expect([...inbound.bytes()]).toEqual([1, 2, 3, 4, 5]);
      await s.write(new Uint8Array([7]));
      s.close();
      await run(clock, 10);
      expect([...back.bytes()]).toEqual([7]);
      expect(back.ended).toBe("clean");
      client.close();
      await run(clock, 10);
      expect(inbound.ended).toBe("clean");
      expect(transport.stats().inboundStreams).toBe(1);
      await transport.close();
    });
  }
});
