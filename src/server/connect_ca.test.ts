import { describe, expect, test } from "bun:test";
import { leafSigningKeyId, parseSpiffeId, type CAConfiguration } from "../connect/index.ts";
import { spawnSync } from "node:child_process";
import { createCertificationRequest, generateEcPrivateKey, parseCertificate, pemEncode, privateKeyInfo } from "../lib/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import type { StateCommand } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { fakeCaState } from "./connect_ca_fixtures.test.ts";
import { createConnectCa } from "./connect_ca.ts";

/** A CSR as the agent makes it: a fresh key, the service's SPIFFE ID as the only URI SAN. */
async function csrFor(service: string, clusterId = "00000000-0000-0000-0000-000000000000", dc = "dc1"): Promise<string> {
  return createCertificationRequest({ keyPem: await generateEcPrivateKey(), uris: [`spiffe://${clusterId}.consul/ns/default/dc/${dc}/svc/${service}`] });
}


function setup() {
  const s = fakeCaState();
  const ca = createConnectCa({ clock: simClock(), rng: seededRng(7), logger: silentLogger(), datacenter: "dc1", ...s });
  return { s, ca };
}

describe("leader CA initialisation", () => {
  test("with no CA, proposes one set-roots with a new cluster ID, one active root and the config holding its key", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    expect(s.proposed).toHaveLength(1);
    const cmd = s.proposed[0] as Extract<StateCommand, { type: "ca"; op: "set-roots" }>;
    expect(cmd.op).toBe("set-roots");
    expect(cmd.index).toBe(0);
    expect(cmd.roots).toHaveLength(1);
    const root = cmd.roots[0]!;
    expect(root.Active).toBe(true);
    const config = cmd.config as CAConfiguration;
    expect(config.ClusterID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(config.Config.PrivateKey).toContain("PRIVATE KEY");
    expect(parseCertificate(root.RootCert).uris).toEqual([`spiffe://${config.ClusterID}.consul`]);
    // Leadership again (or a second leader): nothing to do.
    await ca.initialize();
    expect(s.proposed).toHaveLength(1);
  });

  test("signLeaf signs with the active root for this datacenter with the configured TTL", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const td = s.read().config!.ClusterID;
    const cert = await ca.signLeaf("web", await csrFor("web", td));
    const id = parseSpiffeId(cert.ServiceURI);
    expect(id).toMatchObject({ kind: "service", service: "web", datacenter: "dc1", namespace: "default" });
    expect(Date.parse(cert.ValidBefore) - Date.parse(cert.ValidAfter)).toBe(72 * 3_600_000);
    expect(leafSigningKeyId(cert.CertPEM)).toBe(s.read().roots[0]!.SigningKeyID);
    expect(cert.PrivateKeyPEM).toBe(""); // the key stays with the agent that made the CSR
    const other = await ca.signLeaf("web", await csrFor("web", td));
    // A CSR for another service, trust domain or datacenter is refused.
    await expect(ca.signLeaf("web", await csrFor("db", td))).rejects.toThrow(/not "web"/);
    await expect(ca.signLeaf("web", await csrFor("web"))).rejects.toThrow(/different trust domain/);
    await expect(ca.signLeaf("web", await csrFor("web", td, "dc2"))).rejects.toThrow(/different datacenter/);
    expect(other.SerialNumber).not.toBe(cert.SerialNumber);
  });

  test("signLeaf before the CA exists rejects", async () => {
    const { ca } = setup();
    await expect(ca.signLeaf("web", await csrFor("web"))).rejects.toThrow(/not initialised/);
  });
});

