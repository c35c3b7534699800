/**
 * Queries and the key manager through whole gossip pools (driver, real AES-GCM encryption, serf) over
 * the in-memory network with a simulated clock. Encryption is real; test/harness/serial_crypto.ts keeps
 * it in step with the simulated clock.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import { serialCrypto, type SerialCrypto } from "../../test/harness/serial_crypto.ts";
import { simClock, type SimClock, runSimTimers } from "../../test/harness/sim_clock.ts";
import { GossipKey, Keyring } from "./keyring.ts";
import { createGossipPool, type GossipPool } from "./pool.ts";
import type { SerfEvent } from "./serf.ts";
import { createMemoryNetwork, type MemoryNetwork } from "./transport_memory.ts";

// WebCrypto settles on a thread pool: run it in call order and let it finish before time moves on.
let serial: SerialCrypto;
beforeAll(() => void (serial = serialCrypto()));
afterAll(() => serial.restore());

/** Lets promise continuations (encryption, stream exchanges) run; no simulated time passes. */
const flush = () => serial.idle();

/** Runs simulated timers for up to `ms`, flushing after each; stops early when `until` holds. */
const run = (clock: SimClock, ms: number, until?: () => boolean): Promise<boolean> => runSimTimers(clock, ms, until, flush);

/** Awaits `p` while the simulated clock runs (at most `ms`). */
async function settle<T>(clock: SimClock, p: Promise<T>, ms = 30_000): Promise<T> {
  let done = false;
  let value: T | undefined;
  let error: unknown;
  p.then((v) => { value = v; done = true; }, (e) => { error = e; done = true; });
  expect(await run(clock, ms, () => done)).toBe(true);
  if (error !== undefined) throw error;
  return value as T;
}

interface Node { name: string; pool: GossipPool; keyring?: Keyring; events: SerfEvent[]; saved: string[][] }

async function cluster(seed: number, n: number, keyring?: () => Keyring): Promise<{ clock: SimClock; net: MemoryNetwork; nodes: Node[]; start(name: string, k?: Keyring): Promise<Node> }> {
  const clock = simClock();
  const net = createMemoryNetwork({ clock, rng: seededRng(seed), latencyMs: [1, 10] });
  let started = 0;
  const start = async (name: string, k?: Keyring): Promise<Node> => {
    const node: Node = { name, keyring: k, events: [], saved: [], pool: undefined! };
    node.pool = await createGossipPool({
      name, profile: "lan", bindHost: "unused", bindPort: 0, tags: { role: "node" }, clock, rng: seededRng(seed * 1000 + started++),
      logger: silentLogger(), transport: net.transport(`${name}:8301`), keyring: k, persistKeyring: (ring) => void node.saved.push(ring.exportKeys()),
    });
    node.pool.subscribe((e) => void node.events.push(e));
    return node;
  };
  const nodes: Node[] = [];
  for (let i = 0; i < n; i++) nodes.push(await start(`n${i}`, keyring?.()));
  const joins = Promise.all(nodes.slice(1).map((x) => x.pool.join(["n0:8301"])));
  const alive = () => nodes.every((x) => x.pool.members().length === n && x.pool.members().every((m) => m.status === "alive"));
  expect(await run(clock, 30_000, alive)).toBe(true);
  await joins;
  return { clock, net, nodes, start };
}

const text = (s: string) => new TextEncoder().encode(s);
const rng = seededRng(42);
const k1 = GossipKey.fromBytes(rng.bytes(32)), k2 = GossipKey.fromBytes(rng.bytes(32));

