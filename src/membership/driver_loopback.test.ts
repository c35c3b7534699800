/**
 * The gossip driver on loopback with real UDP and TCP (port 0, LOCAL profile, system clock):
 * join through one seed, push-pull over TCP, graceful leave, encryption, mixing refused, garbage
 * packets. Waits resolve on member events and drop notices; timers are only guards.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import type * as net from "node:net";
import { bindUdp, cryptoRng, dialTcp, memoryLogger, seededRng, systemClock, type Rng } from "../platform/index.ts";
import { decodeStream, encodePacket, encodeStream } from "./codec.ts";
import { LOCAL_PROFILE, memberlistConfig } from "./config.ts";
import { createGossipDriver, type DropNotice, type GossipDriver } from "./driver.ts";
import { GossipKey, Keyring } from "./keyring.ts";
import { Memberlist } from "./memberlist.ts";
import { FrameReader, encodeFrame } from "./transport.ts";
import { createUdpTransport, parseHostPort } from "./transport_udp.ts";
import type { MemberEvent } from "./types.ts";

interface Node {
  readonly name: string;
  readonly d: GossipDriver;
  readonly events: MemberEvent[];
  readonly drops: DropNotice[];
  readonly log: ReturnType<typeof memoryLogger>;
}

const GUARD_MS = 10_000;
const running: Node[] = [];
/** Re-checked on every event and drop of any node. */
const waiters = new Set<() => void>();
const poke = () => { for (const w of [...waiters]) w(); };

afterEach(async () => {
  await Promise.all(running.splice(0).map((n) => n.d.stop()));
});

async function node(name: string, keyring?: Keyring): Promise<Node> {
  const log = memoryLogger("debug");
  const transport = await createUdpTransport({ host: "127.0.0.1", port: 0, logger: log });
  const clock = systemClock();
  const ml = new Memberlist(memberlistConfig(LOCAL_PROFILE, { name, addr: transport.localAddr }), cryptoRng(), clock.monotonic());
  const drops: DropNotice[] = [];
  const d = createGossipDriver({ memberlist: ml, transport, clock, rng: cryptoRng(), logger: log, keyring, onDrop: (x) => { drops.push(x); poke(); } });
  const events: MemberEvent[] = [];
  d.subscribe((e) => { events.push(e); poke(); });
  const n = { name, d, events, drops, log };
  running.push(n);
  return n;
}

/** Resolves once `pred` holds (checked now and after every event or drop); rejects after the guard. */
function until(what: string, pred: () => boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!pred()) return;
      waiters.delete(check);
      clearTimeout(guard);
      resolve();
    };
    const guard = setTimeout(() => { waiters.delete(check); reject(new Error(`timed out waiting for ${what}; ${describeNodes()}`)); }, GUARD_MS);
    waiters.add(check);
    check();
  });
}

/** What a timed-out wait reports: each running node's live members, drops, packet counters and log tail. */
function describeNodes(): string {
  return running.map((n) => {
    const s = n.d.stats();
    const tail = n.log.lines.slice(-5).join(" | ");
    return `${n.name}: live=${n.d.memberlist.numLiveMembers()} drops=${n.drops.length} packetsIn=${s.memberlist.packetsIn} bad=${s.memberlist.badPackets} log: ${tail}`;
  }).join("; ");
}

const converged = (nodes: Node[], n: number) => until(`${n} live members everywhere`, () => nodes.every((x) => x.d.memberlist.numLiveMembers() === n));
const saw = (n: Node, type: MemberEvent["type"], name: string) => n.events.some((e) => e.type === type && "member" in e && e.member.name === name);
const dropCount = (n: Node) => n.drops.length;

