/**
 * Lower-level X.509 issuance for callers that need to control every field (serial, exact validity,
 * key identifiers, subject key from a CSR) -- the Connect CA, whose certificates follow Consul's
 * `agent/connect/ca/provider_consul.go` rather than the agent-TLS shape of {@link createCa}.
 *
 * Pure apart from WebCrypto: no clock, no randomness except inside WebCrypto's key generation and
 * ECDSA signatures. Works on Bun, Deno and Node.
 */
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { altNames, engine, extension, importSigningKey, keyUsage, setCn, timeOf, type KeyUsageName } from "./x509.ts";
import { OID, parseIp, pemDecode, pemEncode, privateKeyToPkcs8 } from "./x509_der.ts";

/** Everything an issued certificate contains. */
export interface CertificateSpec {
  /** Subject CN (the subject has only a CN). */
  readonly subjectCommonName: string;
  /** The subject's public key as SubjectPublicKeyInfo DER (see {@link publicKeySpki}). */
  readonly subjectPublicKey: Uint8Array;
  /** The issuer's private key (PKCS#8, SEC1 EC or PKCS#1 RSA); signs with SHA-256. */
  readonly signingKeyPem: string;
  /** The issuer certificate; absent means self-signed (issuer name = subject name). */
  readonly issuerCertPem?: string;
  /** A positive serial number. */
  readonly serial: bigint;
  /** Validity bounds in epoch ms; certificate times have whole-second precision (truncated). */
  readonly notBefore: number;
  readonly notAfter: number;
  /** When present, basicConstraints CA:TRUE (with pathLen if given); otherwise CA:FALSE. Both critical. */
  readonly ca?: { readonly pathLen?: number };
  /** keyUsage bits (critical). */
  readonly keyUsage: readonly KeyUsageName[];
  readonly extKeyUsage?: readonly ("serverAuth" | "clientAuth")[];
  readonly dnsNames?: readonly string[];
  /** IPv4/IPv6 text; a malformed one throws. */
  readonly ipAddresses?: readonly string[];
  readonly uris?: readonly string[];
  readonly subjectKeyId: Uint8Array;
  /** Omitted from the certificate when absent. */
  readonly authorityKeyId?: Uint8Array;
}

/**
 * Issues a certificate exactly as `spec` says, extensions in Go's `x509.CreateCertificate` order
 * (keyUsage, extKeyUsage, basicConstraints, SKI, AKI, SAN). Resolves the PEM "CERTIFICATE".
 * Throws on an empty CN, notAfter <= notBefore, a non-positive serial or malformed keys/PEM.
 */
export async function issueCertificate(spec: CertificateSpec): Promise<string> {
  if (spec.subjectCommonName === "") throw new Error("a certificate needs a common name");
  checkValidity(spec.notBefore, spec.notAfter);
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1js.Integer({ valueHex: serialBytes(spec.serial) });
  setCn(cert.subject, spec.subjectCommonName);
  if (spec.issuerCertPem) cert.issuer = parseCert(spec.issuerCertPem).subject;
  else setCn(cert.issuer, spec.subjectCommonName);
  cert.notBefore = timeOf(new Date(spec.notBefore));
  cert.notAfter = timeOf(new Date(spec.notAfter));
  cert.subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(new Uint8Array(spec.subjectPublicKey));
  const bc = spec.ca
    ? new pkijs.BasicConstraints({ cA: true, ...(spec.ca.pathLen === undefined ? {} : { pathLenConstraint: spec.ca.pathLen }) })
    : new pkijs.BasicConstraints({});
  const exts = [extension(OID.keyUsage, true, keyUsage(spec.keyUsage))];
  if (spec.extKeyUsage?.length) {
    exts.push(extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: spec.extKeyUsage.map((p) => OID[p]) }).toSchema()));
  }
  exts.push(extension(OID.basicConstraints, true, bc.toSchema()));
  exts.push(extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: spec.subjectKeyId })));
  if (spec.authorityKeyId) exts.push(akiExtension(spec.authorityKeyId));
  const ips = (spec.ipAddresses ?? []).map(parseIp);
  if (spec.dnsNames?.length || ips.length || spec.uris?.length) {
    exts.push(extension(OID.subjectAltName, false, altNames(spec.dnsNames ?? [], ips, spec.uris ?? [])));
  }
  cert.extensions = exts;
  await cert.sign(await importSigningKey(spec.signingKeyPem), "SHA-256", engine());
  return pemEncode("CERTIFICATE", cert.toSchema().toBER(false));
}

/** What {@link reissueCertificate} changes in an existing certificate. */
export interface ReissueSpec {
  /** The certificate whose subject, public key and other extensions are kept. */
  readonly certPem: string;
  /** The new issuer and its private key. */
  readonly issuerCertPem: string;
  readonly signingKeyPem: string;
  readonly serial: bigint;
  readonly notBefore: number;
  readonly notAfter: number;
  /** Replaces (or adds) the authorityKeyIdentifier. */
  readonly authorityKeyId: Uint8Array;
}

/**
 * Re-issues an existing certificate under another issuer (cross-signing): same subject, public key and
 * extensions, new issuer name, serial, validity and AKI, signed with SHA-256 by `signingKeyPem`.
 */
