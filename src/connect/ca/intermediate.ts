/**
 * A secondary datacenter's Connect CA intermediate, after Consul 1.8's built-in provider
 * (agent/connect/ca/provider_consul.go): the secondary's leader makes a key and a CSR
 * (`GenerateIntermediateCSR` + `connect.CreateCACSR`), the primary signs it with its active root
 * (`SignIntermediate`), and the secondary then signs leaves with the intermediate's key.
 */
import { createCertificationRequest, generatePrivateKey, issueCertificate, parseCertificate, parseCertificationRequest } from "../../lib/index.ts";
import { connectKeyId } from "./key_id.ts";
import { authorityKeyId, DEFAULT_PRIVATE_KEY_BITS, DEFAULT_PRIVATE_KEY_TYPE, type KeySettings } from "./keys.ts";
import { canSign, parseSpiffeId, spiffeServiceId, spiffeSigningId, type SpiffeId } from "./spiffe.ts";
import { CERT_CLOCK_SKEW_MS, formatRfc3339 } from "./types.ts";

/**
 * Subject CN of our intermediate CSRs (followed by the datacenter), and of an intermediate whose CSR names
 * none. Consul 1.8's CA CSRs carry an empty subject and its `SignIntermediate` copies it; our certificates
 * always have a CN (RFC 5280 4.1.2.6 wants a non-empty subject in a CA certificate, and openssl finds
 * issuers by name).
 */
const INTERMEDIATE_CN = "Causeway CA Intermediate";

/**
 * A fresh intermediate key and its CSR for trust domain `trustDomain`: the CSR's only SAN is the URI
 * `spiffeSigningId(trustDomain)` (Consul's `CreateCACSR`), its subject CN is
 * `Causeway CA Intermediate <datacenter>` (Consul 1.8's CSR has an empty subject; our certificates always
 * name one), signed with SHA-256 by the new key. `keyPem` is SEC1 "EC PRIVATE KEY" PEM (P-256 by default)
 * or PKCS#1 "RSA PRIVATE KEY" PEM, as `generatePrivateKey` writes it (Consul:
 * `GeneratePrivateKeyWithConfig(PrivateKeyType, PrivateKeyBits)`).
 * Throws on an empty trust domain or datacenter, or key settings `generatePrivateKey` refuses.
 */
export async function createIntermediateCsr(o: {
  readonly trustDomain: string;
  readonly datacenter: string;
  readonly key?: KeySettings;
}): Promise<{ readonly keyPem: string; readonly csrPem: string }> {
  if (!o.trustDomain) throw new Error("an intermediate CSR needs a trust domain");
  if (!o.datacenter) throw new Error("an intermediate CSR needs a datacenter");
  const key = o.key ?? { type: DEFAULT_PRIVATE_KEY_TYPE, bits: DEFAULT_PRIVATE_KEY_BITS };
  const keyPem = await generatePrivateKey(key.type, key.bits);
  const csrPem = await createCertificationRequest({
    keyPem,
    commonName: `${INTERMEDIATE_CN} ${o.datacenter}`,
    uris: [spiffeSigningId(o.trustDomain)],
  });
  return { keyPem, csrPem };
}

/**
 * The primary's signature of a secondary's intermediate CSR (Consul's `ConsulProvider.SignIntermediate`).
 * The CSR's self-signature must verify and it must carry exactly one URI SAN, the signing SPIFFE ID of
 * `trustDomain` (host compared case-insensitively). Errors use Consul's wording ("incoming CSR has
 * unexpected number of URIs: N", `incoming CSR domain "…" is not valid for our domain "…"`, the
 * SPIFFE parse errors); a service SPIFFE ID of our own trust domain, which Consul 1.8's `CanSign` lets
 * through, is refused here ("… is not a CA signing ID"): it would make a CA named like a service.
 *
 * The certificate: subject CN from the CSR ("Causeway CA Intermediate" when it has none, like Consul
 * 1.8's own CSRs), that URI SAN, basicConstraints CA:TRUE pathLen 0 and keyUsage
 * digitalSignature+keyCertSign+cRLSign (both critical), SKI = Consul's key ID of the CSR's public key (as
 * leaves compute theirs), AKI = the root's key ID (its SKI, which Go's `CreateCertificate` copies from the
 * parent), issuer = the root's subject, valid from now-1min ({@link CERT_CLOCK_SKEW_MS}) for `ttlMs`
 * (Consul 1.8: `IntermediateCertTTL`), but never past the root's own notAfter. Signed by the root key:
 * ECDSA-SHA256 (EC) or SHA256-RSA (RSA), whatever the CSR's key type. Throws on a bad TTL or serial, or a root that has expired by then.
 */
export async function signIntermediateCsr(o: {
  readonly rootCertPem: string;
  readonly rootKeyPem: string;
  readonly csrPem: string;
  readonly trustDomain: string;
  readonly now: number;
  readonly ttlMs: number;
  readonly serial: bigint | number;
}): Promise<string> {
  if (!Number.isFinite(o.ttlMs) || o.ttlMs <= 0) throw new Error(`invalid intermediate TTL ${o.ttlMs} ms`);
  const csr = await parseCertificationRequest(o.csrPem);
  if (csr.uris.length !== 1) throw new Error(`incoming CSR has unexpected number of URIs: ${csr.uris.length}`);
  const uri = csr.uris[0]!;
  const id = parseSpiffeId(uri);
  const ours = spiffeSigningId(o.trustDomain.toLowerCase());
  if (!canSign(o.trustDomain, id)) {
    throw new Error(`incoming CSR domain ${JSON.stringify(uriOf(id))} is not valid for our domain ${JSON.stringify(ours)}`);
  }
  if (id.kind !== "signing") throw new Error(`incoming CSR URI ${JSON.stringify(uri)} is not a CA signing ID`);

  const rootNotAfter = parseCertificate(o.rootCertPem).notAfter.getTime();
  const notBefore = o.now - CERT_CLOCK_SKEW_MS;
  const notAfter = Math.min(notBefore + o.ttlMs, rootNotAfter);
  if (notAfter <= notBefore) {
    const expired = formatRfc3339(rootNotAfter);
    throw new Error(`the root certificate expired at ${expired}: cannot sign an intermediate valid from ${formatRfc3339(notBefore)}`);
  }
  return issueCertificate({
    subjectCommonName: csr.commonName || INTERMEDIATE_CN,
    subjectPublicKey: csr.publicKeySpki,
    signingKeyPem: o.rootKeyPem,
    issuerCertPem: o.rootCertPem,
    serial: BigInt(o.serial),
    notBefore,
    notAfter,
    ca: { pathLen: 0 },
    keyUsage: ["digitalSignature", "keyCertSign", "cRLSign"],
    uris: [uri],
    subjectKeyId: await connectKeyId(csr.publicKeySpki),
    authorityKeyId: await authorityKeyId(o.rootCertPem, o.rootKeyPem),
  });
}

/** Go's `CertURI.URI().String()`: a signing ID with its host lower-cased, a service ID re-rendered. */
function uriOf(id: SpiffeId): string {
  return id.kind === "signing"
    ? spiffeSigningId(id.host.toLowerCase())
    : spiffeServiceId({ trustDomain: id.host, namespace: id.namespace, datacenter: id.datacenter, service: id.service });
}
