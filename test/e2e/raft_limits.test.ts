/**
 * Size limits on a real 3-server cluster: a write too big for one Raft entry is refused (413 over HTTP,
 * ResourceExhausted over the internal State RPC on the server it reaches) and the cluster keeps taking
 * writes; a 30 MB snapshot, twice the entry limit, restores through a follower in chunks while writes
 * continue; a gzip bomb is refused without the server's memory growing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { DEFAULT_MAX_ENTRY_BYTES } from "../../src/consensus/index.ts";
import { seededRng, silentLogger, systemClock } from "../../src/platform/index.ts";
import { createRemoteStateCaller, createRpcPool, dialServer } from "../../src/rpc/index.ts";
import { createStateStore, encodeCommand, writeSnapshotArchive } from "../../src/state/index.ts";
import { poll, type AgentProcess } from "../harness/agent_process.ts";
import { putKv as put } from "../harness/kv_http.ts";
import { getJson, startServerCluster, type ServerCluster } from "../harness/server_cluster.ts";

const MB = 1_000_000;
const MiB = 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), "causeway-limits-"));
const running: AgentProcess[] = [];
let cluster: ServerCluster;
let leader: AgentProcess;
let followers: AgentProcess[];

beforeAll(async () => {
  cluster = await startServerCluster({ work, size: 3, prefix: "lim", running });
  await poll(() => getJson(cluster.agents[0]!, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 3, 30_000, "3 raft peers");
  await poll(() => put(cluster.agents[0]!, "ready", "1"), (ok) => ok === true, 30_000, "a first write");
  const i = await cluster.leaderIndex();
  leader = cluster.agents[i]!;
  followers = cluster.agents.filter((_, j) => j !== i);
}, 60_000);
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

/** Writes to every server in turn until stopped; counts acknowledged writes. */
function writer() {
  let stop = false, acked = 0, failed = 0, seq = 0;
  const done = (async () => {
    while (!stop) {
      const a = cluster.agents[seq % 3]!;
      const ok = await put(a, `writer/${seq++}`, "v").catch(() => undefined);
      if (ok === true) acked++;
      else failed++;
    }
  })();
  return { stop: async () => ((stop = true), await done, { acked, failed }), get acked() { return acked; } };
}

