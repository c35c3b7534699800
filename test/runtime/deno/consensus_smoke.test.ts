/**
 * Deno smoke suite: the consensus driver runs on Deno with the segment log store on the real disk and
 * the TCP transport on loopback (3 servers elect a leader and replicate a write).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeKvCommand } from "../../harness/kv_state_machine.ts";
import { startRealNode, waitFor, type RealNode } from "../../harness/real_raft.ts";

Deno.test({
  name: "consensus: 3 servers over TCP with durable logs elect a leader and replicate",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = mkdtempSync(join(tmpdir(), "causeway-deno-raft-"));
    const nodes: RealNode[] = [];
    try {
      const ids = ["a", "b", "c"];
      const ports = new Map<string, number>();
      for (const id of ids) {
        const n = await startRealNode({ id, dir: join(dir, id), bootstrap: ids, peerPorts: ports });
        ports.set(id, n.port);
        nodes.push(n);
      }
      await waitFor(() => nodes.some((n) => n.node.status().role === "Leader"), 10_000, "a leader");
      const leader = nodes.find((n) => n.node.status().role === "Leader")!;
      const result = await leader.node.propose(encodeKvCommand({ op: "put", key: "k", value: "v" }));
      assert.equal(result.ok, true);
      await waitFor(() => nodes.every((n) => n.sm.get("k") === "v"), 10_000, "replication");
    } finally {
      for (const n of nodes) await n.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
});
