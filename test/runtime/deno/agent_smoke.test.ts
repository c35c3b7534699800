/**
 * Deno smoke suite: Causeway runs from source on Deno. Checks the SQLite durability settings and an
 * in-process `agent -dev` answering the HTTP API. Run with `deno test -A test/runtime/deno/`.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite, silentLogger } from "../../../src/platform/index.ts";
import { startAgent } from "../../../src/main/agent.ts";
import { loadAgentConfig } from "../../../src/main/commands/agent.ts";

Deno.test("sqlite runs WAL with synchronous=FULL and keeps a committed row", () => {
  const dir = mkdtempSync(join(tmpdir(), "causeway-deno-sqlite-"));
  try {
    const path = join(dir, "s.db");
    const db = openSqlite(path);
    assert.equal(db.pragma("journal_mode"), "wal");
    assert.equal(db.pragma("synchronous"), 2);
    db.exec("CREATE TABLE t (v TEXT)");
    db.transaction(() => db.prepare("INSERT INTO t VALUES (?)").run("kept"));
    db.close();
    const again = openSqlite(path);
    assert.deepEqual(again.prepare("SELECT v FROM t").all().map((r) => r.v), ["kept"]);
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test({
  name: "agent -dev serves /v1/agent/self, elects itself Raft leader, stores KV, then shuts down",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { config } = loadAgentConfig(["-dev", "-node", "deno-node", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0"]);
    const agent = await startAgent(config!, silentLogger());
    try {
      const url = `http://${agent.addresses.http}`;
      const self = await (await fetch(`${url}/v1/agent/self`)).json();
      assert.equal(self.Config.NodeName, "deno-node");
      assert.equal(self.Config.Server, true);
      let leader = "";
      for (let i = 0; i < 200 && leader === ""; i++) {
        leader = await (await fetch(`${url}/v1/status/leader`)).json();
        if (leader === "") await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(leader, agent.addresses.server);

      // The replicated state over node:http on Deno: a KV write through Raft, a read, a blocking read.
      const put = await fetch(`${url}/v1/kv/deno/key`, { method: "PUT", body: "from deno" });
      assert.equal(await put.json(), true);
      const got = await fetch(`${url}/v1/kv/deno/key?raw`);
      assert.equal(await got.text(), "from deno");
      const index = Number((await fetch(`${url}/v1/kv/deno/key`)).headers.get("X-Consul-Index"));
      const blocked = fetch(`${url}/v1/kv/deno/key?index=${index}&wait=10s`);
      await fetch(`${url}/v1/kv/deno/key`, { method: "PUT", body: "changed" });
      const woke = await blocked;
      assert.ok(Number(woke.headers.get("X-Consul-Index")) > index);
      await woke.body?.cancel();

      // Connect on Deno: the leader creates the CA; the agent makes a key and CSR and gets a leaf.
      let roots: { ActiveRootID: string; TrustDomain: string } = { ActiveRootID: "", TrustDomain: "" };
      for (let i = 0; i < 200 && !roots.ActiveRootID; i++) {
        roots = await (await fetch(`${url}/v1/connect/ca/roots`)).json();
        if (!roots.ActiveRootID) await new Promise((r) => setTimeout(r, 25));
      }
      assert.match(roots.TrustDomain, /^[0-9a-f-]{36}\.consul$/);
      const leaf = await (await fetch(`${url}/v1/agent/connect/ca/leaf/web`)).json();
      assert.equal(leaf.ServiceURI, `spiffe://${roots.TrustDomain}/ns/default/dc/dc1/svc/web`);
      assert.match(leaf.CertPEM, /BEGIN CERTIFICATE/);
      assert.match(leaf.PrivateKeyPEM, /PRIVATE KEY/);
    } finally {
      await agent.shutdown();
    }
  },
});
