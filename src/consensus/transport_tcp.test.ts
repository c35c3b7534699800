import { crc32c } from "./crc32c.ts";
import { afterEach, describe, expect, test } from "bun:test";
import type * as net from "node:net";
import { dialTcp, listenTcp, memoryLogger, seededRng, silentLogger, systemClock } from "../platform/index.ts";
import type { Logger, TcpListener } from "../platform/index.ts";
import type { Message } from "../raft/index.ts";
import { EMPTY_CONF_STATE } from "../raft/index.ts";
import {
  FrameDecoder, FrameKind, encodeFrame, encodeHello, encodeSnapBegin,
} from "./transport_frames.ts";
import type { MessageCodec, PeerEvent, TcpTransport, TcpTransportOptions } from "./transport_tcp.ts";
import { createTcpTransport } from "./transport_tcp.ts";

const HOST = "127.0.0.1";

/** Test codec: JSON, with Uint8Array fields as {"$b64": "..."}. */
const jsonCodec: MessageCodec = {
  encode: (m) => new TextEncoder().encode(JSON.stringify(m, (_k, v: unknown) => v instanceof Uint8Array ? { $b64: Buffer.from(v).toString("base64") } : v)),
  decode: (b) => JSON.parse(new TextDecoder().decode(b), (_k, v: unknown) =>
    v !== null && typeof v === "object" && "$b64" in v ? new Uint8Array(Buffer.from((v as { $b64: string }).$b64, "base64")) : v) as Message,
};

/** Failure guard only: rejects if `p` does not settle within `ms`. */
function within<T>(p: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<never>((_, rej) => { timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms); })])
    .finally(() => clearTimeout(timer));
}

