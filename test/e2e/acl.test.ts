/**
 * ACLs end to end against a real `causeway agent -dev` with `acl { enabled = true, default_policy =
 * "deny" }`, a master token and the agent token set: a request without a token sees nothing, a scoped
 * token reads and writes only its prefix, a sidecar registered with a service-identity token gets its
 * configuration over xDS (its watches read with that token), an xDS stream without service:write is
 * refused, and a stream token revoked meanwhile ends the stream.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { ClusterSchema } from "../../src/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { adsClient, CDS } from "../harness/ads_client.ts";
import { agentCall, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";

const ROOT = "3f0c1d2e-4b5a-4c6d-8e7f-0a1b2c3d4e5f";
let agent: AgentProcess;
let grpcAddr = "";
let work = "";

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "cw-acl-e2e-"));
  // token_ttl 1s: the agent re-resolves a token a second after it last did, so a revocation shows quickly.
  writeFileSync(join(work, "acl.json"), JSON.stringify({ acl: { enabled: true, default_policy: "deny", token_ttl: "1s", tokens: { master: ROOT, agent: ROOT } } }));
  agent = await startAgentProcess(process.execPath, [
    "src/main/cli.ts", "agent", "-dev", "-config-file", join(work, "acl.json"), "-bind", "127.0.0.1",
    "-http-port", "0", "-dns-port", "-1", "-grpc-port", "0", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
  grpcAddr = /gRPC: ([\d.]+:\d+)/.exec(agent.output())?.[1] ?? "";
});
afterAll(async () => {
  await agent?.stop("SIGKILL").catch(() => {});
  if (work) rmSync(work, { recursive: true, force: true });
});

const call = (method: string, path: string, token?: string, body?: unknown) => agentCall(agent.httpUrl, method, path, token, body);

test("default deny: nothing without a token, a scoped token's prefix only, xDS for a sidecar with its own token, refusal and revocation", async () => {
  // The leader makes the master token at leadership; the CA root comes with Connect.
  await poll(() => call("GET", "/v1/acl/token/self", ROOT), (r) => r.status === 200, 20_000, "the master token");
  expect((await call("PUT", "/v1/acl/bootstrap")).status).toBe(403); // the master token used up bootstrap
  await poll(() => call("GET", "/v1/connect/ca/roots", ROOT), (r) => typeof r.json?.ActiveRootID === "string" && r.json.ActiveRootID !== "", 20_000, "an active CA root");

  expect((await call("PUT", "/v1/kv/app/x", ROOT, "1")).json).toBe(true);
  expect((await call("PUT", "/v1/kv/secret/y", ROOT, "2")).json).toBe(true);

  // No token: the anonymous token under default deny.
  expect((await call("GET", "/v1/kv/app/x")).status).toBe(403);
  expect((await call("GET", "/v1/kv/?recurse")).status).toBe(404); // everything filtered away
  expect((await call("GET", "/v1/catalog/services")).json).toEqual({});
  expect((await call("GET", "/v1/catalog/nodes")).json).toEqual([]);
  expect((await call("PUT", "/v1/kv/app/z", undefined, "3")).status).toBe(403);
  expect((await call("GET", "/v1/acl/tokens")).status).toBe(403);
  expect((await call("GET", "/v1/agent/self")).status).toBe(403);
  expect((await call("GET", "/v1/operator/raft/configuration")).status).toBe(403);
  // The operator call reaches the server's Operator service with the request's token, checked there too.
  expect((await call("GET", "/v1/operator/raft/configuration", ROOT)).json.Servers).toHaveLength(1);

  // A token scoped to app/.
  const policy = await call("PUT", "/v1/acl/policy", ROOT, { Name: "app-kv", Rules: `key_prefix "app/" { policy = "write" }` });
  expect(policy.status).toBe(200);
  const app = (await call("PUT", "/v1/acl/token", ROOT, { Description: "app", Policies: [{ Name: "app-kv" }] })).json.SecretID as string;
  expect((await call("GET", "/v1/kv/app/x?raw", app)).text).toBe("1");
  expect((await call("GET", "/v1/kv/?recurse", app)).json.map((e: { Key: string }) => e.Key)).toEqual(["app/x"]);
  expect((await call("GET", "/v1/kv/secret/y", app)).status).toBe(403);
  expect((await call("PUT", "/v1/kv/app/z", app, "3")).json).toBe(true);
  expect((await call("PUT", "/v1/kv/secret/z", app, "3")).text).toBe("Permission denied\n");
  expect((await call("GET", "/v1/kv/secret/z", ROOT)).status).toBe(404); // the refused write wrote nothing

  // A sidecar registered with a service-identity token: its proxy's watches read with that token.
  const webToken = async (description: string) =>
    (await call("PUT", "/v1/acl/token", ROOT, { Description: description, ServiceIdentities: [{ ServiceName: "web" }] })).json as { SecretID: string; AccessorID: string };
  const web = await webToken("web registration");
  const reg = await call("PUT", "/v1/agent/service/register", web.SecretID, {
    Name: "web", Port: 8080, Connect: { SidecarService: { Port: 21000, Proxy: { Upstreams: [{ DestinationName: "db", LocalBindPort: 9191 }] } } },
  });
  expect([reg.status, reg.text]).toEqual([200, ""]);
  expect((await call("PUT", "/v1/agent/service/register", app, { Name: "other", Port: 1 })).status).toBe(403);
  // Anti-entropy wrote it with its token: the catalog shows it to a reader, and still nothing to anonymous.
  await poll(() => call("GET", "/v1/catalog/service/web", web.SecretID), (r) => r.json?.length === 1, 10_000, "web in the catalog");
  expect((await call("GET", "/v1/catalog/service/web")).json).toEqual([]);

  expect(grpcAddr).not.toBe("");
  // Without a token (anonymous): refused.
  const anonymous = adsClient(grpcAddr, "web-sidecar-proxy", "web");
  try {
    anonymous.request(CDS);
    await expect(anonymous.next(CDS, 5000)).rejects.toThrow(/permission denied/i);
  } finally {
    anonymous.close();
  }
  // With a token that may not write web (the app token): refused; with an unknown one: ACL not found.
  for (const [token, why] of [[app, /permission denied/i], ["no-such-token", /ACL not found/]] as const) {
    const ads = adsClient(grpcAddr, "web-sidecar-proxy", "web", undefined, { "x-consul-token": token });
    try {
      ads.request(CDS);
      await expect(ads.next(CDS, 5000)).rejects.toThrow(why);
    } finally {
      ads.close();
    }
  }

  // With its own token: the proxy's clusters (the db upstream's chain read with the registration token).
  const xds = await webToken("web xds");
  const ads = adsClient(grpcAddr, "web-sidecar-proxy", "web", undefined, { "x-consul-token": xds.SecretID });
  try {
    ads.request(CDS);
    const cds = await ads.next(CDS);
    const names = cds.resources.map((a) => fromBinary(ClusterSchema, a.value).name).sort();
    expect(names).toContain("local_app");
    expect(names.some((n) => n.startsWith("db.default.dc1.internal."))).toBe(true);
    ads.request(CDS, [], cds);

    // Revoke the stream's token; the next configuration change re-checks it and ends the stream.
    expect((await call("DELETE", `/v1/acl/token/${xds.AccessorID}`, ROOT)).json).toBe(true);
    let port = 9200;
    const ended = await poll(async () => {
      // A new upstream changes the proxy's configuration (read with the still valid registration token).
      const r = await call("PUT", "/v1/agent/service/register", web.SecretID, {
        Name: "web", Port: 8080, Connect: { SidecarService: { Port: 21000, Proxy: { Upstreams: [{ DestinationName: "db", LocalBindPort: port++ }] } } },
      });
      expect(r.status).toBe(200);
      return ads.nextAny(1000).then(() => "", (err: Error) => err.message);
    }, (msg) => /ACL not found/.test(msg), 20_000, "the stream to end after its token was revoked");
    expect(ended).toMatch(/ACL not found/);
  } finally {
    ads.close();
  }
  // Secrets never reach the log.
  for (const secret of [ROOT, app, web.SecretID, xds.SecretID]) expect(agent.output()).not.toContain(secret);
}, 90_000);
