import { describe, expect, test } from "bun:test";
import {
  createCertificationRequest, digest, generateEcPrivateKey, issueCertificate, parseCertificate, parseCertificationRequest, publicKeySpki,
  reissueCertificate, serialBytes, toSec1Pem,
} from "./index.ts";
import { opensslWorkspace } from "../../test/harness/openssl.ts";

const { file, openssl } = opensslWorkspace("causeway-x509-issue-");
const T = Date.UTC(2030, 0, 1);

describe("serialBytes", () => {
  test.each([[1n, [1]], [127n, [0x7f]], [128n, [0, 0x80]], [0x1234n, [0x12, 0x34]], [0xffn, [0, 0xff]]])("%p", (v, bytes) => {
    expect(Array.from(serialBytes(v))).toEqual(bytes);
  });
  test("rejects zero and negatives", () => {
    expect(() => serialBytes(0n)).toThrow(/positive/);
    expect(() => serialBytes(-1n)).toThrow(/positive/);
  });
});

describe("keys", () => {
  test("toSec1Pem gives an EC PRIVATE KEY openssl accepts, with the same public key", async () => {
    const pkcs8 = await generateEcPrivateKey();
    const sec1 = await toSec1Pem(pkcs8);
    expect(sec1).toStartWith("-----BEGIN EC PRIVATE KEY-----\n");
    expect(openssl("ec", "-in", file(sec1), "-check", "-noout").out).toContain("EC Key valid");
    expect(openssl("ec", "-in", file(sec1), "-text", "-noout").out).toContain("ASN1 OID: prime256v1");
    expect(openssl("pkey", "-pubout", "-in", file(sec1)).out).toBe(openssl("pkey", "-pubout", "-in", file(pkcs8)).out);
    expect(await publicKeySpki(sec1)).toEqual(await publicKeySpki(pkcs8));
  });

  test("publicKeySpki of an RSA key, and parseCertificate reports RSA bits", async () => {
    const rsa = openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048").out;
    const spki = await publicKeySpki(rsa);
    const pem = await issueCertificate({
      subjectCommonName: "rsa", subjectPublicKey: spki, signingKeyPem: rsa, serial: 5n, notBefore: T, notAfter: T + 1000_000,
      ca: {}, keyUsage: ["keyCertSign"], subjectKeyId: await digest("SHA-1", spki),
    });
    expect(parseCertificate(pem).publicKey).toEqual({ kind: "RSA", bits: 2048 });
    await expect(toSec1Pem(rsa)).rejects.toThrow(/EC/);
  });
});

describe("issueCertificate / reissueCertificate", () => {
  test("fields land where the spec says; a reissued certificate keeps subject and key under a new issuer", async () => {
    const caKey = await generateEcPrivateKey(), otherKey = await generateEcPrivateKey(), leafKey = await generateEcPrivateKey();
    const caSpki = await publicKeySpki(caKey);
    const ski = await digest("SHA-256", caSpki);
    const ca = await issueCertificate({
      subjectCommonName: "CA", subjectPublicKey: caSpki, signingKeyPem: caKey, serial: 1n, notBefore: T, notAfter: T + 86_400_000,
      ca: { pathLen: 0 }, keyUsage: ["keyCertSign", "cRLSign"], uris: ["spiffe://x.consul"], subjectKeyId: ski, authorityKeyId: ski,
    });
    const info = parseCertificate(ca);
    expect(info).toMatchObject({ isCa: true, serialHex: "1", uris: ["spiffe://x.consul"], publicKey: { kind: "EC", bits: 256 } });
    expect(info.subjectKeyIdHex).toHaveLength(64);
    expect(info.authorityKeyIdHex).toBe(info.subjectKeyIdHex);
    expect(openssl("x509", "-text", "-noout", "-in", file(ca)).out).toMatch(/CA:TRUE, pathlen:0/);
    const leafSpki = await publicKeySpki(leafKey);
    const leaf = await issueCertificate({
      subjectCommonName: "leaf", subjectPublicKey: leafSpki, signingKeyPem: caKey, issuerCertPem: ca, serial: 2n, notBefore: T, notAfter: T + 3_600_000,
      keyUsage: ["digitalSignature"], extKeyUsage: ["serverAuth"], dnsNames: ["a.test"], ipAddresses: ["::1"],
      subjectKeyId: await digest("SHA-256", leafSpki), authorityKeyId: ski,
    });
    const at = String(T / 1000 + 60);
    expect(openssl("verify", "-attime", at, "-CAfile", file(ca), file(leaf)).ok).toBe(true);
    // Cross-sign the CA with another self-signed CA.
    const otherSpki = await publicKeySpki(otherKey);
    const other = await issueCertificate({
      subjectCommonName: "Other", subjectPublicKey: otherSpki, signingKeyPem: otherKey, serial: 1n, notBefore: T, notAfter: T + 86_400_000,
      ca: {}, keyUsage: ["keyCertSign"], subjectKeyId: await digest("SHA-256", otherSpki),
    });
    const cross = await reissueCertificate({
      certPem: ca, issuerCertPem: other, signingKeyPem: otherKey, serial: 3n, notBefore: T, notAfter: T + 86_400_000,
      authorityKeyId: await digest("SHA-256", otherSpki),
    });
    const x = parseCertificate(cross);
    expect(x).toMatchObject({ subjectCommonName: "CA", issuerCommonName: "Other", serialHex: "3", subjectKeyIdHex: info.subjectKeyIdHex });
    expect(openssl("verify", "-attime", at, "-CAfile", file(other), "-untrusted", file(cross), file(leaf)).ok).toBe(true);
    expect(openssl("verify", "-attime", at, "-CAfile", file(other), file(leaf)).ok).toBe(false);
    await expect(issueCertificate({
      subjectCommonName: "x", subjectPublicKey: leafSpki, signingKeyPem: caKey, serial: 1n, notBefore: T, notAfter: T, keyUsage: [], subjectKeyId: ski,
    })).rejects.toThrow(/validity/);
  });
});

describe("certification requests", () => {
  test("round trip, openssl verifies the request, tampering is detected", async () => {
    const key = await generateEcPrivateKey();
    const pem = await createCertificationRequest({ keyPem: key, commonName: "svc", dnsNames: ["a.test"], ipAddresses: ["127.0.0.1"], uris: ["spiffe://t/ns/d/dc/x/svc/y"] });
    expect(openssl("req", "-in", file(pem), "-noout", "-verify").out).toContain("verify OK");
    const info = await parseCertificationRequest(pem);
    expect(info).toMatchObject({ commonName: "svc", dnsNames: ["a.test"], ipAddresses: ["127.0.0.1"], uris: ["spiffe://t/ns/d/dc/x/svc/y"] });
    expect(info.publicKeySpki).toEqual(await publicKeySpki(key));
    const empty = await parseCertificationRequest(await createCertificationRequest({ keyPem: await toSec1Pem(key) }));
    expect(empty).toMatchObject({ commonName: "", dnsNames: [], uris: [] });
    // An openssl-made request parses too.
    const keyFile = file(key);
    const viaOpenssl = openssl("req", "-new", "-key", keyFile, "-subj", "/CN=o", "-addext", "subjectAltName=URI:spiffe://t/ns/d/dc/x/svc/z").out;
    expect((await parseCertificationRequest(viaOpenssl)).uris).toEqual(["spiffe://t/ns/d/dc/x/svc/z"]);
    await expect(parseCertificationRequest("nope")).rejects.toThrow(/CERTIFICATE REQUEST/);
  });
});
