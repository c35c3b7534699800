/**
 * The Connect CA against a real `causeway agent -dev`: the leader creates a root whose certificate
 * carries the SPIFFE trust domain; a leaf for "web" verifies against it with openssl; after a new root
 * is configured (`causeway connect ca set-config` with an operator's RSA key in PKCS#1 form), the old
 * leaf still verifies against the roots bundle, and the agent replaces its cached leaf with one that the
 * RSA root signed. Then PrivateKeyType/PrivateKeyBits alone rotate to a generated EC P-384 root, and bad
 * key settings are refused with 400 without changing anything.
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
    CLI, "agent", "-dev", "-bind", "127.0.0.1", "-http-port", "0", "-dns-port", "-1", "-grpc-port", "-1", "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
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

  expect(active).toMatchObject({ PrivateKeyType: "ec", PrivateKeyBits: 256 });

  // An operator-supplied root for the same cluster, from an RSA key made by openssl (PKCS#1 PEM).
  const rsaKey = run(["openssl", "genrsa", "-traditional", "2048"]).out;
  expect(rsaKey).toStartWith("-----BEGIN RSA PRIVATE KEY-----");
  const next = await generateRoot({ clusterId: config.ClusterID, now: Date.now(), serial: 4242, privateKeyPem: rsaKey });
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
  expect(rotated).toMatchObject({ PrivateKeyType: "rsa", PrivateKeyBits: 2048 });
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
  expect(run(["openssl", "x509", "-in", leaf2Pem, "-noout", "-text"]).out).toContain("Signature Algorithm: sha256WithRSAEncryption");
  expect(verify(rootPem, leaf2Pem).code).not.toBe(0);
  // A peer that trusts only the old root accepts the new leaf through the cross-signed certificate.
  const xc = file("xc.pem", rotated.IntermediateCerts[0]);
  expect(run(["openssl", "verify", "-CAfile", rootPem, "-untrusted", xc, leaf2Pem]).out).toContain("OK");

  // Bad configurations are refused with 400 and change nothing.
  const putConfig = (body: unknown) => fetch(`${agent.httpUrl}/v1/connect/ca/configuration`, { method: "PUT", body: JSON.stringify(body) });
  const configBefore = await getJson(agent, "/v1/connect/ca/configuration");
  const p224 = run(["openssl", "ecparam", "-genkey", "-name", "secp224r1", "-noout"]).out;
  for (const [body, message] of [
    [{ Config: { LeafCertTTL: "soon" } }, "Missing CA provider"],
    [{ Provider: "consul", Config: { PrivateKeyType: "rsa", PrivateKeyBits: 3072 } }, "error configuring provider: RSA key length must be 2048 or 4096 bits"],
    [{ Provider: "consul", Config: { PrivateKeyType: "ec", PrivateKeyBits: 300 } }, "error configuring provider: ECDSA key length must be one of (224, 256, 384, 521) bits"],
    [{ Provider: "consul", Config: { PrivateKeyType: "dsa" } }, "error configuring provider: private key type must be either 'ecdsa' or 'rsa'"],
    [{ Provider: "consul", Config: { PrivateKey: p224 } }, "error configuring provider: unsupported EC curve P-224"],
    [{ Provider: "consul", Config: { PrivateKey: rsaKey, RootCert: active.RootCert } }, "error configuring provider: RootCert does not match PrivateKey"],
  ] as const) {
    const res = await putConfig(body);
    expect([res.status, (await res.text()).startsWith(message)]).toEqual([400, true]);
  }
  expect(await getJson(agent, "/v1/connect/ca/configuration")).toEqual(configBefore);
  expect((await getJson(agent, "/v1/connect/ca/roots")).Roots).toHaveLength(2);

  // PrivateKeyType/PrivateKeyBits alone rotate to a generated key of that kind, cross-signed by the RSA root.
  const index2 = Number(res2.headers.get("X-Consul-Index"));
  const p384 = await putConfig({ Provider: "consul", Config: { LeafCertTTL: "72h", PrivateKeyType: "ec", PrivateKeyBits: 384 } });
  expect(p384.status).toBe(200);
  const third = await getJson(agent, "/v1/connect/ca/roots");
  // Roots are listed in ID (fingerprint) order, which is arbitrary: compare them as a set.
  expect(third.Roots.map((r: { PrivateKeyType: string; PrivateKeyBits: number; Active: boolean }) => `${r.PrivateKeyType}/${r.PrivateKeyBits}/${r.Active}`).sort())
    .toEqual(["ec/256/false", "ec/384/true", "rsa/2048/false"]);
  expect((await getJson(agent, "/v1/connect/ca/configuration")).Config).toMatchObject({ PrivateKeyType: "ec", PrivateKeyBits: 384 });
  const ecRoot = third.Roots.find((r: { Active: boolean }) => r.Active);
  const res3 = await fetch(`${agent.httpUrl}/v1/agent/connect/ca/leaf/web?index=${index2}&wait=45s`);
  const leaf3Pem = file("leaf3.pem", (await res3.json()).CertPEM);
  expect(verify(file("p384-root.pem", ecRoot.RootCert), leaf3Pem).out).toContain("OK");
  expect(run(["openssl", "x509", "-in", leaf3Pem, "-noout", "-text"]).out).toContain("Signature Algorithm: ecdsa-with-SHA256");
  // Trusting only the RSA root, the new leaf still verifies through the cross-signed P-384 root.
  expect(run(["openssl", "verify", "-CAfile", newRootPem, "-untrusted", file("xc2.pem", ecRoot.IntermediateCerts[0]), leaf3Pem]).out).toContain("OK");
}, 150_000);
