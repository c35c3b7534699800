/**
 * X.509 certificate authority and leaf issuance with pkijs over WebCrypto (ECDSA P-256, SHA-256),
 * shaped like Consul's agent TLS tooling (`tlsutil/generate.go`, `consul tls ca|cert create`).
 *
 * Pure apart from WebCrypto: the caller supplies "now" and the randomness for serial numbers, so the
 * same inputs give certificates with the same validity and serials (keys and signatures still come
 * from WebCrypto's own generator). Works on Bun, Deno and Node (WebCrypto passed explicitly to pkijs).
 */
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { bytesToDecimal, OID, parseIp, pemDecode, pemEncode, privateKeyToPkcs8, randomSerial, type RandomBytes } from "./x509_der.ts";

const EC_KEY = { name: "ECDSA", namedCurve: "P-256" } as const;
const DAY_MS = 86_400_000;

let engineCache: pkijs.CryptoEngine | undefined;
/** The pkijs engine over the runtime's WebCrypto (not the global pkijs engine, which other code may set). Lib-internal. */
export function engine(): pkijs.CryptoEngine {
  engineCache ??= new pkijs.CryptoEngine({ name: "webcrypto", crypto: globalThis.crypto });
  return engineCache;
}

/** A certificate and its private key, both PEM: "CERTIFICATE" and PKCS#8 "PRIVATE KEY". */
export interface CertAndKey {
  readonly certPem: string;
  readonly keyPem: string;
}

/** Options of {@link createCa}. */
export interface CaOptions {
  /** Subject CN. Default `Causeway Agent CA <serial in decimal>` (Consul: `Consul Agent CA <serial>`). */
  readonly commonName?: string;
  /** Validity in days from `now`; must be a positive integer. */
  readonly days: number;
  /** Start of validity (notBefore); notAfter is `now + days`. */
  readonly now: Date | number;
  /** Randomness for the 128-bit serial number. */
  readonly rng: RandomBytes;
  /** When given, a critical nameConstraints extension permitting only these DNS subtrees. */
  readonly nameConstraints?: { readonly permittedDns: readonly string[] };
  /** basicConstraints pathLenConstraint; absent means unlimited. */
  readonly pathLen?: number;
  /** URI SANs of the CA (e.g. a SPIFFE trust domain). */
  readonly uris?: readonly string[];
}

/**
 * Creates a self-signed ECDSA P-256 CA: basicConstraints CA:TRUE (critical), keyUsage
 * keyCertSign+cRLSign+digitalSignature (critical), SKI = AKI, optional critical name constraints.
 */
export async function createCa(opts: CaOptions): Promise<CertAndKey> {
  const keys = await generateKey();
  const serial = randomSerial(opts.rng);
  const cn = opts.commonName || `Causeway Agent CA ${bytesToDecimal(serial)}`;
  const ski = await keyIdentifier(keys.publicKey);
  const cert = baseCertificate(serial, cn, cn, opts.now, opts.days);
  await cert.subjectPublicKeyInfo.importKey(keys.publicKey, engine());
  const bc = new pkijs.BasicConstraints({ cA: true, ...(opts.pathLen === undefined ? {} : { pathLenConstraint: opts.pathLen }) });
  const extensions = [
    extension(OID.basicConstraints, true, bc.toSchema()),
    extension(OID.keyUsage, true, keyUsage(["digitalSignature", "keyCertSign", "cRLSign"])),
    extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: ski })),
    extension(OID.authorityKeyIdentifier, false, new pkijs.AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: ski }) }).toSchema()),
  ];
  if (opts.nameConstraints) {
    const nc = new pkijs.NameConstraints({
      permittedSubtrees: opts.nameConstraints.permittedDns.map((d) => new pkijs.GeneralSubtree({ base: new pkijs.GeneralName({ type: 2, value: d }) })),
    });
    extensions.push(extension(OID.nameConstraints, true, nc.toSchema()));
  }
  if (opts.uris?.length) extensions.push(extension(OID.subjectAltName, false, altNames([], [], opts.uris)));
  cert.extensions = extensions;
  await cert.sign(keys.privateKey, "SHA-256", engine());
  return { certPem: pemEncode("CERTIFICATE", cert.toSchema().toBER(false)), keyPem: await exportKeyPem(keys.privateKey) };
}