describe("driver on loopback UDP + TCP", () => {
  test("3 members join through one seed, push-pull over TCP, and one leaves gracefully", async () => {
    const [a, b, c] = [await node("a"), await node("b"), await node("c")];
    expect(await b.d.join([a.d.localAddr])).toBe(1);
    expect(await c.d.join([a.d.localAddr])).toBe(1);
    await converged([a, b, c], 3);

    const before = { bOut: b.d.stats().streamsOut, cIn: c.d.stats().streamsIn };
    expect(await b.d.join([c.d.localAddr])).toBe(1); // an explicit push-pull with a member b did not dial yet
    expect(b.d.stats().streamsOut).toBe(before.bOut + 1);
    expect(c.d.stats().streamsIn).toBe(before.cIn + 1);

    await c.d.leave();
    await c.d.stop();
    await until("a and b see c leave", () => saw(a, "leave", "c") && saw(b, "leave", "c"));
    for (const x of [a, b]) {
      expect(saw(x, "failed", "c")).toBe(false);
      expect(x.d.memberlist.member("c")?.state).toBe("left");
      expect(x.d.memberlist.numLiveMembers()).toBe(2);
      expect(x.drops).toEqual([]);
    }
  }, 20_000);

  test("a push-pull written one byte at a time is reassembled and answered", async () => {
    const a = await node("a");
    const { host, port } = parseHostPort(a.d.localAddr);
    const sock = await dialTcp({ host, port });
    const frame = encodeFrame(encodeStream({ type: "push-pull", reply: false, join: true, nodes: [{ name: "x", addr: "127.0.0.1:1", meta: new Uint8Array(0), incarnation: 1, state: "alive" }], userState: new Uint8Array(0) }));
    const reply = readOneFrame(sock);
    for (const byte of frame) await write(sock, new Uint8Array([byte]));
    const msg = decodeStream(await reply);
    expect(msg.reply).toBe(true);
    expect(msg.nodes.map((n) => n.name)).toEqual(["a"]);
    sock.destroy();
    expect(a.d.memberlist.member("x")?.state).toBe("alive");
  });

  test("an oversize TCP frame closes the connection and the log names the peer", async () => {
    const a = await node("a");
    const { host, port } = parseHostPort(a.d.localAddr);
    const sock = await dialTcp({ host, port });
    const peer = `127.0.0.1:${sock.localPort}`;
    const closed = new Promise<void>((resolve) => sock.once("close", () => resolve()));
    sock.on("error", () => {});
    await write(sock, new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xc6]));
    await closed;
    await until("oversize drop", () => dropCount(a) === 1);
    expect(a.drops).toEqual([{ kind: "stream", reason: "oversize", peer }]);
    expect(a.log.lines.some((l) => l.includes(`peer=${peer}`) && l.includes("oversize"))).toBe(true);
  });

  test("a seeded stream of garbage UDP packets is dropped and counted; members keep working", async () => {
    const [a, b] = [await node("a"), await node("b")];
    expect(await b.d.join([a.d.localAddr])).toBe(1);
    await converged([a, b], 2);
    const rng = seededRng(42);
    const N = 200;
    await sendGarbage(a, rng, N);
    const s = a.d.stats();
    expect(s.packetDrops.malformed + s.packetDrops.encrypted).toBe(N);
    expect(s.memberlist.badPackets).toBe(s.packetDrops.malformed);

    const c = await node("c");
    expect(await c.d.join([a.d.localAddr])).toBe(1);
    await converged([a, b, c], 3);
    for (const x of [a, b, c]) expect(x.events.some((e) => e.type === "failed")).toBe(false);
  }, 20_000);
});

