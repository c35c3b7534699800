/**
 * Roots, leaves and rotation checked by real openssl (`openssl verify`, `openssl x509 -text`).
 * Key material comes from WebCrypto; everything else (times, serials, cluster ID) is fixed.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { createCertificationRequest, generateEcPrivateKey, parseCertificate, parseCertificates } from "../../lib/index.ts";
import {
  caRootFromPem, crossSignRoot, generateRoot, importRoot, leafSigningKeyId, rotateRoots, shouldRotateLeaf, signCsr, signLeaf,
  spiffeServiceId, trustDomain,
} from "./index.ts";
import { OPENSSL, opensslWorkspace } from "../../../test/harness/openssl.ts";

const { file, openssl, text } = opensslWorkspace("causeway-connect-ca-");
/** openssl verify at a fixed time (seconds), so the test does not depend on the wall clock. */
const verify = (at: number, caFile: string, leafPem: string, untrusted?: string) =>
  openssl("verify", "-attime", String(Math.floor(at / 1000)), "-CAfile", caFile, ...(untrusted ? ["-untrusted", untrusted] : []), file(leafPem));

const CLUSTER = "11111111-2222-3333-4444-555555555555";
const TD = trustDomain(CLUSTER);
const NOW = Date.UTC(2024, 1, 29, 12, 0, 0); // a leap day: +10 years lands on 1 March
const H = 3_600_000;

const r1 = await generateRoot({ clusterId: CLUSTER, now: NOW, serial: 1 });
const leaf1 = await signLeaf({
  ca: { certPem: r1.root.RootCert, keyPem: r1.privateKeyPem }, trustDomain: TD, datacenter: "dc1", service: "web", now: NOW, ttlMs: 72 * H, serial: 2,
});

describe("root", () => {
  test("openssl sees a self-signed P-256 CA with Consul's fields", () => {
    const t = text(r1.root.RootCert);
    expect(t).toContain("Subject: CN = Consul CA 1");
    expect(t).toContain("Issuer: CN = Consul CA 1");
    expect(t).toContain("Serial Number: 1 (0x1)");
    expect(t).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(t).toMatch(/Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign/);
    expect(t).toContain(`URI:spiffe://${TD}`);
    expect(t).toContain("ASN1 OID: prime256v1");
    expect(t).toContain("ecdsa-with-SHA256");
    expect(t).toContain("Not Before: Feb 29 12:00:00 2024 GMT");
    expect(t).toContain("Not After : Mar  1 12:00:00 2034 GMT");
    expect(openssl("verify", "-attime", String(NOW / 1000), "-CAfile", file(r1.root.RootCert), file(r1.root.RootCert)).ok).toBe(true);
  });

  test("CARoot fields follow parseCARoot", async () => {
    const fp = openssl("x509", "-noout", "-fingerprint", "-sha1", "-in", file(r1.root.RootCert)).out.trim().split("=")[1]!;
    expect(r1.root.ID).toBe(fp.toLowerCase());
    const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(text(r1.root.RootCert))![1]!;
    expect(r1.root.SigningKeyID).toBe(ski.toLowerCase());
    expect(r1.root.SigningKeyID.split(":")).toHaveLength(32); // SHA-256 key ID like Consul's connect.KeyId
    // connect.KeyId = SHA-256 of the SubjectPublicKeyInfo DER.
    const spki = spawnSync(OPENSSL, ["pkey", "-in", file(r1.privateKeyPem), "-pubout", "-outform", "DER"]).stdout;
    const sha = spawnSync(OPENSSL, ["dgst", "-sha256", "-c"], { input: spki, encoding: "utf8" }).stdout.trim().split("= ")[1];
    expect(r1.root.SigningKeyID).toBe(sha!);
    expect(r1.root).toMatchObject({
      Name: "Consul CA Root Cert", SerialNumber: 1, ExternalTrustDomain: CLUSTER, NotBefore: "2024-02-29T12:00:00Z",
      NotAfter: "2034-03-01T12:00:00Z", IntermediateCerts: [], Active: true, PrivateKeyType: "ec", PrivateKeyBits: 256,
    });
    expect(r1.privateKeyPem).toStartWith("-----BEGIN EC PRIVATE KEY-----");
    expect(openssl("ec", "-in", file(r1.privateKeyPem), "-check", "-noout").out).toContain("EC Key valid");
    expect(await caRootFromPem(r1.root.RootCert, { clusterId: CLUSTER })).toEqual(r1.root);
  });

  test("a configured private key is used; importRoot accepts a matching pair and rejects a mismatch", async () => {
    const key = await generateEcPrivateKey();
    const r = await generateRoot({ clusterId: CLUSTER, now: NOW, serial: 9, privateKeyPem: key });
    expect(r.privateKeyPem).toBe(key);
    expect((await importRoot({ rootCertPem: r.root.RootCert, privateKeyPem: key, clusterId: CLUSTER })).root.ID).toBe(r.root.ID);
    await expect(importRoot({ rootCertPem: r.root.RootCert, privateKeyPem: r1.privateKeyPem, clusterId: CLUSTER })).rejects.toThrow(/does not match/);
    await expect(importRoot({ rootCertPem: leaf1.CertPEM, privateKeyPem: leaf1.PrivateKeyPEM, clusterId: CLUSTER })).rejects.toThrow(/not a CA/);
    await expect(generateRoot({ clusterId: CLUSTER, now: NOW, serial: 0 })).rejects.toThrow(/serial/);
  });
});

