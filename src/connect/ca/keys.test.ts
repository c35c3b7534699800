/**
 * Roots of every supported key kind -- generated here (EC P-256/384/521, RSA 2048/4096) or supplied by
 * an operator (keys and self-signed roots made by openssl, in SEC1, PKCS#1 and PKCS#8 PEM) -- sign leaves
 * that openssl verifies, and cross-sign each other across key types.
 */
import { describe, expect, test } from "bun:test";
import { createCertificationRequest, generateEcPrivateKey, parseCertificate } from "../../lib/index.ts";
import {
  caRootFromPem, crossSignRoot, generateRoot, importRoot, keySettings, leafSigningKeyId, namesKeySettings, signCsr, trustDomain,
  type RootWithKey,
} from "./index.ts";
import { opensslWorkspace } from "../../../test/harness/openssl.ts";

const { file, openssl, text } = opensslWorkspace("causeway-ca-keys-");

const CLUSTER = "11111111-2222-3333-4444-555555555555";
const TD = trustDomain(CLUSTER);
const H = 3_600_000;

/** A key made by openssl, then a self-signed CA for it made by `openssl req -x509` (SHA-1 SKI, not Consul's). */
function opensslRoot(keyArgs: string[]): { keyPem: string; certPem: string } {
  const key = openssl(...keyArgs);
  if (!key.ok) throw new Error(key.out);
  const keyFile = file(key.out);
  const cert = openssl("req", "-x509", "-new", "-key", keyFile, "-subj", "/CN=Operator Root", "-days", "3650",
    "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-addext", `subjectAltName=URI:spiffe://${TD}`);
  if (!cert.ok) throw new Error(cert.out);
  return { keyPem: key.out, certPem: cert.out };
}

const supplied = {
  "rsa 2048, PKCS#1": opensslRoot(["genrsa", "-traditional", "2048"]),
  "rsa 4096, PKCS#8": opensslRoot(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:4096"]),
  "ec 256, SEC1": opensslRoot(["ecparam", "-genkey", "-name", "prime256v1", "-noout"]),
  "ec 384, PKCS#8": opensslRoot(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]),
  "ec 521, SEC1": opensslRoot(["ecparam", "-genkey", "-name", "secp521r1", "-noout"]),
};
// Everything happens inside the validity of the openssl roots (they start at the wall clock).
const T0 = Math.max(...Object.values(supplied).map((r) => parseCertificate(r.certPem).notBefore.getTime()));
const AT = T0 + H;

const csr = async (service: string) =>
  createCertificationRequest({ keyPem: await generateEcPrivateKey(), uris: [`spiffe://${TD}/ns/default/dc/dc1/svc/${service}`] });
let serial = 100;
const leafOf = async (ca: RootWithKey, service = "web") =>
  signCsr({
    ca: { certPem: ca.root.RootCert, keyPem: ca.privateKeyPem, intermediateCerts: ca.root.IntermediateCerts }, trustDomain: TD,
    datacenter: "dc1", now: AT, ttlMs: 72 * H, serial: serial++, csrPem: await csr(service),
  });
const verify = (caPem: string, leafPem: string, untrusted?: string) =>
  openssl("verify", "-attime", String(Math.floor(AT / 1000)), "-x509_strict", "-CAfile", file(caPem),
    ...(untrusted ? ["-untrusted", file(untrusted)] : []), file(leafPem));
const sigAlg = (type: string) => (type === "rsa" ? "sha256WithRSAEncryption" : "ecdsa-with-SHA256");
const curveName: Record<number, string> = { 256: "prime256v1", 384: "secp384r1", 521: "secp521r1" };

