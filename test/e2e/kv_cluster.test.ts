/**
 * The KV store on a real 3-server cluster: blocking reads wake on the write they wait for (and not
 * on writes to other keys), and killing the leader mid-stream loses no acknowledged write.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, type AgentProcess } from "../harness/agent_process.ts";
import { getJson, startServerCluster, type ServerCluster } from "../harness/server_cluster.ts";

const work = mkdtempSync(join(tmpdir(), "causeway-kv-cluster-"));
const running: AgentProcess[] = [];
let cluster: ServerCluster;
beforeAll(async () => {
  cluster = await startServerCluster({ work, size: 3, prefix: "kv", running });
  await poll(() => getJson(cluster.agents[0]!, "/v1/status/peers"), (p) => Array.isArray(p) && p.length === 3, 30_000, "3 raft peers");
  // Writes work once a leader is in place and the catalog reconcile has run.
  await poll(() => put(cluster.agents[0]!, "ready", "1"), (ok) => ok === true, 30_000, "a first write");
}, 60_000);
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

async function put(a: AgentProcess, key: string, value: string): Promise<boolean | undefined> {
  const res = await fetch(`${a.httpUrl}/v1/kv/${key}`, { method: "PUT", body: value, signal: AbortSignal.timeout(5_000) });
  return res.ok ? ((await res.json()) as boolean) : undefined;
}

test("a blocking read returns right after the write to its key, and not for a write to another key", async () => {
  const a = cluster.agents[1]!;
  expect(await put(a, "watched", "v1")).toBe(true);
  const first = await fetch(`${a.httpUrl}/v1/kv/watched`);
  const index = Number(first.headers.get("X-Consul-Index"));
  expect(index).toBeGreaterThan(0);

  let returnedAt = 0;
  const blocking = fetch(`${a.httpUrl}/v1/kv/watched?index=${index}&wait=20s`).then(async (res) => {
    returnedAt = performance.now();
    return { index: Number(res.headers.get("X-Consul-Index")), body: (await res.json()) as { Value: string }[] };
  });
  await Bun.sleep(300);
  expect(await put(a, "unrelated", "x")).toBe(true);
  await Bun.sleep(300);
  expect(returnedAt).toBe(0); // still blocked: the write touched another key

  const putAt = performance.now();
  expect(await put(a, "watched", "v2")).toBe(true);
  const ackedAt = performance.now();
  const woke = await blocking;
  expect(returnedAt).toBeGreaterThan(putAt);
  // Woken by the write itself, not by the 20 s wait: within a few milliseconds of its acknowledgement
  // (the bound is loose for a loaded CI machine; the blocked read would otherwise take 20 s).
  expect(Math.abs(returnedAt - ackedAt)).toBeLessThan(250);
  expect(woke.index).toBeGreaterThan(index);
  expect(Buffer.from(woke.body[0]!.Value, "base64").toString()).toBe("v2");
}, 30_000);

test("killing the leader mid-stream loses no acknowledged write, and the survivors keep accepting writes", async () => {
  const leader = await cluster.leaderIndex();
  expect(leader).toBeGreaterThanOrEqual(0);
  const survivors = cluster.agents.filter((_, i) => i !== leader);
  const acked = new Map<string, string>();
  let stop = false;
  let killed = false;
  let ackedAfterKill = 0;
  let seq = 0;
  const writer = async (w: number) => {
    while (!stop) {
      const key = `stream/${w}/${seq++}`;
      const value = `value-${key}`;
      // Before the kill every server takes writes (followers forward them); after it, only the survivors.
      const pool = killed ? survivors : cluster.agents;
      const target = pool[seq % pool.length]!;
      try {
        if ((await put(target, key, value)) === true) {
          acked.set(key, value);
          if (killed) ackedAfterKill++;
        }
      } catch {
        // A write to the dying leader, or during the election, may fail; only acknowledged ones count.
      }
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  await poll(async () => acked.size, (n) => n >= 50, 30_000, "50 acknowledged writes");
  await cluster.agents[leader]!.stop("SIGKILL");
  killed = true;
  await poll(async () => ackedAfterKill, (n) => n >= 50, 60_000, "50 writes acknowledged after the leader died");
  stop = true;
  await Promise.all(writers);

  for (const s of survivors) {
    const entries = (await getJson(s, "/v1/kv/stream/?recurse&consistent")) as { Key: string; Value: string }[];
    const stored = new Map(entries.map((e) => [e.Key, Buffer.from(e.Value, "base64").toString()]));
    const lost = [...acked].filter(([k, v]) => stored.get(k) !== v).map(([k]) => k);
    expect(lost).toEqual([]);
  }
}, 120_000);