describe("leaf", () => {
  test("openssl verifies it against the root and shows the SPIFFE URI, usages and validity", () => {
    expect(verify(NOW, file(r1.root.RootCert), leaf1.CertPEM).out).toContain(": OK");
    expect(openssl("verify", "-attime", String(NOW / 1000), "-purpose", "sslserver", "-CAfile", file(r1.root.RootCert), file(leaf1.CertPEM)).ok).toBe(true);
    expect(openssl("verify", "-attime", String(NOW / 1000), "-purpose", "sslclient", "-CAfile", file(r1.root.RootCert), file(leaf1.CertPEM)).ok).toBe(true);
    const t = text(leaf1.CertPEM);
    expect(t).toContain("Subject: CN = web");
    expect(t).toContain("Issuer: CN = Consul CA 1");
    expect(t).toContain(`URI:spiffe://${TD}/ns/default/dc/dc1/svc/web`);
    expect(t).not.toContain("DNS:");
    expect(t).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(t).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment, Data Encipherment, Key Agreement/);
    expect(t).toContain("TLS Web Client Authentication, TLS Web Server Authentication");
    expect(t).toContain("Not Before: Feb 29 11:59:00 2024 GMT");
    expect(t).toContain("Not After : Mar  3 11:59:00 2024 GMT");
    expect(verify(NOW + 72 * H - 60_000 + 1000, file(r1.root.RootCert), leaf1.CertPEM).out).toContain("certificate has expired");
  });

  test("IssuedCert fields", () => {
    expect(leaf1).toMatchObject({
      SerialNumber: "02", Service: "web", ServiceURI: spiffeServiceId({ trustDomain: TD, datacenter: "dc1", service: "web" }),
      ValidAfter: "2024-02-29T11:59:00Z", ValidBefore: "2024-03-03T11:59:00Z",
    });
    expect(leaf1.PrivateKeyPEM).toStartWith("-----BEGIN EC PRIVATE KEY-----");
    const fromKey = openssl("pkey", "-pubout", "-in", file(leaf1.PrivateKeyPEM)).out;
    expect(openssl("x509", "-pubkey", "-noout", "-in", file(leaf1.CertPEM)).out).toBe(fromKey);
    expect(leafSigningKeyId(leaf1.CertPEM)).toBe(r1.root.SigningKeyID);
  });

  test("extra DNS/IP SANs and a namespace; large serials are colon hex", async () => {
    const l = await signLeaf({
      ca: { certPem: r1.root.RootCert, keyPem: r1.privateKeyPem }, trustDomain: TD, datacenter: "dc1", service: "ingress", namespace: "ns1",
      dnsNames: ["*.ingress.consul"], ipAddresses: ["10.0.0.1"], now: NOW, ttlMs: H, serial: 0x1234_5678_9abcn,
    });
    expect(text(l.CertPEM)).toContain(`DNS:*.ingress.consul, IP Address:10.0.0.1, URI:spiffe://${TD}/ns/ns1/dc/dc1/svc/ingress`);
    expect(l.SerialNumber).toBe("12:34:56:78:9a:bc");
  });

  test("signCsr signs a valid request and rejects foreign or malformed ones", async () => {
    const key = await generateEcPrivateKey();
    const ctx = { ca: { certPem: r1.root.RootCert, keyPem: r1.privateKeyPem }, trustDomain: TD, datacenter: "dc1", now: NOW, ttlMs: 72 * H, serial: 10 };
    const csr = (uris: string[]) => createCertificationRequest({ keyPem: key, uris });
    const good = await csr([spiffeServiceId({ trustDomain: TD, datacenter: "dc1", service: "api" })]);
    expect(openssl("req", "-in", file(good), "-noout", "-verify").out).toMatch(/verify OK|Certificate request self-signature verify OK/);
    const issued = await signCsr({ ...ctx, csrPem: good });
    expect(issued).toMatchObject({ Service: "api", PrivateKeyPEM: "", SerialNumber: "0a" });
    expect(verify(NOW, file(r1.root.RootCert), issued.CertPEM).ok).toBe(true);
    expect(openssl("x509", "-pubkey", "-noout", "-in", file(issued.CertPEM)).out).toBe(openssl("pkey", "-pubout", "-in", file(key)).out);
    await expect(signCsr({ ...ctx, csrPem: await csr([spiffeServiceId({ trustDomain: "other.consul", datacenter: "dc1", service: "api" })]) }))
      .rejects.toThrow(/different trust domain/);
    await expect(signCsr({ ...ctx, csrPem: await csr([spiffeServiceId({ trustDomain: TD, datacenter: "dc2", service: "api" })]) }))
      .rejects.toThrow(/different datacenter: dc2, we are dc1/);
    await expect(signCsr({ ...ctx, csrPem: await csr([`spiffe://${TD}`]) })).rejects.toThrow(/must be a service ID/);
    await expect(signCsr({ ...ctx, csrPem: await csr([]) })).rejects.toThrow(/number of URIs: 0/);
    // A request whose signature does not match its key (bytes of the signature flipped).
    const der = Buffer.from(good.replace(/-----[^-]+-----|\s/g, ""), "base64");
    der[der.length - 5] ^= 0xff;
    const bad = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    await expect(signCsr({ ...ctx, csrPem: bad })).rejects.toThrow(/signature|malformed/);
  });

  test("bad TTL throws", async () => {
    await expect(signLeaf({ ca: { certPem: r1.root.RootCert, keyPem: r1.privateKeyPem }, trustDomain: TD, datacenter: "dc1", service: "w", now: NOW, ttlMs: 0, serial: 3 }))
      .rejects.toThrow(/TTL/);
  });
});