describe("CA configuration", () => {
  test("a change without a new key only sets the config, keeping the key and cluster ID", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const before = s.read();
    await ca.setConfiguration({
      ClusterID: "ignored", Provider: "consul", CreateIndex: 0, ModifyIndex: 0,
      Config: { LeafCertTTL: "24h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h" },
    });
    expect(s.proposed.map((c) => (c as { op: string }).op)).toEqual(["set-roots", "set-config"]);
    const after = s.read();
    expect(after.config!.ClusterID).toBe(before.config!.ClusterID);
    expect(after.config!.Config.PrivateKey).toBe(before.config!.Config.PrivateKey);
    expect(after.config!.Config.LeafCertTTL).toBe("24h");
    const leaf = await ca.signLeaf("api", await csrFor("api", s.read().config!.ClusterID));
    expect(Date.parse(leaf.ValidBefore) - Date.parse(leaf.ValidAfter)).toBe(24 * 3_600_000);
  });

  test("a new root rotates: the old root stays inactive, the new one is active with a cross-signed cert", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const old = s.read();
    const oldRoot = old.roots[0]!;
    // A second CA's key and root, as an operator would supply.
    const other = setup();
    await other.ca.initialize();
    const supplied = other.s.read();
    await ca.setConfiguration({
      ...old.config!, ClusterID: "",
      Config: { ...old.config!.Config, PrivateKey: supplied.config!.Config.PrivateKey, RootCert: supplied.roots[0]!.RootCert },
    });
    expect(s.proposed).toHaveLength(2);
    const now = s.read();
    expect(now.roots).toHaveLength(2);
    const inactive = now.roots.find((r) => r.ID === oldRoot.ID)!;
    const active = now.roots.find((r) => r.Active)!;
    expect(inactive.Active).toBe(false);
    expect(active.ID).toBe(supplied.roots[0]!.ID);
    expect(active.IntermediateCerts).toHaveLength(1);
    const xc = parseCertificate(active.IntermediateCerts[0]!);
    expect(xc.authorityKeyIdHex.replace(/(..)(?!$)/g, "$1:")).toBe(oldRoot.SigningKeyID);
    expect(now.config!.ClusterID).toBe(old.config!.ClusterID);
    expect(now.config!.Config.PrivateKey).toBe(supplied.config!.Config.PrivateKey);
    // New leaves come from the new key and carry the cross-signed certificate.
    const leaf = await ca.signLeaf("web", await csrFor("web", s.read().config!.ClusterID));
    expect(leafSigningKeyId(leaf.CertPEM)).toBe(active.SigningKeyID);
    expect(leaf.CertPEM.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
  });

  test("a key alone rotates to a root generated from it; a RootCert without a key is refused", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const other = setup();
    await other.ca.initialize();
    const cfg = s.read().config!;
    await expect(ca.setConfiguration({ ...cfg, Config: { ...cfg.Config, PrivateKey: "", RootCert: other.s.read().roots[0]!.RootCert } }))
      .rejects.toThrow("error configuring provider: must provide a private key when providing a root cert");
    await ca.setConfiguration({ ...cfg, Config: { LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h", PrivateKey: other.s.read().config!.Config.PrivateKey } });
    const roots = s.read().roots;
    expect(roots.filter((r) => r.Active)).toHaveLength(1);
    expect(roots.find((r) => r.Active)!.SigningKeyID).toBe(other.s.read().roots[0]!.SigningKeyID);
  });

  test("a non-consul provider and a bad LeafCertTTL are refused before anything is proposed", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const cfg = s.read().config!;
    await expect(ca.setConfiguration({ ...cfg, Provider: "vault" as "consul" })).rejects.toThrow(/unknown CA provider/);
    await expect(ca.setConfiguration({ ...cfg, Config: { ...cfg.Config, LeafCertTTL: "soon" } })).rejects.toThrow(/Invalid LeafCertTTL/);
    expect(s.proposed).toHaveLength(1);
  });
});