describe("encryption on loopback", () => {
  const key = GossipKey.fromBytes(seededRng(1).bytes(32));
  const otherKey = GossipKey.fromBytes(seededRng(2).bytes(32));

  test("two encrypted members converge and gossip a user message", async () => {
    const [a, b] = [await node("a", new Keyring(key)), await node("b", new Keyring(key))];
    expect(await b.d.join([a.d.localAddr])).toBe(1);
    await converged([a, b], 2);
    a.d.broadcastUser("greeting", new TextEncoder().encode("hello")); // gossiped in encrypted UDP packets
    await until("b receives the user message", () => b.events.some((e) => e.type === "user" && e.key === "greeting"));
    for (const x of [a, b]) {
      expect(x.drops).toEqual([]);
      expect(x.d.stats().decryptFailures).toMatchObject({ "authentication-failed": 0, "unsupported-version": 0 });
    }
  }, 15_000);

  test("a member that rotated to a new primary still talks to one that only installed it", async () => {
    const [a, b] = [await node("a", new Keyring(otherKey, [key])), await node("b", new Keyring(key, [otherKey]))];
    expect(await b.d.join([a.d.localAddr])).toBe(1);
    await converged([a, b], 2);
    expect([...a.drops, ...b.drops]).toEqual([]);
  });

  test("unencrypted and encrypted members do not mix, either way; drops are counted", async () => {
    const [enc, plain] = [await node("enc", new Keyring(key)), await node("plain")];
    await expect(plain.d.join([enc.d.localAddr])).rejects.toThrow(/join failed/);
    await until("enc drops plaintext stream", () => enc.drops.some((x) => x.kind === "stream" && x.reason === "unencrypted"));
    await expect(enc.d.join([plain.d.localAddr])).rejects.toThrow(/join failed/);
    await until("plain drops encrypted stream", () => plain.drops.some((x) => x.kind === "stream" && x.reason === "encrypted"));

    // A well-formed plaintext packet to the encrypted member is dropped before the core sees it.
    const sender = await bindUdp({ host: "127.0.0.1", port: 0, onMessage() {} });
    const ping = encodePacket([{ type: "ping", seq: 1, target: "enc", sourceNode: "x", sourceAddr: "127.0.0.1:9" }]);
    await sender.send(ping, parseHostPort(enc.d.localAddr).port, "127.0.0.1");
    await sender.close();
    await until("enc drops plaintext packet", () => enc.drops.some((x) => x.kind === "packet" && x.reason === "unencrypted"));
    expect(enc.d.stats().memberlist.packetsIn).toBe(0);
    expect(enc.d.memberlist.numLiveMembers()).toBe(1);
    expect(plain.d.memberlist.numLiveMembers()).toBe(1);
  });

  test("a member with the wrong key cannot join; its stream fails authentication", async () => {
    const [a, wrong] = [await node("a", new Keyring(key)), await node("wrong", new Keyring(otherKey))];
    await expect(wrong.d.join([a.d.localAddr])).rejects.toThrow(/join failed/);
    await until("decrypt failure", () => a.drops.some((x) => x.reason === "decrypt-failed"));
    expect(a.d.stats().decryptFailures["authentication-failed"]).toBeGreaterThanOrEqual(1);
    expect(a.d.memberlist.numLiveMembers()).toBe(1);
  });

  test("garbage packets to an encrypted member are dropped and counted", async () => {
    const a = await node("a", new Keyring(key));
    const rng = seededRng(7);
    const N = 100;
    await sendGarbage(a, rng, N);
    expect(a.drops.every((x) => x.kind === "packet")).toBe(true);
    expect(a.d.stats().memberlist.packetsIn).toBe(0);
  });
});

/**
 * Sends `n` random datagrams (1..1400 bytes) to `to`, one at a time: each is awaited as a drop
 * before the next goes out, so a burst cannot overflow the socket's receive buffer (loopback UDP
 * drops then, and a lost datagram would be neither a pass nor a failure of the driver).
 */
async function sendGarbage(to: Node, rng: Rng, n: number): Promise<void> {
  const sender = await bindUdp({ host: "127.0.0.1", port: 0, onMessage() {} });
  const { port } = parseHostPort(to.d.localAddr);
  const base = dropCount(to);
  try {
    for (let i = 1; i <= n; i++) {
      await sender.send(rng.bytes(1 + rng.int(1400)), port, "127.0.0.1");
      await until(`garbage packet ${i} dropped`, () => dropCount(to) >= base + i);
    }
  } finally {
    await sender.close();
  }
}

function write(sock: net.Socket, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => sock.write(bytes, (err) => (err ? reject(err) : resolve())));
}

function readOneFrame(sock: net.Socket): Promise<Uint8Array> {
  const reader = new FrameReader(1 << 20);
  return new Promise((resolve, reject) => {
    sock.on("data", (chunk: Buffer) => {
      const [f] = reader.push(new Uint8Array(chunk));
      if (f) resolve(f);
    });
    sock.once("error", reject);
  });
}