describe("generated roots of each PrivateKeyType / PrivateKeyBits", () => {
  const kinds = [["ec", 256], ["ec", 384], ["ec", 521], ["rsa", 2048], ["rsa", 4096]] as const;
  for (const [type, bits] of kinds) {
    test(`${type} ${bits}: the key is Consul's PEM form, the root reports it, openssl verifies a leaf signed with ${sigAlg(type)}`, async () => {
      const r = await generateRoot({ clusterId: CLUSTER, now: T0, serial: 7, key: { type, bits } });
      expect(r.root).toMatchObject({ PrivateKeyType: type, PrivateKeyBits: bits, Active: true });
      expect(r.privateKeyPem).toStartWith(type === "rsa" ? "-----BEGIN RSA PRIVATE KEY-----" : "-----BEGIN EC PRIVATE KEY-----");
      const keyText = openssl(type === "rsa" ? "rsa" : "ec", "-in", file(r.privateKeyPem), "-check", "-noout", "-text").out;
      expect(keyText).toContain(type === "rsa" ? "RSA key ok" : "EC Key valid");
      expect(keyText).toContain(type === "rsa" ? `Private-Key: (${bits} bit, 2 primes)` : `ASN1 OID: ${curveName[bits]}`);
      const rootText = text(r.root.RootCert);
      expect(rootText).toContain(`Signature Algorithm: ${sigAlg(type)}`);
      expect(rootText).toContain(type === "rsa" ? `Public-Key: (${bits} bit)` : `ASN1 OID: ${curveName[bits]}`);
      const leaf = await leafOf(r);
      expect(verify(r.root.RootCert, leaf.CertPEM).out).toContain(": OK");
      const leafText = text(leaf.CertPEM);
      expect(leafText).toContain(`Signature Algorithm: ${sigAlg(type)}`);
      expect(leafText).toContain("ASN1 OID: prime256v1"); // leaf keys stay EC P-256, as Consul's agent makes them
      expect(leafSigningKeyId(leaf.CertPEM)).toBe(r.root.SigningKeyID);
    });
  }

  test("a configured key without a root certificate: the root takes the key's type, whatever the settings say", async () => {
    const key = openssl("ecparam", "-genkey", "-name", "secp384r1", "-noout").out;
    const r = await generateRoot({ clusterId: CLUSTER, now: T0, serial: 8, privateKeyPem: key, key: { type: "rsa", bits: 4096 } });
    expect(r.privateKeyPem).toBe(key);
    expect(r.root).toMatchObject({ PrivateKeyType: "ec", PrivateKeyBits: 384 });
    expect(verify(r.root.RootCert, (await leafOf(r)).CertPEM).out).toContain(": OK");
  });
});

describe("operator-supplied roots (openssl keys and certificates)", () => {
  for (const [name, { keyPem, certPem }] of Object.entries(supplied)) {
    const [type, bits] = name.split(/[ ,]+/) as [string, string];
    test(`${name}: imported as is, reported as ${type}/${bits}, its leaves verify and chain by key ID`, async () => {
      const r = await importRoot({ rootCertPem: certPem, privateKeyPem: keyPem, clusterId: CLUSTER });
      expect(r.root).toMatchObject({ PrivateKeyType: type, PrivateKeyBits: Number(bits), RootCert: certPem });
      expect(r.privateKeyPem).toBe(keyPem);
      const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(text(certPem))![1]!;
      expect(r.root.SigningKeyID).toBe(ski.toLowerCase());
      const leaf = await leafOf(r);
      expect(verify(certPem, leaf.CertPEM).out).toContain(": OK");
      expect(text(leaf.CertPEM)).toContain(`Signature Algorithm: ${sigAlg(type)}`);
      // The leaf names the root's own SKI, so agents see it as signed by the active root (no re-signing loop).
      expect(leafSigningKeyId(leaf.CertPEM)).toBe(r.root.SigningKeyID);
    });
  }

  test("a key that does not belong to the certificate, or of another type, is refused", async () => {
    const rsa = supplied["rsa 2048, PKCS#1"], ec = supplied["ec 256, SEC1"], ec384 = supplied["ec 384, PKCS#8"];
    await expect(importRoot({ rootCertPem: rsa.certPem, privateKeyPem: ec.keyPem, clusterId: CLUSTER })).rejects.toThrow("RootCert does not match PrivateKey");
    await expect(importRoot({ rootCertPem: ec.certPem, privateKeyPem: ec384.keyPem, clusterId: CLUSTER })).rejects.toThrow("RootCert does not match PrivateKey");
    await expect(importRoot({ rootCertPem: rsa.certPem, privateKeyPem: supplied["rsa 4096, PKCS#8"].keyPem, clusterId: CLUSTER }))
      .rejects.toThrow("RootCert does not match PrivateKey");
  });

  test("a root certificate with a key type Consul cannot report is refused by caRootFromPem", async () => {
    const ed = opensslRoot(["genpkey", "-algorithm", "ED25519"]);
    await expect(caRootFromPem(ed.certPem, { clusterId: CLUSTER })).rejects.toThrow("error extracting root key info: unsupported key type");
    await expect(importRoot({ rootCertPem: ed.certPem, privateKeyPem: ed.keyPem, clusterId: CLUSTER })).rejects.toThrow(/unsupported key algorithm 1\.3\.101\.112/);
  });
});

