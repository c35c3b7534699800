/**
 * Secondary-datacenter intermediates checked by real openssl: the CSR, the primary's signature, the
 * chain root -> intermediate -> leaf, and the refusals. Key material comes from WebCrypto; times,
 * serials and the cluster ID are fixed.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createCertificationRequest, generateEcPrivateKey, parseCertificate, parseCertificates, parseCertificationRequest, parseDuration } from "../../lib/index.ts";
import {
  createIntermediateCsr, DEFAULT_INTERMEDIATE_CERT_TTL, generateRoot, leafSigningKeyId, signIntermediateCsr, signLeaf, spiffeServiceId,
  spiffeSigningId, trustDomain,
} from "./index.ts";
import { OPENSSL, opensslWorkspace } from "../../../test/harness/openssl.ts";

const { file, openssl, text } = opensslWorkspace("causeway-connect-intermediate-");
/** openssl verify at a fixed time (ms), so the test does not depend on the wall clock. */
const verify = (at: number, rootPem: string, certPem: string, untrusted?: string) =>
  openssl("verify", "-attime", String(Math.floor(at / 1000)), "-CAfile", file(rootPem), ...(untrusted ? ["-untrusted", file(untrusted)] : []), file(certPem));
/** SHA-256 of the key's SubjectPublicKeyInfo DER, computed by openssl, as lower-case hex. */
const opensslKeyId = (keyPem: string) => {
  const spki = spawnSync(OPENSSL, ["pkey", "-in", file(keyPem), "-pubout", "-outform", "DER"]).stdout;
  return spawnSync(OPENSSL, ["dgst", "-sha256", "-r"], { input: spki, encoding: "utf8" }).stdout.split(" ")[0]!;
};

const CLUSTER = "11111111-2222-3333-4444-555555555555";
const TD = trustDomain(CLUSTER);
const NOW = Date.UTC(2024, 1, 29, 12, 0, 0);
const H = 3_600_000;
const TTL = parseDuration(DEFAULT_INTERMEDIATE_CERT_TTL);

const ecRoot = await generateRoot({ clusterId: CLUSTER, now: NOW, serial: 1 });
const rsaRoot = await generateRoot({ clusterId: CLUSTER, now: NOW, serial: 2, key: { type: "rsa", bits: 2048 } });
const dc2 = await createIntermediateCsr({ trustDomain: TD, datacenter: "dc2" });
const signAt = NOW + H;
const sign = (o: { csrPem: string; root?: typeof ecRoot; now?: number; ttlMs?: number; serial?: bigint | number }) => {
  const root = o.root ?? ecRoot;
  return signIntermediateCsr({
    rootCertPem: root.root.RootCert, rootKeyPem: root.privateKeyPem, csrPem: o.csrPem, trustDomain: TD,
    now: o.now ?? signAt, ttlMs: o.ttlMs ?? TTL, serial: o.serial ?? 5,
  });
};
const inter = await sign({ csrPem: dc2.csrPem });

describe("createIntermediateCsr", () => {
  test("an EC P-256 key and a CSR with a CN and the signing SPIFFE ID as its only SAN", async () => {
    expect(dc2.keyPem).toStartWith("-----BEGIN EC PRIVATE KEY-----");
    expect(openssl("ec", "-in", file(dc2.keyPem), "-text", "-noout").out).toContain("ASN1 OID: prime256v1");
    expect(openssl("req", "-in", file(dc2.csrPem), "-noout", "-verify").out).toMatch(/verify OK/);
    const t = openssl("req", "-in", file(dc2.csrPem), "-noout", "-text").out;
    expect(t).toContain("Subject: CN = Causeway CA Intermediate dc2");
    expect(t).toContain(`URI:${spiffeSigningId(TD)}`);
    const csr = await parseCertificationRequest(dc2.csrPem);
    expect(csr).toMatchObject({ commonName: "Causeway CA Intermediate dc2", uris: [`spiffe://${TD}`], dnsNames: [], ipAddresses: [] });
    expect(openssl("req", "-in", file(dc2.csrPem), "-noout", "-pubkey").out).toBe(openssl("pkey", "-in", file(dc2.keyPem), "-pubout").out);
  });

  test("other key settings; empty trust domain or datacenter refused", async () => {
    const p384 = await createIntermediateCsr({ trustDomain: TD, datacenter: "dc3", key: { type: "ec", bits: 384 } });
    expect(openssl("ec", "-in", file(p384.keyPem), "-text", "-noout").out).toContain("ASN1 OID: secp384r1");
    await expect(createIntermediateCsr({ trustDomain: "", datacenter: "dc2" })).rejects.toThrow(/trust domain/);
    await expect(createIntermediateCsr({ trustDomain: TD, datacenter: "" })).rejects.toThrow(/datacenter/);
    await expect(createIntermediateCsr({ trustDomain: TD, datacenter: "dc2", key: { type: "ec", bits: 224 } })).rejects.toThrow(/P-224/);
  });
});

