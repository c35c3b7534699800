/**
 * The Connect CA against a real `causeway agent -dev`: the leader creates a root whose certificate
 * carries the SPIFFE trust domain; a leaf for "web" verifies against it with openssl; after a new root
 * is configured (`causeway connect ca set-config`), the old leaf still verifies against the roots
 * bundle, and the agent replaces its cached leaf with one that verifies against the new root.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateRoot } from "../../src/connect/index.ts";
import { poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { CLI, getJson } from "../harness/server_cluster.ts";

const work = mkdtempSync(join(tmpdir(), "causeway-connect-ca-"));
let agent: AgentProcess;
beforeAll(async () => {
  agent = await startAgentProcess(process.execPath, [
    CLI, "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
});
afterAll(async () => {
  await agent?.stop("SIGKILL").catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

const run = (cmd: string[]) => {
  const r = Bun.spawnSync(cmd, { env: { ...process.env, NO_COLOR: "1" } });
  return { code: r.exitCode, out: new TextDecoder().decode(r.stdout), err: new TextDecoder().decode(r.stderr) };
};
const cli = (...args: string[]) => run([process.execPath, CLI, ...args, "-http-addr", agent.httpUrl]);
const file = (name: string, text: string) => {
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
};
const verify = (caFile: string, leafFile: string) => run(["openssl", "verify", "-CAfile", caFile, leafFile]);

test("roots, a verifying leaf, and a root rotation that keeps old leaves valid", async () => {
  const roots = await poll(() => getJson(agent, "/v1/connect/ca/roots"), (r) => typeof r?.ActiveRootID === "string" && r.ActiveRootID !== "", 20_000, "an active CA root");
  expect(roots.TrustDomain).toMatch(/^[0-9a-f-]{36}\.consul$/);
  const active = roots.Roots.find((r: { Active: boolean }) => r.Active);
  expect(active.ID).toBe(roots.ActiveRootID);
  expect(active.IntermediateCerts).toBeNull();
  expect(JSON.stringify(roots)).not.toContain("PRIVATE KEY");
  const rootPem = file("root.pem", active.RootCert);
  const text = run(["openssl", "x509", "-in", rootPem, "-noout", "-text"]);
  expect(text.code).toBe(0);
  expect(text.out).toContain(`URI:spiffe://${roots.TrustDomain}`);
  expect(await getJson(agent, "/v1/agent/connect/ca/roots")).toMatchObject({ ActiveRootID: roots.ActiveRootID });

  const res1 = await fetch(`${agent.httpUrl}/v1/agent/connect/ca/leaf/web`);
  expect(res1.status).toBe(200);
  const index1 = Number(res1.headers.get("X-Consul-Index"));
  const leaf1 = await res1.json();
  expect(leaf1.ServiceURI).toBe(`spiffe://${roots.TrustDomain}/ns/default/dc/dc1/svc/web`);
  const leaf1Pem = file("leaf1.pem", leaf1.CertPEM);
  expect(verify(rootPem, leaf1Pem).out).toContain("OK");
  // Served from the agent's cache.
  expect((await getJson(agent, "/v1/agent/connect/ca/leaf/web")).SerialNumber).toBe(leaf1.SerialNumber);

  const got = cli("connect", "ca", "get-config");
  expect(got.code).toBe(0);
  const config = JSON.parse(got.out);
  expect(config.ClusterID).toBe(roots.TrustDomain.replace(/\.consul$/, ""));
  expect(config.Config.PrivateKey).toBeUndefined();

  // An operator-supplied root for the same cluster.
  const next = await generateRoot({ clusterId: config.ClusterID, now: Date.now(), serial: 4242 });
  const cfgFile = file("ca.json", JSON.stringify({ Provider: "consul", Config: { LeafCertTTL: "72h", PrivateKey: next.privateKeyPem, RootCert: next.root.RootCert } }));
  const set = cli("connect", "ca", "set-config", "-config-file", cfgFile);
  expect(set.err).toBe("");
  expect(set.out).toBe("Configuration updated!\n");

  const after = await getJson(agent, "/v1/connect/ca/roots");
  expect(after.ActiveRootID).toBe(next.root.ID);
  expect(after.Roots).toHaveLength(2);
  const old = after.Roots.find((r: { ID: string }) => r.ID === roots.ActiveRootID);
  expect(old.Active).toBe(false);
  const rotated = after.Roots.find((r: { Active: boolean }) => r.Active);
  expect(rotated.IntermediateCerts).toHaveLength(1);
  const bundle = file("bundle.pem", after.Roots.map((r: { RootCert: string }) => r.RootCert).join("\n"));
  expect(verify(bundle, leaf1Pem).out).toContain("OK");

  // The agent notices the new root and re-signs within its 30 s jitter window; block on the leaf.
  const res2 = await fetch(`${agent.httpUrl}/v1/agent/connect/ca/leaf/web?index=${index1}&wait=45s`);
  const leaf2 = await res2.json();
  expect(Number(res2.headers.get("X-Consul-Index"))).toBeGreaterThan(index1);
  expect(leaf2.SerialNumber).not.toBe(leaf1.SerialNumber);
  const newRootPem = file("new-root.pem", next.root.RootCert);
  const leaf2Pem = file("leaf2.pem", leaf2.CertPEM);
  expect(verify(newRootPem, leaf2Pem).out).toContain("OK");
  expect(verify(rootPem, leaf2Pem).code).not.toBe(0);
  // A peer that trusts only the old root accepts the new leaf through the cross-signed certificate.
  const xc = file("xc.pem", rotated.IntermediateCerts[0]);
  expect(run(["openssl", "verify", "-CAfile", rootPem, "-untrusted", xc, leaf2Pem]).out).toContain("OK");

  // A bad configuration is refused with 400.
  const bad = await fetch(`${agent.httpUrl}/v1/connect/ca/configuration`, { method: "PUT", body: `{"Config":{"LeafCertTTL":"soon"}}` });
  expect(bad.status).toBe(400);
}, 90_000);
