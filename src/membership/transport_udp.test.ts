import { describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { bindUdp, listenTcp, silentLogger } from "../platform/index.ts";
import type { GossipStream, GossipTransport, TransportHandler } from "./transport.ts";
import { createUdpTransport, parseHostPort, withDefaultPort } from "./transport_udp.ts";

const open = (port = 0) => createUdpTransport({ host: "127.0.0.1", port, logger: silentLogger() });

/** A handler whose packets and streams can be awaited. */
function inbox() {
  const packets: Array<{ from: string; bytes: Uint8Array }> = [];
  const streams: GossipStream[] = [];
  let wake = () => {};
  const handler: TransportHandler = {
    packet: (from, bytes) => { packets.push({ from, bytes }); wake(); },
    stream: (s) => { streams.push(s); wake(); },
  };
  const until = async (pred: () => boolean) => {
    while (!pred()) await new Promise<void>((r) => (wake = r));
  };
  return { handler, packets, streams, until };
}

describe("parseHostPort", () => {
  test("host:port and [v6]:port; anything else throws naming the address", () => {
    expect(parseHostPort("127.0.0.1:8301")).toEqual({ host: "127.0.0.1", port: 8301 });
    expect(parseHostPort("[::1]:8302")).toEqual({ host: "::1", port: 8302 });
    expect(parseHostPort("node.example:1")).toEqual({ host: "node.example", port: 1 });
    for (const bad of ["", "host", "::1:80", "h:0", "h:70000", "h:-1", "[::1]"]) expect(() => parseHostPort(bad)).toThrow(/want host:port/);
  });
});

describe("UDP + TCP gossip transport", () => {
  test("binds UDP and TCP on one port and carries packets with the sender's address", async () => {
    const [a, b] = [await open(), await open()];
    const ib = inbox();
    b.listen(ib.handler);
    a.listen(inbox().handler);
    const port = parseHostPort(a.localAddr).port;
    // TCP is listening on the same number as UDP.
    await expect(listenTcp({ host: "127.0.0.1", port, onConnection() {} })).rejects.toThrow(/EADDRINUSE|in use/i);
    await a.sendPacket(b.localAddr, new Uint8Array([1, 2, 3]));
    await ib.until(() => ib.packets.length === 1);
    expect(ib.packets[0]!.from).toBe(a.localAddr);
    expect([...ib.packets[0]!.bytes]).toEqual([1, 2, 3]);
    await expect(a.sendPacket("not an address", new Uint8Array(1))).rejects.toThrow(/want host:port/);
    await expect(a.sendPacket(b.localAddr, new Uint8Array(a.maxPacketBytes + 1))).rejects.toThrow(/exceeds/);
    await Promise.all([a.close(), b.close()]);
  });

  test("streams: bytes both ways, clean close, refused dial, close aborts accepted streams", async () => {
    const [a, b] = [await open(), await open()];
    const ib = inbox();
    b.listen(ib.handler);
    a.listen(inbox().handler);
    const st = await a.dialStream(b.localAddr, 2000);
    expect(st.remote).toBe(b.localAddr);
    await st.write(new Uint8Array([9, 8, 7]));
    await ib.until(() => ib.streams.length === 1);
    const server = ib.streams[0]!;
    const got: Uint8Array[] = [];
    let serverEnded: Error | undefined | null = null;
    let wake = () => {};
    server.read({ data: (c) => { got.push(c.slice()); wake(); }, end: (e) => { serverEnded = e; wake(); } });
    while (Buffer.concat(got).length < 3) await new Promise<void>((r) => (wake = r));
    expect([...Buffer.concat(got)]).toEqual([9, 8, 7]);

    const clientEnd = new Promise<Error | undefined>((resolve) => st.read({ data() {}, end: resolve }));
    await server.write(new Uint8Array([1]));
    st.close();
    while (serverEnded === null) await new Promise<void>((r) => (wake = r));
    expect(serverEnded).toBeUndefined();
    await clientEnd;

    const st2 = await a.dialStream(b.localAddr, 2000);
    const reset = new Promise<Error | undefined>((resolve) => st2.read({ data() {}, end: resolve }));
    await ib.until(() => ib.streams.length === 2);
    await b.close();
    await reset;
    await expect(a.dialStream(b.localAddr, 2000)).rejects.toThrow(/ECONNREFUSED|refused/i);
    await a.close();
    await a.close();
    await expect(a.dialStream(b.localAddr, 2000)).rejects.toThrow(/closed/);
  });

  test("a throwing packet handler is caught; the transport keeps delivering", async () => {
    const t: GossipTransport = await open();
    const sender = await bindUdp({ host: "127.0.0.1", port: 0, onMessage() {} });
    const port = parseHostPort(t.localAddr).port;
    const ib = inbox();
    let threw = 0;
    t.listen({
      packet: (from, bytes) => {
        if (bytes[0] === 0) threw++;
        ib.handler.packet(from, bytes);
        if (bytes[0] === 0) throw new Error("boom");
      },
      stream: ib.handler.stream,
    });
    await sender.send(new Uint8Array([0]), port, "127.0.0.1");
    await ib.until(() => threw === 1);
    await sender.send(new Uint8Array([1]), port, "127.0.0.1");
    await ib.until(() => ib.packets.some((p) => p.bytes[0] === 1));
    await sender.close();
    await t.close();
  });
});

describe("withDefaultPort", () => {
  test("adds the port to an address that names none, IPv6 in brackets; keeps one that does", () => {
    expect(["10.0.0.1", "host.example", "::1", "[::1]", "10.0.0.1:8302", "[fe80::1]:9"].map((a) => withDefaultPort(a, 8301)))
      .toEqual(["10.0.0.1:8301", "host.example:8301", "[::1]:8301", "[::1]:8301", "10.0.0.1:8302", "[fe80::1]:9"]);
  });

  test("keeps memberlist's name/ prefix (a join through the primary's gateways), IPv6 too", () => {
    expect(["*.dc1/192.0.2.2", "*.dc1/::1", "*.dc1/[::1]:9", "s1.dc2/10.0.0.1:8302"].map((a) => withDefaultPort(a, 8302)))
      .toEqual(["*.dc1/192.0.2.2:8302", "*.dc1/[::1]:8302", "*.dc1/[::1]:9", "s1.dc2/10.0.0.1:8302"]);
  });
});
