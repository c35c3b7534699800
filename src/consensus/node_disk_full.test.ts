/**
 * A full disk under a running cluster: the server whose log cannot be written stops taking part and
 * refuses requests with StorageFailedError, the others go on, nothing acknowledged is lost, and once
 * space returns the server reopens its log and catches up by itself. Three real log stores on
 * simulated disks, one of which can be filled (a write then stores only part of its bytes and throws
 * ENOSPC, as write(2) does).
 */
import { describe, expect, test } from "bun:test";
import { seededRng, silentLogger } from "../platform/index.ts";
import type { DurableFile, FileSystem } from "../platform/files.ts";
import { runSimTimers, simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { simFileSystem } from "../../test/harness/sim_fs.ts";
import { simNetwork } from "../../test/harness/sim_network.ts";
import { encodeKvCommand, kvStateMachine, type KvResult } from "../../test/harness/kv_state_machine.ts";
import { createConsensusNode, openLogStore, StorageFailedError, type ConsensusNode } from "./index.ts";

/**
 * A file system whose disk can be filled: appends store half their bytes and throw, syncs and durable
 * writes fail, all with `code` (ENOSPC: a full disk; EIO for a failing one).
 */
function fillableDisk(fs: FileSystem, code: string) {
  const enospc = (path: string) => Object.assign(new Error(`${code}: write '${path}'`), { code });
  const disk = { full: false };
  const wrap = (f: DurableFile): DurableFile => ({
    path: f.path,
    size: () => f.size(),
    append(data) {
      if (!disk.full) return f.append(data);
      f.append(data.subarray(0, data.length >> 1));
      throw enospc(f.path);
    },
    sync: () => (disk.full ? Promise.reject(enospc(f.path)) : f.sync()),
    truncate: (n) => f.truncate(n),
    close: () => f.close(),
  });
  const filled: FileSystem = {
    ...fs,
    openAppend: (p) => wrap(fs.openAppend(p)),
    writeDurably: (p, d) => (disk.full ? Promise.reject(enospc(p)) : fs.writeDurably(p, d)),
  };
  return { fs: filled, disk };
}

const runFor = (clock: SimClock, ms: number) => runSimTimers(clock, ms);

function cluster(seed: number, code = "ENOSPC") {
  const clock = simClock();
  const rng = seededRng(seed);
  const net = simNetwork(clock, rng);
  const ids = ["n1", "n2", "n3"];
  const disks = ids.map(() => fillableDisk(simFileSystem(), code));
  const sms = ids.map(() => kvStateMachine());
  const open = (i: number) => openLogStore({ fs: disks[i]!.fs, dir: "/raft", logger: silentLogger(), segmentBytes: 4096 });
  const nodes: ConsensusNode<KvResult>[] = ids.map((id, i) =>
    createConsensusNode({
      id, clock, rng, logger: silentLogger(), log: open(i), reopenLog: () => open(i), transport: net.transport(id), stateMachine: sms[i]!,
      bootstrapVoters: ids, tickMs: 10, snapshotEntries: 16, keepEntries: 4, storageRetryMs: 200,
    }),
  );
  return { clock, disks, sms, nodes };
}

describe("a full disk", () => {
  test("stops only its server, loses nothing acknowledged, and the server rejoins when space returns", async () => {
    const c = cluster(7);
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    const leaderAt = () => c.nodes.findIndex((n) => n.status().role === "Leader");
    const acked: string[] = [];
    const put = async (i: number, key: string) => {
      const r = await c.nodes[i]!.propose(encodeKvCommand({ op: "put", key, value: key }));
      if (r.ok) acked.push(key);
      return r;
    };
    const first = leaderAt();
    expect(first).toBeGreaterThanOrEqual(0);
    for (let k = 0; k < 20; k++) await Promise.all([put(first, `a${k}`), runFor(c.clock, 20)]);

    // The leader's disk fills: its next write fails, and so does the proposal that needed it.
    c.disks[first]!.disk.full = true;
    const refused = put(first, "lost?").then(() => "applied", (e: Error) => e);
    await runFor(c.clock, 100);
    const err = await refused;
    expect(err).toBeInstanceOf(StorageFailedError);
    expect(String((err as Error).message)).toContain("ENOSPC");
    expect(c.nodes[first]!.status().role).toBe("Follower");
    expect(c.nodes[first]!.status().leader).toBe("");

    // The other two elect a leader and go on; the full server refuses requests meanwhile.
    await runFor(c.clock, 1500);
    const second = leaderAt();
    expect(second).toBeGreaterThanOrEqual(0);
    expect(second).not.toBe(first);
    for (let k = 0; k < 40; k++) await Promise.all([put(second, `b${k}`), runFor(c.clock, 20)]);
    await expect(c.nodes[first]!.propose(encodeKvCommand({ op: "put", key: "x", value: "x" }))).rejects.toBeInstanceOf(StorageFailedError);
    await expect(c.nodes[first]!.read()).rejects.toBeInstanceOf(StorageFailedError);

    // Space returns: the server reopens its log, catches up (40 writes later, by snapshot) and serves again.
    c.disks[first]!.disk.full = false;
    await runFor(c.clock, 3000);
    const applied = c.nodes[second]!.status().applied;
    expect(c.nodes[first]!.status().applied).toBe(applied);
    expect(c.nodes[first]!.status().leader).not.toBe("");
    for (const key of acked) expect(c.sms.map((sm) => sm.get(key))).toEqual([key, key, key]);
    const r = await Promise.all([c.nodes[first]!.propose(encodeKvCommand({ op: "put", key: "after", value: "1" })), runFor(c.clock, 200)]);
    expect(r[0]).toEqual({ ok: true });
    for (const n of c.nodes) await n.stop();
  });

  test("an error that is not a full disk (EIO) stops the node: the page cache cannot be trusted", async () => {
    const c = cluster(8, "EIO");
    for (const n of c.nodes) await n.start();
    await runFor(c.clock, 1000);
    const i = c.nodes.findIndex((n) => n.status().role === "Leader");
    c.disks[i]!.disk.full = true;
    const p = c.nodes[i]!.propose(encodeKvCommand({ op: "put", key: "k", value: "v" })).then(() => "applied", (e: Error) => e.name);
    await runFor(c.clock, 200);
    expect(await p).toBe("NodeStoppedError");
    c.disks[i]!.disk.full = false;
    await runFor(c.clock, 3000);
    await expect(c.nodes[i]!.propose(encodeKvCommand({ op: "put", key: "k", value: "v" }))).rejects.toThrow("consensus node stopped");
    for (const n of c.nodes) await n.stop();
  });
});
