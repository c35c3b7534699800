/**
 * Three consensus nodes on real sockets and real disks: they elect a leader, replicate, survive the
 * leader's loss, and a restarted server catches up through a snapshot streamed over TCP.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryLogger } from "../../src/platform/index.ts";
import { encodeKvCommand } from "../harness/kv_state_machine.ts";
import { startRealNode, waitFor, type RealNode } from "../harness/real_raft.ts";

const work = mkdtempSync(join(tmpdir(), "causeway-tcp-raft-"));
const nodes = new Map<string, RealNode>();
afterAll(async () => {
  for (const n of nodes.values()) await n.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const put = (n: RealNode, key: string, value: string) => n.node.propose(encodeKvCommand({ op: "put", key, value }));
const leaderOf = () => [...nodes.values()].find((n) => n.node.status().role === "Leader");

test("a 3-server cluster over TCP elects, replicates, fails over and catches a restarted server up by snapshot", async () => {
  const ids = ["a", "b", "c"];
  const ports = new Map<string, number>();
  for (const id of ids) {
    const n = await startRealNode({ id, dir: join(work, id), bootstrap: ids, peerPorts: ports, snapshotEntries: 50, keepEntries: 10 });
    ports.set(id, n.port);
    nodes.set(id, n);
  }
  await waitFor(() => leaderOf() !== undefined, 10_000, "a leader");
  const first = leaderOf()!;
  await Promise.all(Array.from({ length: 40 }, (_, i) => put(first, `k${i}`, "one")));

  // Lose the leader: the other two elect a new one and go on.
  await first.close();
  nodes.delete(first.id);
  await waitFor(() => leaderOf() !== undefined, 10_000, "a new leader");
  const second = leaderOf()!;
  expect(second.id).not.toBe(first.id);
  for (let round = 0; round < 4; round++) await Promise.all(Array.from({ length: 40 }, (_, i) => put(second, `k${i}`, `two-${round}`)));
  await second.node.read();

  // The old leader restarts from its disk on a new port; its log was compacted away on the others,
  // so it must be caught up by a snapshot.
  const log = memoryLogger("info");
  const back = await startRealNode({ id: first.id, dir: join(work, first.id), peerPorts: ports, snapshotEntries: 50, keepEntries: 10, logger: log });
  ports.set(first.id, back.port);
  nodes.set(first.id, back);
  const target = second.node.status().commit;
  await waitFor(() => back.node.status().applied >= target, 15_000, "the restarted server to catch up");
  for (let i = 0; i < 40; i++) expect(back.sm.get(`k${i}`)).toBe("two-3");
  expect(back.node.status().leader).toBe(second.id);
  expect(log.lines.some((l) => l.includes("installed snapshot from leader"))).toBe(true);
}, 60_000);