/** What a leaf certificate is for; decides extKeyUsage. */
export type LeafUsage = "server" | "client" | "cli" | "server+client";

/** Options of {@link createLeaf}. */
export interface LeafOptions {
  /** The issuing CA certificate (PEM; the first CERTIFICATE block is used). */
  readonly caCertPem: string;
  /** The CA's private key: PKCS#8, SEC1 "EC PRIVATE KEY" (as Consul writes it) or PKCS#1 RSA. */
  readonly caKeyPem: string;
  readonly commonName: string;
  readonly dnsNames: readonly string[];
  /** IPv4 or IPv6 text addresses; a malformed one throws. */
  readonly ipAddresses: readonly string[];
  readonly uris?: readonly string[];
  readonly days: number;
  readonly now: Date | number;
  readonly rng: RandomBytes;
  /**
   * "server" and "client" both get serverAuth+clientAuth (Consul gives both to server and client
   * certificates), "server+client" likewise, "cli" gets clientAuth only.
   */
  readonly usage: LeafUsage;
}

/**
 * Issues an ECDSA P-256 leaf signed by the CA (SHA-256): subject CN, SAN with DNS/IP/URI entries,
 * basicConstraints CA:FALSE (critical), keyUsage digitalSignature+keyEncipherment (critical), extKeyUsage
 * per `usage`, SKI of the new key and AKI = the CA's SKI. Throws on a malformed CA or key or IP.
 */
export async function createLeaf(opts: LeafOptions): Promise<CertAndKey> {
  const ca = pkijs.Certificate.fromBER(pemDecode(opts.caCertPem, "CERTIFICATE"));
  const caKey = await importSigningKey(opts.caKeyPem);
  const keys = await generateKey();
  const serial = randomSerial(opts.rng);
  const cert = baseCertificate(serial, opts.commonName, "", opts.now, opts.days);
  cert.issuer = ca.subject;
  await cert.subjectPublicKeyInfo.importKey(keys.publicKey, engine());
  const caSki = ca.extensions?.find((e) => e.extnID === OID.subjectKeyIdentifier);
  const aki = caSki
    ? new Uint8Array((caSki.parsedValue as asn1js.OctetString).valueBlock.valueHexView)
    : await sha1(new Uint8Array(ca.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView));
  const eku = opts.usage === "cli" ? [OID.clientAuth] : [OID.serverAuth, OID.clientAuth];
  const ips = opts.ipAddresses.map(parseIp);
  cert.extensions = [
    extension(OID.basicConstraints, true, new pkijs.BasicConstraints({ cA: false }).toSchema()),
    extension(OID.keyUsage, true, keyUsage(["digitalSignature", "keyEncipherment"])),
    extension(OID.extKeyUsage, false, new pkijs.ExtKeyUsage({ keyPurposes: eku }).toSchema()),
    extension(OID.subjectKeyIdentifier, false, new asn1js.OctetString({ valueHex: await keyIdentifier(keys.publicKey) })),
    extension(OID.authorityKeyIdentifier, false, new pkijs.AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: aki }) }).toSchema()),
  ];
  if (opts.dnsNames.length || ips.length || opts.uris?.length) {
    cert.extensions.push(extension(OID.subjectAltName, false, altNames(opts.dnsNames, ips, opts.uris ?? [])));
  }
  await cert.sign(caKey, "SHA-256", engine());
  return { certPem: pemEncode("CERTIFICATE", cert.toSchema().toBER(false)), keyPem: await exportKeyPem(keys.privateKey) };
}

/** Imports a private key PEM (PKCS#8, SEC1 EC, PKCS#1 RSA) as a WebCrypto signing key (ECDSA or RSASSA-PKCS1-v1_5, SHA-256). */
export async function importSigningKey(keyPem: string, extractable = false): Promise<CryptoKey> {
  const { pkcs8, algorithm } = privateKeyToPkcs8(keyPem);
  const alg = algorithm.kind === "EC"
    ? { name: "ECDSA", namedCurve: algorithm.namedCurve }
    : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  return crypto.subtle.importKey("pkcs8", pkcs8, alg, extractable, ["sign"]);
}