describe("key manager over encrypted pools (real AES-GCM, simulated clock)", () => {
  test("seed 3: install, use, remove: every member follows, nobody fails, each change is persisted; a K1-only member is shut out", async () => {
    const s = await cluster(3, 4, () => new Keyring(k1));
    const [n0, n1, n2] = s.nodes as [Node, Node, Node, Node];

    const installed = await settle(s.clock, n1.pool.installKey(k2.toBase64()));
    expect(installed).toEqual({ messages: {}, numNodes: 4, numResp: 4, numErr: 0, keys: {}, primaryKeys: {} });
    const listed = await settle(s.clock, n2.pool.listKeys());
    expect(listed).toMatchObject({ numNodes: 4, numResp: 4, keys: { [k1.toBase64()]: 4, [k2.toBase64()]: 4 }, primaryKeys: { [k1.toBase64()]: 4 } });
    expect(listed.error).toBeUndefined();

    // Using a key nobody has fails on every member with memberlist's message, and changes nothing.
    const unknown = GossipKey.fromBytes(rng.bytes(32)).toBase64();
    const refused = await settle(s.clock, n0.pool.useKey(unknown));
    expect(refused.error).toBe("4/4 nodes reported failure");
    expect(Object.values(refused.messages)).toEqual(Array(4).fill("Requested key is not in the keyring"));
    // Removing the primary key is refused everywhere.
    const primary = await settle(s.clock, n0.pool.removeKey(k1.toBase64()));
    expect(primary).toMatchObject({ numErr: 4, error: "4/4 nodes reported failure" });
    expect(new Set(Object.values(primary.messages))).toEqual(new Set(["Removing the primary key is not allowed"]));

    expect((await settle(s.clock, n2.pool.useKey(k2.toBase64()))).error).toBeUndefined();
    await run(s.clock, 5_000);
    expect((await settle(s.clock, n0.pool.removeKey(k1.toBase64()))).error).toBeUndefined();
    for (const n of s.nodes) {
      expect(n.keyring!.exportKeys()).toEqual([k2.toBase64()]);
      expect(n.saved).toEqual([[k1.toBase64(), k2.toBase64()], [k2.toBase64(), k1.toBase64()], [k2.toBase64()]]);
    }
    await run(s.clock, 30_000);
    for (const n of s.nodes) {
      expect(n.events.filter((e) => e.type === "member-failed")).toEqual([]);
      expect(n.pool.members().every((m) => m.status === "alive")).toBe(true);
    }
    const after = await settle(s.clock, n1.pool.listKeys());
    expect(after).toMatchObject({ numNodes: 4, numResp: 4, keys: { [k2.toBase64()]: 4 } });

    const stale = await s.start("stale", new Keyring(k1));
    await expect(settle(s.clock, stale.pool.join(["n0:8301"]))).rejects.toThrow();
    expect(n0.pool.stats().gossip.streamDrops["decrypt-failed"]).toBeGreaterThan(0);
    for (const n of [...s.nodes, stale]) await n.pool.stop();
  }, 30_000);

  test("seed 4: without encryption a key change is refused locally and no key is gossiped; list reports every member", async () => {
    const s = await cluster(4, 3);
    const before = s.net.stats.delivered;
    const r = await s.nodes[0]!.pool.installKey(k2.toBase64());
    expect(r).toMatchObject({ numNodes: 3, numResp: 1, numErr: 1, messages: { n0: "No keyring to modify (encryption not enabled)" }, error: "1/3 nodes reported failure" });
    expect(s.net.stats.delivered).toBe(before);
    const list = await settle(s.clock, s.nodes[1]!.pool.listKeys());
    expect(list).toMatchObject({ numResp: 3, numErr: 3, error: "3/3 nodes reported failure" });
    expect(Object.keys(list.messages)).toEqual(["n0", "n1", "n2"]);
    await expect(s.nodes[0]!.pool.installKey("bad")).rejects.toThrow("invalid gossip encryption key");
    for (const n of s.nodes) await n.pool.stop();
  });
});

describe("user queries through pools", () => {
  test("seed 5: every member answers once; the originator resolves at the timeout, or early when it has enough", async () => {
    const s = await cluster(5, 4, () => new Keyring(k1));
    for (const n of s.nodes) n.pool.subscribeQueries((q) => n.pool.respond(q, text(`${n.name}:${new TextDecoder().decode(q.payload)}`)));
    const acks: string[] = [];
    const t0 = s.clock.monotonic();
    const result = await settle(s.clock, s.nodes[2]!.pool.query("who", text("x"), { requestAck: true, timeoutMs: 2000, onAck: (a) => void acks.push(a) }));
    expect(s.clock.monotonic() - t0).toBeGreaterThanOrEqual(2000);
    expect(result.responses.map((r) => new TextDecoder().decode(r.payload)).sort()).toEqual(["n0:x", "n1:x", "n2:x", "n3:x"]);
    expect([...result.acks].sort()).toEqual(["n0", "n1", "n2", "n3"]);
    expect(acks.sort()).toEqual(["n0", "n1", "n2", "n3"]);

    let seen = 0;
    const t1 = s.clock.monotonic();
    const early = await settle(s.clock, s.nodes[0]!.pool.query("who", text("y"), { onResponse: () => ++seen === 2 }));
    expect(early.responses.length).toBe(2);
    expect(s.clock.monotonic() - t1).toBeLessThan(1000);
    await expect(s.nodes[0]!.pool.query("big", new Uint8Array(2000))).rejects.toThrow("query exceeds limit of 1024 bytes");
    for (const n of s.nodes) await n.pool.stop();
    await expect(s.nodes[0]!.pool.query("after", text(""))).rejects.toThrow("stopped");
  });
});
