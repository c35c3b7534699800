/**
 * Reading certificates: the fields start-up validation needs (names, validity, CA flag) and whether a
 * certificate belongs to a private key. Pure apart from WebCrypto key import/export.
 */
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { algorithmFromIdentifier, bitLength, formatIp, OID, pemBlocks, pemDecode, pemEncode, privateKeyToPkcs8, type KeyAlgorithmInfo } from "./x509_der.ts";

/** The parts of a certificate that configuration checks look at. */
export interface CertificateInfo {
  /** Subject CN, "" when the subject has none. */
  readonly subjectCommonName: string;
  /** Issuer CN, "" when the issuer has none. */
  readonly issuerCommonName: string;
  /** Serial number as lower-case hex without leading zeros. */
  readonly serialHex: string;
  /** SAN entries in certificate order. IPs are formatted (IPv6 in RFC 5952 form). */
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly uris: readonly string[];
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** basicConstraints cA; false when the extension is absent. */
  readonly isCa: boolean;
  /** extKeyUsage purposes as names ("serverAuth", "clientAuth") or OIDs for others; empty when absent. */
  readonly extKeyUsage: readonly string[];
  /** subjectKeyIdentifier bytes as lower-case hex without separators; "" when absent. */
  readonly subjectKeyIdHex: string;
  /** authorityKeyIdentifier keyIdentifier bytes as lower-case hex without separators; "" when absent. */
  readonly authorityKeyIdHex: string;
  /** The subject public key: algorithm and size in bits (EC: the curve size; RSA: the modulus length; other: 0). */
  readonly publicKey: { readonly kind: "EC" | "RSA" | "other"; readonly bits: number };
}

/** Parses the first CERTIFICATE block of `pem`. Throws an Error when there is none or it is not DER X.509. */
export function parseCertificate(pem: string): CertificateInfo {
  const cert = certificateFromPem(pem);
  const ext = (oid: string) => cert.extensions?.find((e) => e.extnID === oid)?.parsedValue as unknown;
  const dnsNames: string[] = [], ipAddresses: string[] = [], uris: string[] = [];
  const san = ext(OID.subjectAltName) as pkijs.AltName | undefined;
  for (const n of san?.altNames ?? []) {
    if (n.type === 2) dnsNames.push(String(n.value));
    else if (n.type === 6) uris.push(String(n.value));
    else if (n.type === 7) ipAddresses.push(formatIp(new Uint8Array((n.value as asn1js.OctetString).valueBlock.valueHexView)));
  }
  const bc = ext(OID.basicConstraints) as pkijs.BasicConstraints | undefined;
  const eku = ext(OID.extKeyUsage) as pkijs.ExtKeyUsage | undefined;
  const purposeName = (oid: string) => (oid === OID.serverAuth ? "serverAuth" : oid === OID.clientAuth ? "clientAuth" : oid);
  const serial = Array.from(cert.serialNumber.valueBlock.valueHexView, (b) => b.toString(16).padStart(2, "0")).join("");
  return {
    subjectCommonName: commonName(cert.subject),
    issuerCommonName: commonName(cert.issuer),
    serialHex: serial.replace(/^0+(?=.)/, ""),
    dnsNames,
    ipAddresses,
    uris,
    notBefore: cert.notBefore.value,
    notAfter: cert.notAfter.value,
    isCa: bc?.cA === true,
    extKeyUsage: (eku?.keyPurposes ?? []).map(purposeName),
    subjectKeyIdHex: hex((ext(OID.subjectKeyIdentifier) as asn1js.OctetString | undefined)?.valueBlock.valueHexView),
    authorityKeyIdHex: hex((ext(OID.authorityKeyIdentifier) as pkijs.AuthorityKeyIdentifier | undefined)?.keyIdentifier?.valueBlock.valueHexView),
    publicKey: publicKeyInfo(cert.subjectPublicKeyInfo),
  };
}

/** Every CERTIFICATE block of a bundle, parsed, in order (e.g. a `ca_file` with several roots). */
export function parseCertificates(pem: string): CertificateInfo[] {
  return pemBlocks(pem).filter((b) => b.label === "CERTIFICATE").map((b) => parseCertificate(pemEncode("CERTIFICATE", b.der)));
}

/**
 * Whether the private key in `keyPem` is the one the certificate's public key belongs to (EC P-256/384/521
 * or RSA; key PEM as PKCS#8, SEC1 or PKCS#1). Resolves false on a mismatch, including different
 * algorithms; throws when either input cannot be parsed.
 */
export async function certificateMatchesKey(certPem: string, keyPem: string): Promise<boolean> {
  const cert = certificateFromPem(certPem);
  const spki = cert.subjectPublicKeyInfo;
  const certAlg = algorithmFromIdentifier(spki.algorithm.toSchema() as asn1js.Sequence);
  const { pkcs8, algorithm: keyAlg } = privateKeyToPkcs8(keyPem);
  if (certAlg.kind !== keyAlg.kind || (certAlg.kind === "EC" && keyAlg.kind === "EC" && certAlg.namedCurve !== keyAlg.namedCurve)) {
    return false;
  }
  const params = importParams(certAlg);
  const pub = await crypto.subtle.importKey("spki", spki.toSchema().toBER(false), params, true, ["verify"]);
  const priv = await crypto.subtle.importKey("pkcs8", pkcs8, params, true, ["sign"]);
  const a = await crypto.subtle.exportKey("jwk", pub);
  const b = await crypto.subtle.exportKey("jwk", priv);
  return certAlg.kind === "EC" ? a.x === b.x && a.y === b.y : a.n === b.n && a.e === b.e;
}

function importParams(alg: KeyAlgorithmInfo): EcKeyImportParams | RsaHashedImportParams {
  return alg.kind === "EC" ? { name: "ECDSA", namedCurve: alg.namedCurve } : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
}

function certificateFromPem(pem: string): pkijs.Certificate {
  const der = pemDecode(pem, "CERTIFICATE");
  try {
    return pkijs.Certificate.fromBER(der);
  } catch (err) {
    throw new Error(`malformed certificate: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function commonName(name: pkijs.RelativeDistinguishedNames): string {
  const tv = name.typesAndValues.find((t) => t.type === OID.commonName);
  return tv ? String(tv.value.valueBlock.value) : "";
}

function hex(bytes: Uint8Array | undefined): string {
  return bytes ? Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("") : "";
}

function publicKeyInfo(spki: pkijs.PublicKeyInfo): { kind: "EC" | "RSA" | "other"; bits: number } {
  let alg: KeyAlgorithmInfo;
  try {
    alg = algorithmFromIdentifier(spki.algorithm.toSchema() as asn1js.Sequence);
  } catch {
    return { kind: "other", bits: 0 };
  }
  if (alg.kind === "EC") return { kind: "EC", bits: { "P-256": 256, "P-384": 384, "P-521": 521 }[alg.namedCurve] };
  const rsa = pkijs.RSAPublicKey.fromBER(new Uint8Array(spki.subjectPublicKey.valueBlock.valueHexView));
  return { kind: "RSA", bits: bitLength(rsa.modulus.valueBlock.valueHexView) };
}
