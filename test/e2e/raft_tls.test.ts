/**
 * Three servers form a Raft cluster through their server ports: native mutual TLS, ALPN causeway/raft,
 * verify_incoming_rpc on. A server with a certificate from another CA cannot take part.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryLogger, silentLogger } from "../../src/platform/index.ts";
import { encodeKvCommand } from "../harness/kv_state_machine.ts";
import { startRealNode, waitFor, type RealNode } from "../harness/real_raft.ts";
import { testPki } from "../harness/tls_fixtures.ts";

const pki = testPki();
const work = mkdtempSync(join(tmpdir(), "causeway-raft-tls-"));
const nodes: RealNode[] = [];
afterAll(async () => {
  for (const n of nodes) await n.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

test("a 3-server cluster forms over real sockets with mutual TLS, replicates, and streams a snapshot to a late server", async () => {
  const ids = ["a", "b", "c"];
  const ports = new Map<string, number>();
  const material = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
  const start = async (id: string, logger = silentLogger()) => {
    const n = await startRealNode({ id, dir: join(work, id), bootstrap: ids, peerPorts: ports, tls: material, snapshotEntries: 20, keepEntries: 5, logger });
    ports.set(id, n.port);
    nodes.push(n);
    return n;
  };
  const a = await start("a");
  const b = await start("b");
  await waitFor(() => [a, b].some((n) => n.node.status().role === "Leader"), 10_000, "a leader");
  const leader = [a, b].find((n) => n.node.status().role === "Leader")!;
  for (let i = 0; i < 60; i++) expect((await leader.node.propose(encodeKvCommand({ op: "put", key: `k${i % 7}`, value: `v${i}` }))).ok).toBe(true);
  // c has missed entries that are compacted away by now: it can only catch up from a snapshot.
  const log = memoryLogger("info");
  const c = await start("c", log);
  await waitFor(() => c.sm.get("k4") === "v53", 10_000, "the late server to catch up");
  expect(log.lines.some((l) => l.includes("installed snapshot from leader"))).toBe(true);
  expect((await leader.node.propose(encodeKvCommand({ op: "put", key: "k", value: "tls" }))).ok).toBe(true);
  await waitFor(() => nodes.every((n) => n.sm.get("k") === "tls"), 10_000, "replication to every server");
}, 30_000);

test("a server whose certificate comes from another CA is refused by the others and learns nothing", async () => {
  const ids = ["d", "e", "f"];
  const ports = new Map<string, number>();
  const good = { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key };
  const rogue = { ca: pki.rogueCa.cert, cert: pki.rogueClient.cert, key: pki.rogueClient.key };
  const cluster: RealNode[] = [];
  for (const id of ids) {
    const n = await startRealNode({ id, dir: join(work, id), bootstrap: ids, peerPorts: ports, tls: id === "f" ? rogue : good });
    ports.set(id, n.port);
    cluster.push(n);
    nodes.push(n);
  }
  const [d, e, f] = cluster as [RealNode, RealNode, RealNode];
  await waitFor(() => d.node.status().role === "Leader" || e.node.status().role === "Leader", 10_000, "a leader among the trusted servers");
  const leader = d.node.status().role === "Leader" ? d : e;
  expect((await leader.node.propose(encodeKvCommand({ op: "put", key: "k", value: "secret" }))).ok).toBe(true);
  await waitFor(() => d.sm.get("k") === "secret" && e.sm.get("k") === "secret", 10_000, "replication to the trusted servers");
  // Absence can only be shown by waiting: give f ten heartbeat rounds to (wrongly) hear anything.
  await new Promise((r) => setTimeout(r, 400));
  expect(f.sm.get("k")).toBeUndefined();
  expect(f.node.status().leader).not.toBe(leader.id);
}, 30_000);
