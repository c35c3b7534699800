import { describe, expect, test } from "bun:test";
import { bindUdp } from "./udp.ts";
import type { UdpPeer } from "./udp.ts";

const HOST = "127.0.0.1";

describe("udp", () => {
  test("round trip between two sockets on port 0", async () => {
    const server = await bindUdp({ host: HOST, port: 0, onMessage: (data, from) => void server.send(data, from.port, from.address) });
    let resolveEcho!: (v: { data: Uint8Array; from: UdpPeer }) => void;
    const echoed = new Promise<{ data: Uint8Array; from: UdpPeer }>((r) => { resolveEcho = r; });
    const client = await bindUdp({ host: HOST, port: 0, onMessage: (data, from) => resolveEcho({ data, from }) });
    try {
      expect(server.port).toBeGreaterThan(0);
      expect(client.port).not.toBe(server.port);
      await client.send(new Uint8Array([1, 2, 3, 250]), server.port, HOST);
      const { data, from } = await echoed;
      expect([...data]).toEqual([1, 2, 3, 250]);
      expect(from).toEqual({ address: HOST, port: server.port });
    } finally {
      await client.close();
      await server.close();
    }
  });

  test("a burst arrives complete (order not assumed)", async () => {
    const got: number[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => { done = r; });
    const rx = await bindUdp({ host: HOST, port: 0, onMessage: (d) => { got.push(d[0]!); if (got.length === 20) done(); } });
    const tx = await bindUdp({ host: HOST, port: 0, onMessage: () => {} });
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => tx.send(new Uint8Array([i]), rx.port, HOST)));
      await all;
      expect([...got].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    } finally {
      await tx.close();
      await rx.close();
    }
  });

  test("send after close rejects; close is idempotent; bind conflict rejects", async () => {
    const a = await bindUdp({ host: HOST, port: 0, onMessage: () => {} });
    await expect(bindUdp({ host: HOST, port: a.port, onMessage: () => {} })).rejects.toThrow(`bind udp ${HOST}:${a.port}`);
    await a.close();
    await a.close();
    await expect(a.send(new Uint8Array([1]), a.port, HOST)).rejects.toThrow("socket closed");
  });
});
