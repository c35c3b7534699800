/**
 * ACLs across two datacenters (servers meeting in the WAN pool on loopback): the secondary replicates
 * the primary's policies, roles and global tokens (enable_token_replication) with its replication
 * token, resolves a token it does not hold yet through the primary, sends global ACL writes to the
 * primary and keeps local tokens to itself; `/v1/acl/replication` shows the replication. A revoked
 * token stops working in the secondary once the deletion replicated.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentCall, freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { writeServerTlsConfig } from "../harness/tls_fixtures.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-acl-repl-"));
const running: AgentProcess[] = [];
afterAll(async () => {
  for (const a of running) await a.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const ROOT = "5e1c2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f";

const call = (agent: AgentProcess, method: string, path: string, token?: string, body?: unknown) => agentCall(agent.httpUrl, method, path, token, body);

test("a secondary replicates the primary's ACLs, resolves through it meanwhile, and forwards global writes to it", async () => {
  const wan1 = await freePort();
  // Servers talk across datacenters only over TLS: both run with certificates of one test CA.
  const start = (dc: "dc1" | "dc2", wanPort: number, wanJoin: string[], acl: object) => {
    const dir = join(work, dc);
    writeFileSync(join(work, `${dc}.json`), JSON.stringify({ primary_datacenter: "dc1", acl, ...writeServerTlsConfig(dir, dc) }));
    return startAgentProcess(process.execPath, [
      cli, "agent", "-server", "-bootstrap-expect", "1", "-datacenter", dc, "-node", `srv-${dc}`, "-data-dir", join(dir, "data"), "-config-file", join(work, `${dc}.json`),
      "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", String(wanPort),
      ...wanJoin.flatMap((a) => ["-retry-join-wan", a]), "-retry-interval-wan", "1s",
    ]);
  };
  const dc1 = await start("dc1", wan1, [], { enabled: true, default_policy: "deny", tokens: { master: ROOT, agent: ROOT } });
  running.push(dc1);
  await poll(() => call(dc1, "GET", "/v1/acl/token/self", ROOT), (r) => r.status === 200, 30_000, "dc1's master token");
  const policy = (await call(dc1, "PUT", "/v1/acl/policy", ROOT, { Name: "app-kv", Rules: `key_prefix "app/" { policy = "write" }` })).json;
  const app = (await call(dc1, "PUT", "/v1/acl/token", ROOT, { Description: "app", Policies: [{ ID: policy.ID }] })).json;
  expect(app.SecretID).toBeString();

  const dc2 = await start("dc2", 0, [`127.0.0.1:${wan1}`], {
    enabled: true, default_policy: "deny", enable_token_replication: true, tokens: { agent: ROOT, replication: ROOT },
  });
  running.push(dc2);
  await poll(() => call(dc2, "GET", "/v1/catalog/datacenters"), (r) => r.json?.length === 2, 30_000, "the WAN pool");

  // The secondary's leader replicates; until then (and after) the app token works there.
  const status = await poll(() => call(dc2, "GET", "/v1/acl/replication", ROOT), (r) => r.json?.ReplicatedTokenIndex > 0 && r.json?.ReplicatedIndex > 0, 30_000, "ACL replication");
  expect(status.json).toMatchObject({ Enabled: true, Running: true, SourceDatacenter: "dc1", ReplicationType: "tokens" });
  expect((await call(dc1, "GET", "/v1/acl/replication", ROOT)).json).toMatchObject({ Enabled: false, Running: false });
  expect((await call(dc2, "GET", `/v1/acl/policy/${policy.ID}`, ROOT)).json).toMatchObject({ Name: "app-kv" });
  expect((await call(dc2, "GET", `/v1/acl/token/${app.AccessorID}`, ROOT)).json).toMatchObject({ Description: "app", Local: false });

  expect((await call(dc2, "PUT", "/v1/kv/app/x", app.SecretID, "1")).json).toBe(true);
  expect((await call(dc2, "PUT", "/v1/kv/other", app.SecretID, "1")).status).toBe(403);
  expect((await call(dc2, "GET", "/v1/kv/app/x")).status).toBe(403); // anonymous

  // A global policy made through the secondary is written in the primary, and replicates back.
  const made = await call(dc2, "PUT", "/v1/acl/policy", ROOT, { Name: "from-dc2", Rules: `key_prefix "dc2/" { policy = "read" }` });
  expect(made.status).toBe(200);
  expect((await call(dc1, "GET", "/v1/acl/policy/name/from-dc2", ROOT)).json).toMatchObject({ ID: made.json.ID });
  await poll(() => call(dc2, "GET", "/v1/acl/policy/name/from-dc2", ROOT), (r) => r.status === 200, 30_000, "from-dc2 replicated back");

  // A local token stays in the secondary.
  const local = await call(dc2, "PUT", "/v1/acl/token", ROOT, { Description: "dc2 only", Local: true, Policies: [{ ID: policy.ID }] });
  expect(local.json).toMatchObject({ Local: true });
  expect((await call(dc2, "GET", "/v1/kv/app/x?raw", local.json.SecretID)).text).toBe("1");
  expect((await call(dc1, "GET", `/v1/acl/token/${local.json.AccessorID}`, ROOT)).status).toBe(403); // ACL not found in dc1

  // Revoked in the primary: refused in the secondary once the deletion replicated.
  expect((await call(dc1, "DELETE", `/v1/acl/token/${app.AccessorID}`, ROOT)).json).toBe(true);
  const refused = await poll(() => call(dc2, "GET", "/v1/kv/app/x", app.SecretID), (r) => r.status === 403, 30_000, "the revoked token refused in dc2");
  expect(refused.text).toBe("ACL not found\n");
}, 120_000);
