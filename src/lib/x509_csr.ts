/**
 * PKCS#10 certification requests: creating one for a key (as Consul's agent does for Connect leaf
 * certificates, `agent/connect/csr.go`) and reading one back with its signature checked.
 * Pure apart from WebCrypto.
 */
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { altNames, engine, extension, importSigningKey, setCn } from "./x509.ts";
import { formatIp, OID, parseIp, pemDecode, pemEncode } from "./x509_der.ts";
import { publicKeySpki } from "./x509_issue.ts";

const EXTENSION_REQUEST = "1.2.840.113549.1.9.14";

/** Contents of {@link createCertificationRequest}. */
export interface CsrOptions {
  /** The requester's private key (PKCS#8, SEC1 EC or PKCS#1 RSA PEM); signs the request with SHA-256. */
  readonly keyPem: string;
  /** Subject CN; the subject is empty when absent (Consul's service CSRs carry no subject). */
  readonly commonName?: string;
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly uris?: readonly string[];
}

/** Creates a PEM "CERTIFICATE REQUEST" with the SANs in an extensionRequest attribute. */
export async function createCertificationRequest(opts: CsrOptions): Promise<string> {
  const csr = new pkijs.CertificationRequest();
  csr.version = 0;
  if (opts.commonName) setCn(csr.subject, opts.commonName);
  csr.subjectPublicKeyInfo = pkijs.PublicKeyInfo.fromBER(await publicKeySpki(opts.keyPem));
  const ips = (opts.ipAddresses ?? []).map(parseIp);
  if (opts.dnsNames?.length || ips.length || opts.uris?.length) {
    const exts = new pkijs.Extensions({ extensions: [extension(OID.subjectAltName, false, altNames(opts.dnsNames ?? [], ips, opts.uris ?? []))] });
    csr.attributes = [new pkijs.Attribute({ type: EXTENSION_REQUEST, values: [exts.toSchema()] })];
  }
  await csr.sign(await importSigningKey(opts.keyPem), "SHA-256", engine());
  return pemEncode("CERTIFICATE REQUEST", csr.toSchema().toBER(false));
}

/** What a certification request asks for. */
export interface CsrInfo {
  /** Subject CN, "" when none. */
  readonly commonName: string;
  /** The requested public key as SubjectPublicKeyInfo DER. */
  readonly publicKeySpki: Uint8Array;
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly uris: readonly string[];
}

/**
 * Parses the first CERTIFICATE REQUEST block and verifies its self-signature. Throws an Error when the
 * PEM or DER is malformed or the signature does not verify (the requester does not hold the key).
 */
export async function parseCertificationRequest(pem: string): Promise<CsrInfo> {
  let csr: pkijs.CertificationRequest;
  try {
    csr = pkijs.CertificationRequest.fromBER(pemDecode(pem, "CERTIFICATE REQUEST"));
  } catch (err) {
    throw new Error(`malformed certificate request: ${err instanceof Error ? err.message : String(err)}`);
  }
  let ok = false;
  try {
    ok = await csr.verify(engine());
  } catch {
    ok = false;
  }
  if (!ok) throw new Error("certificate request signature does not verify");
  const dnsNames: string[] = [], ipAddresses: string[] = [], uris: string[] = [];
  for (const attr of csr.attributes ?? []) {
    if (attr.type !== EXTENSION_REQUEST) continue;
    const exts = new pkijs.Extensions({ schema: attr.values[0] });
    for (const e of exts.extensions) {
      if (e.extnID !== OID.subjectAltName) continue;
      for (const n of (e.parsedValue as pkijs.AltName).altNames) {
        if (n.type === 2) dnsNames.push(String(n.value));
        else if (n.type === 6) uris.push(String(n.value));
        else if (n.type === 7) ipAddresses.push(formatIp(new Uint8Array((n.value as asn1js.OctetString).valueBlock.valueHexView)));
      }
    }
  }
  const cn = csr.subject.typesAndValues.find((t) => t.type === OID.commonName);
  return {
    commonName: cn ? String(cn.value.valueBlock.value) : "",
    publicKeySpki: new Uint8Array(csr.subjectPublicKeyInfo.toSchema().toBER(false)),
    dnsNames,
    ipAddresses,
    uris,
  };
}
