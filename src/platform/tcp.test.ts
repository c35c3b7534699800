import { describe, expect, test } from "bun:test";
import type * as net from "node:net";
import { dialTcp, formatPeer, listenTcp } from "./tcp.ts";

const HOST = "127.0.0.1";

describe("tcp", () => {
  test("listen on port 0 reports the actual port and data round-trips", async () => {
    const listener = await listenTcp({
      host: HOST,
      port: 0,
      onConnection: (s) => s.on("data", (d) => s.write(d)),
    });
    try {
      expect(listener.port).toBeGreaterThan(0);
      expect(listener.host).toBe(HOST);
      const c = await dialTcp({ host: HOST, port: listener.port, timeoutMs: 2000 });
      const echoed = new Promise<string>((r) => c.once("data", (d) => r(String(d))));
      c.write("hello");
      expect(await echoed).toBe("hello");
      c.destroy();
    } finally {
      await listener.close();
    }
  });

  test("close() destroys accepted connections and resolves", async () => {
    let accepted!: (s: net.Socket) => void;
    const gotSocket = new Promise<net.Socket>((r) => { accepted = r; });
    const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => accepted(s) });
    const c = await dialTcp({ host: HOST, port: listener.port });
    c.on("error", () => {});
    const clientClosed = new Promise((r) => c.once("close", r));
    const serverSide = await gotSocket;
    await listener.close();
    await clientClosed;
    expect(serverSide.destroyed).toBe(true);
    await listener.close(); // idempotent
  });

  test("stopAccepting() refuses new connections but keeps accepted ones open", async () => {
    const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => s.on("data", (d) => s.write(d)) });
    try {
      const c = await dialTcp({ host: HOST, port: listener.port });
      await listener.stopAccepting();
      const echoed = new Promise<string>((r) => c.once("data", (d) => r(String(d))));
      c.write("still here");
      expect(await echoed).toBe("still here");
      await expect(dialTcp({ host: HOST, port: listener.port, timeoutMs: 2000 })).rejects.toThrow("ECONNREFUSED");
      c.destroy();
    } finally {
      await listener.close();
    }
  });

  test("allowHalfOpen: the accepted side can still answer after the peer's FIN", async () => {
    const listener = await listenTcp({
      host: HOST, port: 0, allowHalfOpen: true,
      onConnection: (s) => {
        let got = "";
        s.on("data", (d) => (got += String(d)));
        s.on("end", () => s.end(`got ${got}`));
      },
    });
    try {
      const c = await dialTcp({ host: HOST, port: listener.port, allowHalfOpen: true });
      let reply = "";
      c.on("data", (d) => (reply += String(d)));
      const ended = new Promise((r) => c.once("end", r));
      c.end("question");
      await ended;
      expect(reply).toBe("got question");
      c.destroy();
    } finally {
      await listener.close();
    }
  });

  test("dialing a closed port rejects naming host:port", async () => {
    const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => s.destroy() });
    const port = listener.port;
    await listener.close();
    const err = await dialTcp({ host: HOST, port, timeoutMs: 2000 }).then(() => undefined, (e: unknown) => e as Error & { code?: string });
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toContain(`dial tcp ${HOST}:${port}:`);
    expect(err!.code).toBe("ECONNREFUSED");
  });

  test("listening on a taken port rejects naming the address", async () => {
    const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => s.destroy() });
    try {
      await expect(listenTcp({ host: HOST, port: listener.port, onConnection: () => {} })).rejects.toThrow(
        `listen tcp ${HOST}:${listener.port}`,
      );
    } finally {
      await listener.close();
    }
  });

  test("formatPeer brackets IPv6", () => {
    expect(formatPeer("10.0.0.1", 8300)).toBe("10.0.0.1:8300");
    expect(formatPeer("::1", 8300)).toBe("[::1]:8300");
    expect(formatPeer(undefined, undefined)).toBe("unknown:0");
  });
});
