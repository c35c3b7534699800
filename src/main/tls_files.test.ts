import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCa, createLeaf } from "../lib/index.ts";
import { seededRng } from "../platform/index.ts";
import { buildConfig, defaultConfig, type TlsSettings } from "./config.ts";
import { loadTlsFiles } from "./tls_files.ts";

const dir = mkdtempSync(join(tmpdir(), "causeway-tlsfiles-"));
const f = (name: string) => join(dir, name);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const rng = seededRng(9);
  const now = Date.UTC(2026, 0, 1);
  const ca = await createCa({ days: 30, now, rng });
  const server = await createLeaf({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, commonName: "server.dc1.consul", dnsNames: ["server.dc1.consul", "localhost"], ipAddresses: ["127.0.0.1"], days: 30, now, rng, usage: "server" });
  const client = await createLeaf({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, commonName: "client.dc1.consul", dnsNames: ["client.dc1.consul"], ipAddresses: [], days: 30, now, rng, usage: "client" });
  writeFileSync(f("ca.pem"), ca.certPem);
  writeFileSync(f("server.pem"), server.certPem);
  writeFileSync(f("server-key.pem"), server.keyPem);
  writeFileSync(f("client.pem"), client.certPem);
  writeFileSync(f("client-key.pem"), client.keyPem);
  writeFileSync(f("garbage.pem"), "not a certificate");
  // WAN federation server certificates: one naming this node, one with the wildcard.
  const leaf = (dnsNames: string[]) => createLeaf({ caCertPem: ca.certPem, caKeyPem: ca.keyPem, commonName: "server.dc1.consul", dnsNames, ipAddresses: [], days: 30, now, rng, usage: "server" });
  for (const [name, names] of [["s1", ["s1.server.dc1.consul", "server.dc1.consul"]], ["wild", ["*.server.dc1.consul", "server.dc1.consul"]]] as const) {
    const issued = await leaf([...names]);
    writeFileSync(f(`${name}.pem`), issued.certPem);
    writeFileSync(f(`${name}-key.pem`), issued.keyPem);
  }
});

const config = (tls: Partial<TlsSettings>, server = true) => buildConfig({ ...defaultConfig("h"), dataDir: "/d", server }, [{ tls }]);

describe("loadTlsFiles", () => {
  test("loads matching files whose certificate names server.<dc>.<domain>", async () => {
    const loaded = await loadTlsFiles(config({ caFile: f("ca.pem"), certFile: f("server.pem"), keyFile: f("server-key.pem"), verifyIncomingRpc: true }));
    expect(loaded?.verifyIncomingRpc).toBe(true);
    expect(String(loaded?.material.cert)).toContain("BEGIN CERTIFICATE");
  });

  test("without a certificate there is no TLS", async () => {
    expect(await loadTlsFiles(config({}))).toBeUndefined();
  });

  test("clear errors naming the setting and the file", async () => {
    const base = { caFile: f("ca.pem"), certFile: f("server.pem"), keyFile: f("server-key.pem") };
    await expect(loadTlsFiles(config({ ...base, caFile: f("missing.pem") }))).rejects.toThrow(`ca_file ${f("missing.pem")} cannot be read: ENOENT`);
    await expect(loadTlsFiles(config({ ...base, keyFile: f("client-key.pem") }))).rejects.toThrow(`key_file ${f("client-key.pem")} is not the private key of cert_file ${f("server.pem")}`);
    await expect(loadTlsFiles(config({ ...base, certFile: f("client.pem"), keyFile: f("client-key.pem") }))).rejects.toThrow("must name server.dc1.consul to serve as a server certificate (it names client.dc1.consul)");
    await expect(loadTlsFiles(config({ ...base, caFile: f("garbage.pem") }))).rejects.toThrow(`ca_file ${f("garbage.pem")} is not a PEM certificate bundle`);
    await expect(loadTlsFiles(config({ ...base, certFile: f("garbage.pem") }))).rejects.toThrow(`cert_file ${f("garbage.pem")} is not a PEM certificate`);
    if (process.getuid?.() !== 0) {
      chmodSync(f("server-key.pem"), 0o000);
      await expect(loadTlsFiles(config(base))).rejects.toThrow("cannot be read: EACCES");
      chmodSync(f("server-key.pem"), 0o600);
    }
  });

  test("a client agent's certificate need not name a server", async () => {
    expect(await loadTlsFiles(config({ caFile: f("ca.pem"), certFile: f("client.pem"), keyFile: f("client-key.pem") }, false))).toBeDefined();
  });

  test("with WAN federation a server certificate must also name <node>.server.<dc>.<domain> or the wildcard", async () => {
    const wanfed = (cert: string, key: string) =>
      buildConfig({ ...defaultConfig("s1"), dataDir: "/d", server: true }, [{
        federation: { meshGatewayWanFederation: true },
        tls: { caFile: f("ca.pem"), certFile: f(cert), keyFile: f(key), verifyIncomingRpc: true, verifyOutgoing: true, verifyServerHostname: true },
      }]);
    expect(await loadTlsFiles(wanfed("s1.pem", "s1-key.pem"))).toBeDefined();
    expect(await loadTlsFiles(wanfed("wild.pem", "wild-key.pem"))).toBeDefined();
    await expect(loadTlsFiles(wanfed("server.pem", "server-key.pem"))).rejects.toThrow(
      `cert_file ${f("server.pem")} must name s1.server.dc1.consul (or *.server.dc1.consul) for 'connect.enable_mesh_gateway_wan_federation = true': ` +
        "mesh gateways route server traffic by that name (it names server.dc1.consul, localhost)",
    );
  });

  test("settings that cannot work together are config errors", () => {
    expect(() => config({ certFile: f("server.pem") })).toThrow("cert_file and key_file must be set together");
    expect(() => config({ verifyOutgoing: true })).toThrow("require ca_file");
    expect(() => config({ caFile: f("ca.pem"), verifyIncomingRpc: true })).toThrow("require cert_file and key_file");
  });
});