export async function reissueCertificate(spec: ReissueSpec): Promise<string> {
  checkValidity(spec.notBefore, spec.notAfter);
  const cert = parseCert(spec.certPem);
  cert.serialNumber = new asn1js.Integer({ valueHex: serialBytes(spec.serial) });
  cert.issuer = parseCert(spec.issuerCertPem).subject;
  cert.notBefore = timeOf(new Date(spec.notBefore));
  cert.notAfter = timeOf(new Date(spec.notAfter));
  const others = (cert.extensions ?? []).filter((e) => e.extnID !== OID.authorityKeyIdentifier);
  const at = (cert.extensions ?? []).findIndex((e) => e.extnID === OID.authorityKeyIdentifier);
  others.splice(at < 0 ? others.length : at, 0, akiExtension(spec.authorityKeyId));
  cert.extensions = others;
  await cert.sign(await importSigningKey(spec.signingKeyPem), "SHA-256", engine());
  return pemEncode("CERTIFICATE", cert.toSchema().toBER(false));
}

/** A fresh ECDSA P-256 private key as PKCS#8 PEM ("PRIVATE KEY"). */
export async function generateEcPrivateKey(): Promise<string> {
  const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  return pemEncode("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", keys.privateKey));
}

/** The SubjectPublicKeyInfo DER of the public half of a private key (PKCS#8, SEC1 EC or PKCS#1 RSA PEM). */
export async function publicKeySpki(keyPem: string): Promise<Uint8Array<ArrayBuffer>> {
  const { pkcs8, algorithm } = privateKeyToPkcs8(keyPem);
  const params = algorithm.kind === "EC" ? { name: "ECDSA", namedCurve: algorithm.namedCurve } : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  const priv = await crypto.subtle.importKey("pkcs8", pkcs8, params, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", priv);
  const pubJwk: JsonWebKey = algorithm.kind === "EC" ? { kty: "EC", crv: jwk.crv, x: jwk.x, y: jwk.y } : { kty: "RSA", n: jwk.n, e: jwk.e };
  const pub = await crypto.subtle.importKey("jwk", pubJwk, params, true, ["verify"]);
  return new Uint8Array(await crypto.subtle.exportKey("spki", pub));
}

/**
 * An EC private key re-encoded as RFC 5915 SEC1 "EC PRIVATE KEY" PEM with the curve parameters and the
 * public key included (the form Go's `x509.MarshalECPrivateKey`, and so Consul, writes). Throws for RSA.
 */
export async function toSec1Pem(keyPem: string): Promise<string> {
  const { pkcs8, algorithm } = privateKeyToPkcs8(keyPem);
  if (algorithm.kind !== "EC") throw new Error("only EC keys have a SEC1 form");
  const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "ECDSA", namedCurve: algorithm.namedCurve }, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", key);
  const size = { "P-256": 32, "P-384": 48, "P-521": 66 }[algorithm.namedCurve];
  const curveOid = { "P-256": OID.p256, "P-384": OID.p384, "P-521": OID.p521 }[algorithm.namedCurve];
  const point = new Uint8Array(1 + 2 * size);
  point[0] = 4;
  point.set(leftPad(b64url(jwk.x!), size), 1);
  point.set(leftPad(b64url(jwk.y!), size), 1 + size);
  const seq = new asn1js.Sequence({
    value: [
      new asn1js.Integer({ value: 1 }),
      new asn1js.OctetString({ valueHex: leftPad(b64url(jwk.d!), size) }),
      new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 0 }, value: [new asn1js.ObjectIdentifier({ value: curveOid })] }),
      new asn1js.Constructed({ idBlock: { tagClass: 3, tagNumber: 1 }, value: [new asn1js.BitString({ valueHex: point })] }),
    ],
  });
  return pemEncode("EC PRIVATE KEY", seq.toBER(false));
}

/** A WebCrypto digest of `data`. */
export async function digest(algorithm: "SHA-1" | "SHA-256", data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest(algorithm, data as Uint8Array<ArrayBuffer>));
}

/** Minimal positive DER INTEGER content for `n` (a leading 0x00 when the top bit is set). Throws for n <= 0. */
export function serialBytes(n: bigint): Uint8Array<ArrayBuffer> {
  if (n <= 0n) throw new Error(`invalid serial number ${n} (must be positive)`);
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  if (parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  return Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
}

function akiExtension(keyId: Uint8Array): pkijs.Extension {
  return extension(OID.authorityKeyIdentifier, false, new pkijs.AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: keyId }) }).toSchema());
}

function checkValidity(notBefore: number, notAfter: number): void {
  if (!Number.isFinite(notBefore) || !Number.isFinite(notAfter) || notAfter <= notBefore) {
    throw new Error(`invalid validity: ${notBefore}..${notAfter}`);
  }
}

function parseCert(pem: string): pkijs.Certificate {
  return pkijs.Certificate.fromBER(pemDecode(pem, "CERTIFICATE"));
}

function b64url(s: string): Uint8Array {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function leftPad(b: Uint8Array, size: number): Uint8Array {
  if (b.length >= size) return b;
  const out = new Uint8Array(size);
  out.set(b, size - b.length);
  return out;
}