describe("rotation across key types", () => {
  const pairs: [string, () => Promise<RootWithKey>, string, () => Promise<RootWithKey>][] = [
    ["ec 256", () => generateRoot({ clusterId: CLUSTER, now: T0, serial: 1 }), "rsa 2048", () => generateRoot({ clusterId: CLUSTER, now: T0, serial: 2, key: { type: "rsa", bits: 2048 } })],
    ["rsa 2048", () => generateRoot({ clusterId: CLUSTER, now: T0, serial: 3, key: { type: "rsa", bits: 2048 } }), "ec 384", () => generateRoot({ clusterId: CLUSTER, now: T0, serial: 4, key: { type: "ec", bits: 384 } })],
    ["supplied rsa 4096 (SHA-1 SKI)", () => importRoot({ rootCertPem: supplied["rsa 4096, PKCS#8"].certPem, privateKeyPem: supplied["rsa 4096, PKCS#8"].keyPem, clusterId: CLUSTER }),
      "ec 521", () => generateRoot({ clusterId: CLUSTER, now: T0, serial: 5, key: { type: "ec", bits: 521 } })],
    ["ec 521", () => generateRoot({ clusterId: CLUSTER, now: T0, serial: 6, key: { type: "ec", bits: 521 } }),
      "supplied ec 384", () => importRoot({ rootCertPem: supplied["ec 384, PKCS#8"].certPem, privateKeyPem: supplied["ec 384, PKCS#8"].keyPem, clusterId: CLUSTER })],
  ];
  for (const [oldName, makeOld, newName, makeNew] of pairs) {
    test(`${oldName} -> ${newName}: a peer trusting only the old root accepts new leaves through the cross-signed root`, async () => {
      const old = await makeOld();
      const next = await makeNew();
      const xc = await crossSignRoot({ newRootCertPem: next.root.RootCert, oldRootCertPem: old.root.RootCert, oldRootKeyPem: old.privateKeyPem, now: AT, serial: 77 });
      const xcText = text(xc);
      expect(xcText).toContain(`Signature Algorithm: ${sigAlg(old.root.PrivateKeyType)}`);
      expect(parseCertificate(xc).authorityKeyIdHex.replace(/(..)(?!$)/g, "$1:")).toBe(old.root.SigningKeyID);
      const leaf = await leafOf({ ...next, root: { ...next.root, IntermediateCerts: [xc] } });
      expect(verify(old.root.RootCert, leaf.CertPEM, xc).out).toContain(": OK");
      expect(verify(next.root.RootCert, leaf.CertPEM).out).toContain(": OK");
      expect(verify(old.root.RootCert, leaf.CertPEM).ok).toBe(false);
    });
  }
});

describe("keySettings (Consul 1.8's CommonCAProviderConfig.Validate)", () => {
  test.each([
    [undefined, undefined, { type: "ec", bits: 256 }],
    [null, null, { type: "ec", bits: 256 }],
    ["ec", 384, { type: "ec", bits: 384 }],
    [undefined, 521, { type: "ec", bits: 521 }],
    ["rsa", 2048, { type: "rsa", bits: 2048 }],
    ["rsa", 4096, { type: "rsa", bits: 4096 }],
  ])("%p/%p is %p", (type: unknown, bits: unknown, want: object) => {
    expect(keySettings(type, bits)).toEqual(want as ReturnType<typeof keySettings>);
  });

  test.each([
    ["rsa", undefined, "RSA key length must be 2048 or 4096 bits"],
    ["rsa", 3072, "RSA key length must be 2048 or 4096 bits"],
    ["rsa", "2048", "RSA key length must be 2048 or 4096 bits"],
    ["ec", 0, "ECDSA key length must be one of (224, 256, 384, 521) bits"],
    [undefined, 2048, "ECDSA key length must be one of (224, 256, 384, 521) bits"],
    ["ec", 224, "ECDSA P-224 keys are not supported by this CA (WebCrypto has no P-224 curve): PrivateKeyBits must be 256, 384 or 521"],
    ["", 256, "private key type must be either 'ecdsa' or 'rsa'"],
    ["EC", 256, "private key type must be either 'ecdsa' or 'rsa'"],
  ])("%p/%p is refused: %s", (type: unknown, bits: unknown, message: string) => {
    expect(() => keySettings(type, bits)).toThrow(message);
  });

  test("namesKeySettings: absent and null mean the defaults", () => {
    expect(namesKeySettings({})).toBe(false);
    expect(namesKeySettings({ PrivateKeyType: null as never, PrivateKeyBits: undefined })).toBe(false);
    expect(namesKeySettings({ PrivateKeyBits: 0 })).toBe(true);
    expect(namesKeySettings({ PrivateKeyType: "" })).toBe(true);
  });
});