function baseCertificate(serial: Uint8Array, subjectCn: string, issuerCn: string, now: Date | number, days: number): pkijs.Certificate {
  if (!Number.isInteger(days) || days <= 0) throw new Error(`invalid validity: ${days} days (must be a positive integer)`);
  if (subjectCn === "") throw new Error("a certificate needs a common name");
  const start = typeof now === "number" ? now : now.getTime();
  if (!Number.isFinite(start)) throw new Error("invalid start time");
  const cert = new pkijs.Certificate();
  cert.version = 2;
  cert.serialNumber = new asn1js.Integer({ valueHex: serial });
  setCn(cert.subject, subjectCn);
  if (issuerCn) setCn(cert.issuer, issuerCn);
  cert.notBefore = timeOf(new Date(start));
  cert.notAfter = timeOf(new Date(start + days * DAY_MS));
  return cert;
}

/** Appends a CN attribute to a name. Lib-internal. */
export function setCn(name: pkijs.RelativeDistinguishedNames, cn: string): void {
  name.typesAndValues.push(new pkijs.AttributeTypeAndValue({ type: OID.commonName, value: new asn1js.Utf8String({ value: cn }) }));
}

/** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. Lib-internal. */
export function timeOf(d: Date): pkijs.Time {
  return new pkijs.Time({ type: d.getUTCFullYear() < 2050 ? pkijs.TimeType.UTCTime : pkijs.TimeType.GeneralizedTime, value: d });
}

/** One DER-encoded extension. Lib-internal. */
export function extension(extnID: string, critical: boolean, value: asn1js.AsnType): pkijs.Extension {
  return new pkijs.Extension({ extnID, critical, extnValue: value.toBER(false) });
}

const KEY_USAGE_BITS = { digitalSignature: 0, keyEncipherment: 2, dataEncipherment: 3, keyAgreement: 4, keyCertSign: 5, cRLSign: 6 } as const;

/** The keyUsage bits this module can set (RFC 5280 4.2.1.3 names). */
export type KeyUsageName = keyof typeof KEY_USAGE_BITS;

/** The keyUsage BIT STRING in DER's minimal form (trailing zero bits counted as unused). Lib-internal. */
export function keyUsage(uses: readonly KeyUsageName[]): asn1js.BitString {
  let v = 0;
  for (const u of uses) v |= 0x80 >> KEY_USAGE_BITS[u];
  let unused = 0;
  while (unused < 7 && (v & (1 << unused)) === 0) unused++;
  return new asn1js.BitString({ valueHex: Uint8Array.from([v]), unusedBits: unused });
}

/** A GeneralNames SEQUENCE: DNS names, then IPs (4 or 16 bytes), then URIs. Lib-internal. */
export function altNames(dns: readonly string[], ips: readonly Uint8Array[], uris: readonly string[]): asn1js.Sequence {
  const names = [
    ...dns.map((d) => new pkijs.GeneralName({ type: 2, value: d })),
    ...ips.map((ip) => new pkijs.GeneralName({ type: 7, value: new asn1js.OctetString({ valueHex: ip }) })),
    ...uris.map((u) => new pkijs.GeneralName({ type: 6, value: u })),
  ];
  return new pkijs.GeneralNames({ names }).toSchema();
}

async function generateKey(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(EC_KEY, true, ["sign", "verify"])) as CryptoKeyPair;
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  return pemEncode("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", key));
}

/** RFC 5280 4.2.1.2 method (1): SHA-1 of the subjectPublicKey BIT STRING contents. */
async function keyIdentifier(publicKey: CryptoKey): Promise<Uint8Array> {
  return sha1(new Uint8Array(await crypto.subtle.exportKey("raw", publicKey)));
}

async function sha1(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-1", data as Uint8Array<ArrayBuffer>));
}