describe("rotation", async () => {
  const later = NOW + 24 * H;
  const r2 = await generateRoot({ clusterId: CLUSTER, now: later, serial: 20 });
  const cross = await crossSignRoot({ newRootCertPem: r2.root.RootCert, oldRootCertPem: r1.root.RootCert, oldRootKeyPem: r1.privateKeyPem, now: later, serial: 21 });
  const roots = rotateRoots([{ ...r1.root, CreateIndex: 5, ModifyIndex: 5 }], r2.root, cross);
  const active = roots.find((r) => r.Active)!;
  const leaf2 = await signLeaf({
    ca: { certPem: active.RootCert, keyPem: r2.privateKeyPem, intermediateCerts: active.IntermediateCerts },
    trustDomain: TD, datacenter: "dc1", service: "web", now: later, ttlMs: 72 * H, serial: 22,
  });
  const at = later + H;

  test("the cross-signed certificate is the new root's key and subject, issued by the old root for 7 days", () => {
    const t = text(cross);
    expect(t).toContain("Subject: CN = Consul CA 20");
    expect(t).toContain("Issuer: CN = Consul CA 1");
    expect(t).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(t).toContain(`URI:spiffe://${TD}`);
    const x = parseCertificate(cross), n2 = parseCertificate(r2.root.RootCert);
    expect(x.subjectKeyIdHex).toBe(n2.subjectKeyIdHex);
    expect(x.authorityKeyIdHex).toBe(r1.root.SigningKeyID.replace(/:/g, ""));
    expect(x.notAfter.getTime() - x.notBefore.getTime()).toBe(7 * 24 * H);
    expect(x.notBefore.getTime()).toBe(later - 60_000);
    expect(openssl("x509", "-noout", "-pubkey", "-in", file(cross)).out).toBe(openssl("x509", "-noout", "-pubkey", "-in", file(r2.root.RootCert)).out);
  });

  test("roots list: old root kept inactive, new root active with the cross-signed cert", () => {
    expect(roots.map((r) => [r.ID, r.Active, r.IntermediateCerts.length])).toEqual([[r1.root.ID, false, 0], [r2.root.ID, true, 1]]);
    expect(roots[0]!.ModifyIndex).toBe(5);
    expect(() => rotateRoots(roots, r2.root)).toThrow(/already/);
  });

  test("new leaves carry the cross-signed cert; a peer trusting only the OLD root accepts them through it", () => {
    const chain = parseCertificates(leaf2.CertPEM);
    expect(chain.map((c) => c.subjectCommonName)).toEqual(["web", "Consul CA 20"]);
    expect(chain[1]!.issuerCommonName).toBe("Consul CA 1");
    const oldOnly = file(r1.root.RootCert);
    expect(verify(at, oldOnly, leaf2.CertPEM, file(cross)).out).toContain(": OK");
    expect(verify(at, oldOnly, leaf2.CertPEM).ok).toBe(false);
  });

  test("old leaves keep verifying against the roots bundle (old root inactive but still listed)", () => {
    const bundle = file(roots.map((r) => r.RootCert).join(""));
    expect(verify(at, bundle, leaf1.CertPEM).out).toContain(": OK");
    expect(verify(at, bundle, leaf2.CertPEM).out).toContain(": OK");
    expect(verify(at, file(r2.root.RootCert), leaf2.CertPEM).ok).toBe(true);
    // The cross-signed cert certifies the NEW key: it does not make old leaves chain to the new root alone.
    expect(verify(at, file(r2.root.RootCert), leaf1.CertPEM, file(cross)).ok).toBe(false);
  });

  test("agents notice the rotation: leaf1's signing key is no longer the active one", () => {
    const base = { validAfter: Date.parse(leaf1.ValidAfter), validBefore: Date.parse(leaf1.ValidBefore), now: later, rng: { next: () => 0 } };
    expect(shouldRotateLeaf({ ...base, signingKeyId: leafSigningKeyId(leaf1.CertPEM), activeSigningKeyId: r1.root.SigningKeyID }).rotate).toBe(false);
    expect(shouldRotateLeaf({ ...base, signingKeyId: leafSigningKeyId(leaf1.CertPEM), activeSigningKeyId: active.SigningKeyID }))
      .toEqual({ rotate: true, renewAt: later, reason: "root-changed" });
    expect(leafSigningKeyId(leaf2.CertPEM)).toBe(active.SigningKeyID);
  });
});