describe("signIntermediateCsr", () => {
  test("the intermediate chains to the root and has Consul's CA fields", () => {
    expect(verify(signAt, ecRoot.root.RootCert, inter).out).toContain(": OK");
    const t = text(inter);
    expect(t).toContain("Subject: CN = Causeway CA Intermediate dc2");
    expect(t).toContain("Issuer: CN = Consul CA 1");
    expect(t).toContain("Serial Number: 5 (0x5)");
    expect(t).toMatch(/Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
    expect(t).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
    expect(t).toMatch(/Subject Alternative Name:\s+URI:spiffe:\/\/11111111-2222-3333-4444-555555555555\.consul\n/);
    expect(t).toContain("ecdsa-with-SHA256");
    expect(t).toContain("Not Before: Feb 29 12:59:00 2024 GMT");
    expect(t).toContain("Not After : Feb 28 12:59:00 2025 GMT");
    expect(openssl("x509", "-in", file(inter), "-noout", "-pubkey").out).toBe(openssl("pkey", "-in", file(dc2.keyPem), "-pubout").out);
  });

  test("SKI is the key ID of the CSR's key, AKI the root's", () => {
    const c = parseCertificate(inter);
    expect(c.subjectKeyIdHex).toBe(opensslKeyId(dc2.keyPem));
    expect(c.authorityKeyIdHex).toBe(ecRoot.root.SigningKeyID.replace(/:/g, ""));
    expect(c.notBefore.getTime()).toBe(signAt - 60_000);
    expect(c.notAfter.getTime() - c.notBefore.getTime()).toBe(TTL);
  });

  test("a leaf signed by the intermediate verifies with the root only through the intermediate", async () => {
    const leaf = await signLeaf({
      ca: { certPem: inter, keyPem: dc2.keyPem, intermediateCerts: [inter] }, trustDomain: TD, datacenter: "dc2", service: "web",
      now: signAt, ttlMs: 72 * H, serial: 0x1234n,
    });
    expect(parseCertificates(leaf.CertPEM).map((c) => c.subjectCommonName)).toEqual(["web", "Causeway CA Intermediate dc2"]);
    expect(verify(signAt, ecRoot.root.RootCert, leaf.CertPEM, inter).out).toContain(": OK");
    expect(verify(signAt, ecRoot.root.RootCert, leaf.CertPEM).ok).toBe(false);
    const c = parseCertificate(leaf.CertPEM);
    expect(c.issuerCommonName).toBe("Causeway CA Intermediate dc2");
    // Leaves compute their SKI as the intermediate's was computed: SHA-256 of the SubjectPublicKeyInfo.
    expect(c.subjectKeyIdHex).toBe(opensslKeyId(leaf.PrivateKeyPEM));
    expect(leafSigningKeyId(leaf.CertPEM)).toBe(parseCertificate(inter).subjectKeyIdHex.match(/../g)!.join(":"));
  });

  test("pathlen 0: a leaf under a CA that the intermediate signed does not verify", async () => {
    const sub = await createIntermediateCsr({ trustDomain: TD, datacenter: "dc9" });
    const subCert = await signIntermediateCsr({
      rootCertPem: inter, rootKeyPem: dc2.keyPem, csrPem: sub.csrPem, trustDomain: TD, now: signAt, ttlMs: H, serial: 6,
    });
    const leaf = await signLeaf({
      ca: { certPem: subCert, keyPem: sub.keyPem }, trustDomain: TD, datacenter: "dc9", service: "web", now: signAt, ttlMs: H, serial: 1,
    });
    expect(verify(signAt, ecRoot.root.RootCert, leaf.CertPEM, `${inter}${subCert}`).out).toContain("path length constraint exceeded");
  });

  test("an RSA root signs an EC intermediate, an EC root an RSA one; both chains verify with leaves", async () => {
    const fromRsa = await sign({ root: rsaRoot, csrPem: dc2.csrPem, serial: 7 });
    expect(text(fromRsa)).toContain("sha256WithRSAEncryption");
    expect(parseCertificate(fromRsa).authorityKeyIdHex).toBe(rsaRoot.root.SigningKeyID.replace(/:/g, ""));
    expect(verify(signAt, rsaRoot.root.RootCert, fromRsa).out).toContain(": OK");
    const rsaInter = await createIntermediateCsr({ trustDomain: TD, datacenter: "dc3", key: { type: "rsa", bits: 2048 } });
    expect(rsaInter.keyPem).toStartWith("-----BEGIN RSA PRIVATE KEY-----");
    const rsaCert = await sign({ csrPem: rsaInter.csrPem, serial: 8 });
    expect(parseCertificate(rsaCert).publicKey).toEqual({ kind: "RSA", bits: 2048 });
    expect(parseCertificate(rsaCert).subjectKeyIdHex).toBe(opensslKeyId(rsaInter.keyPem));
    for (const [root, cert, key] of [[rsaRoot, fromRsa, dc2.keyPem], [ecRoot, rsaCert, rsaInter.keyPem]] as const) {
      const leaf = await signLeaf({
        ca: { certPem: cert, keyPem: key, intermediateCerts: [cert] }, trustDomain: TD, datacenter: "dc2", service: "api",
        now: signAt, ttlMs: 72 * H, serial: 9,
      });
      expect(verify(signAt, root.root.RootCert, leaf.CertPEM, cert).out).toContain(": OK");
    }
  });

  test("validity never passes the root's notAfter; an expired root refuses", async () => {
    const rootEnd = parseCertificate(ecRoot.root.RootCert).notAfter.getTime();
    const late = rootEnd - 30 * 24 * H;
    const clamped = parseCertificate(await sign({ csrPem: dc2.csrPem, now: late, serial: 10 }));
    expect(clamped.notBefore.getTime()).toBe(late - 60_000);
    expect(clamped.notAfter.getTime()).toBe(rootEnd);
    const short = parseCertificate(await sign({ csrPem: dc2.csrPem, now: late, ttlMs: H, serial: 11 }));
    expect(short.notAfter.getTime()).toBe(late - 60_000 + H);
    await expect(sign({ csrPem: dc2.csrPem, now: rootEnd + 2 * 60_000 })).rejects.toThrow(/root certificate expired at 2034-03-01T12:00:00Z/);
  });

  test("refusals: URI count, service ID, other trust domain, bad scheme, bad signature, TTL, serial", async () => {
    const key = await generateEcPrivateKey();
    const csr = (uris: string[]) => createCertificationRequest({ keyPem: key, commonName: "x", uris });
    await expect(sign({ csrPem: await csr([]) })).rejects.toThrow("incoming CSR has unexpected number of URIs: 0");
    await expect(sign({ csrPem: await csr([`spiffe://${TD}`, `spiffe://${TD}`]) })).rejects.toThrow("incoming CSR has unexpected number of URIs: 2");
    const svc = spiffeServiceId({ trustDomain: TD, datacenter: "dc2", service: "web" });
    await expect(sign({ csrPem: await csr([svc]) })).rejects.toThrow(`incoming CSR URI "${svc}" is not a CA signing ID`);
    await expect(sign({ csrPem: await csr(["spiffe://other.consul"]) }))
      .rejects.toThrow(`incoming CSR domain "spiffe://other.consul" is not valid for our domain "spiffe://${TD}"`);
    const foreignSvc = spiffeServiceId({ trustDomain: "other.consul", datacenter: "dc2", service: "web" });
    await expect(sign({ csrPem: await csr([foreignSvc]) })).rejects.toThrow(`incoming CSR domain "${foreignSvc}" is not valid`);
    await expect(sign({ csrPem: await csr([`https://${TD}`]) })).rejects.toThrow("SPIFFE ID must have 'spiffe' scheme");
    // The trust domain's host compares case-insensitively (Consul's SpiffeIDSigning.Host lower-cases).
    expect(parseCertificate(await sign({ csrPem: await csr([`spiffe://${TD.toUpperCase()}`]), serial: 12 })).uris).toEqual([`spiffe://${TD.toUpperCase()}`]);
    // A request whose signature does not match its key (a byte of the signature flipped).
    const der = Buffer.from(dc2.csrPem.replace(/-----[^-]+-----|\s/g, ""), "base64");
    der[der.length - 5] ^= 0xff;
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    await expect(sign({ csrPem: bad })).rejects.toThrow(/signature does not verify|malformed/);
    await expect(sign({ csrPem: dc2.csrPem, ttlMs: 0 })).rejects.toThrow(/TTL/);
    await expect(sign({ csrPem: dc2.csrPem, serial: 0 })).rejects.toThrow(/serial/);
  });

  test("a CSR without a subject (as Consul 1.8 makes them) gets the default CN", async () => {
    const key = await generateEcPrivateKey();
    const cert = await sign({ csrPem: await createCertificationRequest({ keyPem: key, uris: [`spiffe://${TD}`] }), serial: 13 });
    expect(parseCertificate(cert).subjectCommonName).toBe("Causeway CA Intermediate");
    expect(verify(signAt, ecRoot.root.RootCert, cert).out).toContain(": OK");
  });
});