const rssKiB = (a: AgentProcess) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${a.child.pid}/status`, "utf8"))![1]);

test("a gzip bomb is refused early, and the server's memory stays under twice its baseline", async () => {
  const target = followers[0]!;
  const baseline = rssKiB(target);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(target))), 10);
  try {
    // 1. Gzip of 4 GiB of zeros (no tar at all): 4 MiB on the wire.
    const zeros = gzipSync(new Uint8Array(64 * MiB));
    const plain = new Uint8Array(zeros.length * 64);
    for (let i = 0; i < 64; i++) plain.set(zeros, i * zeros.length);
    const r1 = await fetch(`${target.httpUrl}/v1/snapshot`, { method: "PUT", body: plain });
    expect([r1.status, await r1.text()]).toEqual([400, "not a snapshot: meta.json is missing from the archive\n"]);
    // 2. The same zeros inside a well-formed archive that declares 200 MiB of state (under the limit):
    // refused by its checksum after inflating it as a stream, never holding it.
    const size = 200 * MiB;
    const meta = new TextEncoder().encode(JSON.stringify({ ID: "1-1-0", Size: size, Index: 1, Term: 1, Version: 1 }));
    const header = (name: string, n: number) => {
      const h = new Uint8Array(512);
      h.set(new TextEncoder().encode(name));
      h.set(new TextEncoder().encode(`${n.toString(8).padStart(11, "0")}\0`), 124);
      return h;
    };
    const metaBlock = new Uint8Array(512);
    metaBlock.set(meta);
    const sums = new TextEncoder().encode(`${createHash("sha256").update(meta).digest("hex")}  meta.json\n${"0".repeat(64)}  state.bin\n`);
    const sumsBlock = new Uint8Array(512);
    sumsBlock.set(sums);
    const head = gzipSync(new Uint8Array([...header("meta.json", meta.length), ...metaBlock, ...header("state.bin", size)]));
    const tail = gzipSync(new Uint8Array([...header("SHA256SUMS", sums.length), ...sumsBlock, ...new Uint8Array(1024)]));
    const z200 = gzipSync(new Uint8Array(size));
    const r2 = await fetch(`${target.httpUrl}/v1/snapshot`, { method: "PUT", body: new Uint8Array([...head, ...z200, ...tail]) });
    expect([r2.status, await r2.text()]).toEqual([400, "snapshot is damaged: the SHA-256 of state.bin does not match SHA256SUMS\n"]);
    // 3. An archive declaring more state than the limit: refused at that header.
    const r3 = await fetch(`${target.httpUrl}/v1/snapshot`, { method: "PUT", body: new Uint8Array([...gzipSync(header("state.bin", 8 * 1024 * MiB - 1)), ...plain]) });
    expect(r3.status).toBe(413);
    expect(await r3.text()).toStartWith("snapshot is too large: state.bin is 8589934591 bytes");
  } finally {
    clearInterval(sampler);
  }
  console.log(`gzip bombs: RSS baseline ${(baseline / 1024).toFixed(0)} MiB, peak ${(peak / 1024).toFixed(0)} MiB`);
  expect(peak).toBeLessThan(2 * baseline);
  expect(await put(target, "after-bomb", "ok")).toBe(true);
}, 120_000);

test("a 20 MB registration is refused with 413 through a follower and through the leader; writes go on", async () => {
  const body = JSON.stringify({ Node: "huge", Address: "10.0.0.9", NodeMeta: { blob: "x".repeat(20 * MB) } });
  for (const a of [followers[0]!, leader]) {
    const res = await fetch(`${a.httpUrl}/v1/catalog/register`, { method: "PUT", body });
    expect(res.status).toBe(413);
    expect(await res.text()).toMatch(/too large/i);
    expect(await put(a, "after-big-registration", "ok")).toBe(true);
  }
  expect(((await getJson(leader, "/v1/catalog/nodes")) as { Node: string }[]).map((n) => n.Node)).not.toContain("huge");
}, 60_000);

test("a 20 MB command over the internal State RPC is refused by the server it reaches, before it is proposed", async () => {
  const port = (await getJson(followers[1]!, "/v1/agent/self")).Member.Tags.port as string;
  const pool = createRpcPool({
    dial: (t) => dialServer({ datacenter: "dc1", domain: "consul" }, `127.0.0.1:${port}`, t, "rpc"),
    clock: systemClock(), rng: seededRng(1), logger: silentLogger(),
  });
  try {
    const caller = createRemoteStateCaller(() => pool.transport({ datacenter: "dc1" }));
    const command = encodeCommand({ type: "register", req: { Node: "huge-rpc", Address: "10.0.0.9", NodeMeta: { blob: "y".repeat(20 * MB) } } });
    let err: unknown;
    await caller.apply(command).catch((e) => (err = e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((err as ConnectError).rawMessage).toBe(
      `Request too large: the encoded Raft entry is ${command.length + 16} bytes, more than the ${DEFAULT_MAX_ENTRY_BYTES}-byte limit`,
    );
  } finally {
    pool.close();
  }
  for (const a of cluster.agents) expect(await put(a, "after-big-rpc", "ok")).toBe(true);
}, 60_000);

test("a snapshot that fails its checks is refused with 400 by the server that receives it, and nothing changes", async () => {
  const store = createStateStore({ clock: systemClock() });
  store.apply(1, { type: "register", req: { Node: "n1", Address: "10.0.0.1" } });
  store.apply(2, { type: "kv", op: "set", entry: { Key: "locked", Value: new TextEncoder().encode("v") } });
  const doc = JSON.parse(new TextDecoder().decode(store.snapshot()));
  doc.kvs[0][4] = "6d1b6c5e-0000-4000-8000-000000000000"; // a lock held by a session the snapshot does not have
  const archive = writeSnapshotArchive(new TextEncoder().encode(JSON.stringify(doc)), { index: 2, term: 1, nowMs: Date.now() });
  expect(await put(leader, "kept", "yes")).toBe(true);
  const res = await fetch(`${followers[1]!.httpUrl}/v1/snapshot`, { method: "PUT", body: archive as Uint8Array<ArrayBuffer> });
  expect([res.status, await res.text()]).toEqual([
    400, 'invalid snapshot: kvs[0] (key "locked") is locked by session "6d1b6c5e-0000-4000-8000-000000000000", which the snapshot does not have\n',
  ]);
  for (const a of cluster.agents) expect((await fetch(`${a.httpUrl}/v1/kv/kept?consistent`)).status).toBe(200);
}, 60_000);

test("a 30 MB snapshot restores through a follower on all 3 servers while writes continue", async () => {
  // 240 keys of 100 KiB (random bytes, so the archive does not shrink much): ~33 MB of state, twice the entry limit.
  const store = createStateStore({ clock: systemClock() });
  const rng = seededRng(7);
  for (let i = 0; i < 240; i++) store.apply(i + 1, { type: "kv", op: "set", entry: { Key: `restored/${i}`, Value: rng.bytes(100 * 1024) } });
  const state = store.snapshot();
  expect(state.length).toBeGreaterThan(30 * MB);
  expect(state.length).toBeGreaterThan(DEFAULT_MAX_ENTRY_BYTES * 2);
  const archive = writeSnapshotArchive(state, { index: 240, term: 1, nowMs: Date.now() });

  const w = writer();
  await Bun.sleep(500);
  const before = w.acked;
  const started = performance.now();
  const res = await fetch(`${followers[0]!.httpUrl}/v1/snapshot`, { method: "PUT", body: archive as Uint8Array<ArrayBuffer> });
  const tookMs = performance.now() - started;
  expect([res.status, await res.text()]).toEqual([200, ""]);
  const during = w.acked - before;
  await Bun.sleep(1000);
  const { acked, failed } = await w.stop();
  console.log(`30 MB restore (${(state.length / MB).toFixed(1)} MB state, ${(archive.length / MB).toFixed(1)} MB archive) took ${(tookMs / 1000).toFixed(1)} s; ` +
    `${during} writes acknowledged during it, ${acked} in all, ${failed} failed`);
  expect(during).toBeGreaterThan(0);

  // Every server holds the restored keys (read each one's own copy); the pre-restore keys are gone.
  const want = Buffer.from(store.db.kvs.get("restored/117")!.Value!).toString("base64");
  for (const a of cluster.agents) {
    const keys = await poll(() => getJson(a, "/v1/kv/restored/?keys&stale"), (k) => Array.isArray(k) && k.length === 240, 20_000, "the restored keys");
    expect(keys.length).toBe(240);
    expect((await getJson(a, "/v1/kv/restored/117?stale"))[0].Value).toBe(want);
    expect((await fetch(`${a.httpUrl}/v1/kv/ready?stale`)).status).toBe(404);
  }
  // And writes go on after it, through every server.
  for (const a of cluster.agents) expect(await put(a, "after-restore", "ok")).toBe(true);
}, 180_000);