describe("CA key types (PrivateKeyType / PrivateKeyBits, Consul 1.8)", () => {
  const ops = (s: ReturnType<typeof fakeCaState>) => s.proposed.map((c) => (c as { op: string }).op);
  const active = (s: ReturnType<typeof fakeCaState>) => s.read().roots.find((r) => r.Active)!;
  const withConfig = (s: ReturnType<typeof fakeCaState>, extra: Partial<CAConfiguration["Config"]>): CAConfiguration => {
    const cfg = s.read().config!;
    return { ...cfg, Config: { LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h", ...extra } };
  };

  test("a stored config naming rsa/2048 makes the first root an RSA one, its key PKCS#1 like Consul's", async () => {
    const s = fakeCaState();
    const seeded = { ClusterID: "00000000-0000-0000-0000-00000000000a", Provider: "consul" as const, CreateIndex: 0, ModifyIndex: 0,
      Config: { LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h", PrivateKeyType: "rsa", PrivateKeyBits: 2048 } };
    const read = () => ({ ...s.read(), config: s.read().config ?? seeded });
    const ca = createConnectCa({ clock: simClock(), rng: seededRng(3), logger: silentLogger(), datacenter: "dc1", ...s, read });
    await ca.initialize();
    expect(active(s)).toMatchObject({ PrivateKeyType: "rsa", PrivateKeyBits: 2048 });
    expect(s.read().config!.Config.PrivateKey).toStartWith("-----BEGIN RSA PRIVATE KEY-----");
    const leaf = await ca.signLeaf("web", await csrFor("web", seeded.ClusterID));
    expect(leafSigningKeyId(leaf.CertPEM)).toBe(active(s).SigningKeyID);
  });

  test("naming another kind of key rotates to a generated one, cross-signed across key types; naming the same or none keeps it", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const first = active(s);
    expect(first).toMatchObject({ PrivateKeyType: "ec", PrivateKeyBits: 256 });

    await ca.setConfiguration(withConfig(s, { PrivateKeyType: "ec", PrivateKeyBits: 384 }));
    const p384 = active(s);
    expect(p384).toMatchObject({ PrivateKeyType: "ec", PrivateKeyBits: 384 });
    expect(parseCertificate(p384.IntermediateCerts[0]!).authorityKeyIdHex.replace(/(..)(?!$)/g, "$1:")).toBe(first.SigningKeyID);
    expect(s.read().config!.Config).toMatchObject({ PrivateKeyType: "ec", PrivateKeyBits: 384 });

    await ca.setConfiguration(withConfig(s, { PrivateKeyType: "ec", PrivateKeyBits: 384 }));
    await ca.setConfiguration(withConfig(s, { LeafCertTTL: "24h", RootCert: p384.RootCert }));
    expect(ops(s)).toEqual(["set-roots", "set-roots", "set-config", "set-config"]);
    expect(active(s).ID).toBe(p384.ID);

    await ca.setConfiguration(withConfig(s, { PrivateKeyType: "rsa", PrivateKeyBits: 2048 }));
    const rsa = active(s);
    expect(rsa).toMatchObject({ PrivateKeyType: "rsa", PrivateKeyBits: 2048 });
    expect(s.read().roots.map((r) => [r.PrivateKeyBits, r.Active])).toEqual([[256, false], [384, false], [2048, true]]);
    expect(parseCertificate(rsa.IntermediateCerts[0]!).authorityKeyIdHex.replace(/(..)(?!$)/g, "$1:")).toBe(p384.SigningKeyID);
    const leaf = await ca.signLeaf("web", await csrFor("web", s.read().config!.ClusterID));
    expect(leafSigningKeyId(leaf.CertPEM)).toBe(rsa.SigningKeyID);
  });

  test("a supplied key's own type counts: an RSA key with the default settings rotates to an RSA root", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const rsa = spawnSync("openssl", ["genrsa", "-traditional", "2048"], { encoding: "utf8" }).stdout;
    await ca.setConfiguration(withConfig(s, { PrivateKey: rsa }));
    expect(active(s)).toMatchObject({ PrivateKeyType: "rsa", PrivateKeyBits: 2048 });
    expect(privateKeyInfo(s.read().config!.Config.PrivateKey!)).toEqual({ type: "rsa", bits: 2048 });
  });

  test("bad settings and unusable keys are refused with Consul's text and propose nothing", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const p224 = spawnSync("openssl", ["ecparam", "-genkey", "-name", "secp224r1", "-noout"], { encoding: "utf8" }).stdout;
    const rsa1024 = spawnSync("openssl", ["genrsa", "-traditional", "1024"], { encoding: "utf8" }).stdout;
    const cases: [Partial<CAConfiguration["Config"]>, string][] = [
      [{ PrivateKeyType: "rsa" }, "error configuring provider: RSA key length must be 2048 or 4096 bits"],
      [{ PrivateKeyType: "ec", PrivateKeyBits: 512 }, "error configuring provider: ECDSA key length must be one of (224, 256, 384, 521) bits"],
      [{ PrivateKeyType: "" }, "error configuring provider: private key type must be either 'ecdsa' or 'rsa'"],
      [{ PrivateKeyBits: 224 }, "error configuring provider: ECDSA P-224 keys are not supported"],
      [{ PrivateKey: p224 }, "error configuring provider: unsupported EC curve P-224 (1.3.132.0.33)"],
      [{ PrivateKey: rsa1024 }, "error configuring provider: RSA key must be at least 2048 bits, PrivateKey has 1024"],
      [{ PrivateKey: "not a key" }, "error configuring provider: no PEM PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY block found"],
      [{ PrivateKey: pemEncode("EC PRIVATE KEY", Uint8Array.from([0x30, 0x03, 0x02, 0x01, 0x01])) }, "error configuring provider: malformed EC PRIVATE KEY (SEC1)"],
      [{ PrivateKey: pemEncode("PRIVATE KEY", Uint8Array.from([1, 2, 3])) }, "error configuring provider: malformed PRIVATE KEY (PKCS#8)"],
    ];
    for (const [extra, message] of cases) {
      const err = await ca.setConfiguration(withConfig(s, extra)).then(() => undefined, (e: Error) => e.message);
      expect(err).toStartWith(message);
    }
    expect(ops(s)).toEqual(["set-roots"]);
  });
});