/** Resolves once `pred` holds for the messages received so far. */
class Inbox {
  readonly msgs: Message[] = [];
  private waiters: { pred: (m: Message[]) => boolean; resolve: () => void }[] = [];
  push = (m: Message) => {
    this.msgs.push(m);
    this.waiters = this.waiters.filter((w) => (w.pred(this.msgs) ? (w.resolve(), false) : true));
  };
  until(pred: (m: Message[]) => boolean, what: string): Promise<void> {
    if (pred(this.msgs)) return Promise.resolve();
    return within(new Promise<void>((resolve) => this.waiters.push({ pred, resolve })), what);
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const addrs = new Map<string, { host: string; port: number }>();

interface Node { t: TcpTransport; inbox: Inbox; listener: TcpListener; log: Logger & { lines: string[] } }

async function node(id: string, extra: Partial<TcpTransportOptions> = {}): Promise<Node> {
  const log = memoryLogger();
  const t = createTcpTransport({
    localId: id, codec: jsonCodec, logger: log, clock: systemClock(), rng: seededRng(7),
    resolve: (peer) => addrs.get(peer), backoffBaseMs: 5, backoffMaxMs: 50, ...extra,
  });
  const inbox = new Inbox();
  t.onMessage(inbox.push);
  const listener = await listenTcp({ host: HOST, port: 0, onConnection: (s) => t.accept(s) });
  addrs.set(id, { host: HOST, port: listener.port });
  cleanups.push(() => listener.close(), () => t.close());
  return { t, inbox, listener, log };
}

const hb = (from: string, to: string, commit: number): Message => ({ type: "MsgHeartbeat", from, to, term: 1, commit, context: "" });
const snapMsg = (from: string, to: string) => ({ type: "MsgSnap", from, to, term: 3, snapshot: { index: 42, term: 3, confState: { ...EMPTY_CONF_STATE, voters: ["a", "b"] } } }) as const;

describe("tcp transport", () => {
  test("three nodes exchange messages in every direction, in order, with Uint8Array payloads intact", async () => {
    const ids = ["n1", "n2", "n3"];
    const nodes = await Promise.all(ids.map((id) => node(id)));
    const data = new Uint8Array([0, 1, 2, 250, 255]);
    for (const [i, from] of ids.entries()) {
      for (const to of ids) {
        if (to === from) continue;
        for (let c = 1; c <= 20; c++) nodes[i]!.t.send(hb(from, to, c));
        nodes[i]!.t.send({ type: "MsgApp", from, to, term: 1, index: 0, logTerm: 0, commit: 0, entries: [{ type: "Normal", term: 1, index: 1, data }] });
      }
    }
    for (const [i, id] of ids.entries()) {
      await nodes[i]!.inbox.until((m) => m.length === 42, `42 messages at ${id}`);
      for (const from of ids.filter((x) => x !== id)) {
        const got = nodes[i]!.inbox.msgs.filter((m) => m.from === from);
        expect(got.slice(0, 20).map((m) => (m as { commit: number }).commit)).toEqual(Array.from({ length: 20 }, (_, k) => k + 1));
        const app = got[20]!;
        expect(app.type === "MsgApp" && app.entries[0]!.type === "Normal" && [...app.entries[0]!.data]).toEqual([...data]);
      }
    }
    expect(nodes[0]!.t.stats()).toMatchObject({ sent: 42, dropped: 0, received: 42 });
  });

  test("reconnects with backoff after the peer's listener restarts, and messages flow again", async () => {
    const events: string[] = [];
    let onEvent = (_e: PeerEvent) => {};
    const a = await node("a", { onPeerEvent: (_p, e) => { events.push(e); onEvent(e); } });
    const b = await node("b");
    const next = (want: PeerEvent) => within(new Promise<void>((r) => { onEvent = (e) => { if (e === want) r(); }; }), want);

    a.t.send(hb("a", "b", 1));
    await b.inbox.until((m) => m.length === 1, "first message");
    const disconnected = next("disconnected");
    await b.listener.close(); // also destroys the accepted connection
    await disconnected;

    const dialFailed = next("dial-failed");
    a.t.send(hb("a", "b", 2)); // queued while b is down
    await dialFailed;
    const port = addrs.get("b")!.port;
    const restarted = await listenTcp({ host: HOST, port, onConnection: (s) => b.t.accept(s) });
    cleanups.push(() => restarted.close());
    await b.inbox.until((m) => m.some((x) => (x as { commit: number }).commit === 2), "message after restart");
    a.t.send(hb("a", "b", 3));
    await b.inbox.until((m) => m.some((x) => (x as { commit: number }).commit === 3), "later message");
    expect(events.filter((e) => e === "connected").length).toBe(2);
  });

  test("a snapshot of several MiB arrives intact in chunks and the sender gets true", async () => {
    const a = await node("a");
    const b = await node("b", { maxSnapshotBytes: 64 * 1024 * 1024 });
    const data = seededRng(3).bytes(6 * 1024 * 1024 + 123);
    let got: { msg: Message; data: Uint8Array } | undefined;
    b.t.onSnapshot((msg, d) => { got = { msg, data: d }; });
    // Heartbeats keep flowing on their own connection while the snapshot streams.
    a.t.send(hb("a", "b", 1));
    expect(await within(a.t.sendSnapshot("b", snapMsg("a", "b"), data), "snapshot", 20_000)).toBe(true);
    expect(got!.msg).toEqual(snapMsg("a", "b"));
    expect(got!.data.length).toBe(data.length);
    expect(crc32c(got!.data)).toBe(crc32c(data));
    expect(Buffer.compare(got!.data, data)).toBe(0);
    await b.inbox.until((m) => m.length === 1, "heartbeat");
  });

  test("a snapshot over the receiver's limit is refused: false, handler not called", async () => {
    const a = await node("a");
    const b = await node("b", { maxSnapshotBytes: 1024 });
    let called = false;
    b.t.onSnapshot(() => { called = true; });
    expect(await within(a.t.sendSnapshot("b", snapMsg("a", "b"), new Uint8Array(4096)), "refusal")).toBe(false);
    expect(called).toBe(false);
    expect(b.log.lines.some((l) => l.includes("exceeds limit 1024"))).toBe(true);
    expect(a.log.lines.some((l) => l.includes("refused by receiver"))).toBe(true);
  });

  test("a receiver that closes mid-snapshot makes sendSnapshot resolve false", async () => {
    const raw = await listenTcp({
      host: HOST, port: 0, onConnection: (s) => {
        const d = new FrameDecoder(1 << 24);
        s.on("data", (c: Uint8Array) => { if (d.push(c).some((f) => f.kind === FrameKind.SnapChunk)) s.destroy(); });
      },
    });
    cleanups.push(() => raw.close());
    addrs.set("rawpeer", { host: HOST, port: raw.port });
    const a = await node("a", { snapshotChunkBytes: 64 * 1024 });
    expect(await within(a.t.sendSnapshot("rawpeer", snapMsg("a", "rawpeer"), new Uint8Array(4 * 1024 * 1024)), "failure")).toBe(false);
  });

  test("close() resolves pending snapshots false; later calls are no-ops", async () => {
    let accepted!: () => void;
    const gotConn = new Promise<void>((r) => { accepted = r; });
    const raw = await listenTcp({ host: HOST, port: 0, onConnection: (s) => { s.pause(); accepted(); } });
    cleanups.push(() => raw.close());
    addrs.set("silent", { host: HOST, port: raw.port });
    const a = await node("a");
    const pending = a.t.sendSnapshot("silent", snapMsg("a", "silent"), new Uint8Array(1024));
    await gotConn;
    await within(a.t.close(), "close");
    expect(await pending).toBe(false);
    a.t.send(hb("a", "silent", 1));
    expect(await a.t.sendSnapshot("silent", snapMsg("a", "silent"), new Uint8Array(1))).toBe(false);
    await a.t.close();
  });

  test("a receiver that never answers: sendSnapshot times out false; a stalled sender is cut off by the receiver", async () => {
    let accepted!: () => void;
    const gotConn = new Promise<void>((r) => { accepted = r; });
    const raw = await listenTcp({ host: HOST, port: 0, onConnection: () => accepted() }); // reads, never acks
    cleanups.push(() => raw.close());
    addrs.set("mute", { host: HOST, port: raw.port });
    const a = await node("a", { snapshotIdleTimeoutMs: 100 });
    const result = a.t.sendSnapshot("mute", snapMsg("a", "mute"), new Uint8Array(1024));
    await gotConn;
    expect(await within(result, "snapshot timeout")).toBe(false);
    expect(a.log.lines.some((l) => l.includes("no progress for 100ms"))).toBe(true);

    const b = await node("b", { snapshotIdleTimeoutMs: 100 });
    const c = await dialTcp({ host: HOST, port: b.listener.port });
    c.on("error", () => {});
    const replies: number[] = [];
    const d = new FrameDecoder(4096);
    c.on("data", (x: Uint8Array) => replies.push(...d.push(x).map((f) => f.kind)));
    const closed = new Promise((r) => c.once("close", r));
    c.write(encodeFrame(FrameKind.Hello, encodeHello("a", "b")));
    c.write(encodeFrame(FrameKind.SnapBegin, encodeSnapBegin(100, jsonCodec.encode(snapMsg("a", "b")))));
    c.write(encodeFrame(FrameKind.SnapChunk, new Uint8Array(10)));
    await within(closed, "receiver giving up");
    expect(replies).toEqual([FrameKind.SnapNack]);
    expect(b.log.lines.some((l) => l.includes("snapshot stalled for 100ms"))).toBe(true);
  });

  test("an unresolvable peer: send does not throw, sendSnapshot resolves false", async () => {
    const a = await node("a");
    a.t.send(hb("a", "nowhere", 1));
    expect(await within(a.t.sendSnapshot("nowhere", snapMsg("a", "nowhere"), new Uint8Array(1)), "failure")).toBe(false);
  });

  test("garbage on an inbound connection closes it with a log line naming the peer address", async () => {
    const b = await node("b");
    for (const garbage of ["GET / HTTP/1.1\r\n\r\n", "\x00\x00\x00\x01\x63x"]) {
      const c = await dialTcp({ host: HOST, port: b.listener.port });
      c.on("error", () => {});
      const localPort = c.localPort; // Bun clears it once the socket is closed
      const closed = new Promise((r) => c.once("close", r));
      c.write(garbage);
      await within(closed, "server closing the connection");
      const line = b.log.lines.find((l) => l.includes(`remote=${HOST}:${localPort}`)) ?? "";
      expect(line).toContain("closing raft connection");
      expect(line).toContain("bad frame");
    }
  });

  test("a half-received snapshot is discarded when the sender goes away", async () => {
    let serverClosed!: () => void;
    const closedP = new Promise<void>((r) => { serverClosed = r; });
    const log = memoryLogger();
    const b = createTcpTransport({ localId: "b", codec: jsonCodec, logger: log, clock: systemClock(), rng: seededRng(1), resolve: () => undefined });
    cleanups.push(() => b.close());
    let called = false;
    b.onSnapshot(() => { called = true; });
    const l = await listenTcp({ host: HOST, port: 0, onConnection: (s) => { b.accept(s); s.once("close", () => serverClosed()); } });
    cleanups.push(() => l.close());
    const c = await dialTcp({ host: HOST, port: l.port });
    c.write(encodeFrame(FrameKind.Hello, encodeHello("a", "b")));
    c.write(encodeFrame(FrameKind.SnapBegin, encodeSnapBegin(100, jsonCodec.encode(snapMsg("a", "b")))));
    c.write(encodeFrame(FrameKind.SnapChunk, new Uint8Array(50)));
    c.end(encodeFrame(FrameKind.Message, new Uint8Array(0)).subarray(0, 3)); // and a torn frame
    await within(closedP, "server side close");
    expect(called).toBe(false);
    expect(log.lines.some((x) => x.includes("mid-snapshot, discarding"))).toBe(true);
  });

  test("a peer that never reads: socket buffer and queue stay bounded, the drop counter rises", async () => {
    const raw = await listenTcp({ host: HOST, port: 0, onConnection: (s) => s.pause() });
    cleanups.push(() => raw.close());
    addrs.set("stuck", { host: HOST, port: raw.port });
    const a = await node("a", { maxQueuedPerPeer: 8, logger: silentLogger() });
    const payload = new Uint8Array(64 * 1024);
    const msg: Message = { type: "MsgApp", from: "a", to: "stuck", term: 1, index: 0, logTerm: 0, commit: 0, entries: [{ type: "Normal", term: 1, index: 1, data: payload }] };
    const frameBytes = jsonCodec.encode(msg).length + 5;
    let i = 0;
    for (; i < 4000 && a.t.stats().dropped === 0; i++) {
      a.t.send(msg);
      await new Promise((r) => setImmediate(r)); // yield to I/O so the socket can fill (not a sleep)
    }
    const s1 = a.t.stats();
    expect(s1.dropped).toBeGreaterThan(0);
    const before = s1.dropped;
    for (let k = 0; k < 50; k++) a.t.send(msg);
    const s2 = a.t.stats();
    expect(s2.dropped).toBe(before + 50);
    expect(s2.peers.stuck!.queued).toBeLessThanOrEqual(8);
    expect(s2.peers.stuck!.socketBuffered).toBeLessThan(2 * frameBytes + 64 * 1024);
    expect(s2.sent).toBeLessThan(i);
  });
});
