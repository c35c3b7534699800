/**
 * Service leaf certificates, after Consul 1.8's `ConsulProvider.Sign` (provider_consul.go), the checks of
 * `ConnectCA.Sign` (agent/consul/connect_ca_endpoint.go) and the agent's CSR (`connect.CreateCSR`).
 */
import { generatePrivateKey, issueCertificate, parseCertificate, parseCertificationRequest, publicKeySpki } from "../../lib/index.ts";
import { connectKeyId } from "./key_id.ts";
import { authorityKeyId } from "./keys.ts";
import { canSign, parseSpiffeId, spiffeServiceId } from "./spiffe.ts";
import { CERT_CLOCK_SKEW_MS, colonHex, formatRfc3339, type IssuedCert } from "./types.ts";

/** The CA that signs: in the primary datacenter, the active root's certificate and key. */
export interface SigningCa {
  readonly certPem: string;
  readonly keyPem: string;
  /** The active root's IntermediateCerts, appended to the leaf in CertPEM (e.g. the cross-signed root). */
  readonly intermediateCerts?: readonly string[];
}

/** What every leaf signing needs. */
export interface LeafSigningContext {
  readonly ca: SigningCa;
  /** The CA's trust domain, `<cluster-id>.consul`. */
  readonly trustDomain: string;
  /** This server's datacenter: Consul only signs service IDs of its own datacenter. */
  readonly datacenter: string;
  /** Epoch ms; the leaf is valid from now-1min until now-1min+ttlMs, like Consul (`effectiveNow.Add(LeafCertTTL)`). */
  readonly now: number;
  /** Leaf lifetime in ms (`LeafCertTTL`, default 72h). */
  readonly ttlMs: number;
  /** Positive serial, unique per CA key (Consul: the provider-state raft index + 1). */
  readonly serial: bigint | number;
}

/** Options of {@link signLeaf}. */
export interface SignLeafOptions extends LeafSigningContext {
  readonly service: string;
  /** Default "default". */
  readonly namespace?: string;
  /** Extra SANs (Consul 1.8's leaf request `DNSSAN`/`IPSAN`, used by ingress gateways); none by default. */
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
}

/**
 * Generates a P-256 key and issues the service's leaf, as the agent (key + CSR) and server (sign) do
 * together. PrivateKeyPEM is SEC1 "EC PRIVATE KEY" like Consul's: Consul's agent makes EC P-256 leaf keys
 * whatever the root's key type (agent/cache-types/connect_ca_leaf.go). See {@link signCsr} for the fields.
 */
export async function signLeaf(opts: SignLeafOptions): Promise<IssuedCert> {
  const keyPem = await generatePrivateKey("ec", 256);
  const uri = spiffeServiceId({ trustDomain: opts.trustDomain, namespace: opts.namespace, datacenter: opts.datacenter, service: opts.service });
  const issued = await issue(opts, {
    service: opts.service,
    uri,
    spki: await publicKeySpki(keyPem),
    dnsNames: opts.dnsNames ?? [],
    ipAddresses: opts.ipAddresses ?? [],
  });
  return { ...issued, PrivateKeyPEM: keyPem };
}

/**
 * Signs a PEM PKCS#10 request for a service identity (Consul's `ConnectCA.Sign` + provider `Sign`):
 * the CSR's signature must verify, it must carry exactly one URI SAN, a service SPIFFE ID in this trust
 * domain and datacenter. The leaf: subject CN = service name, that URI plus the CSR's DNS/IP SANs,
 * keyUsage digitalSignature+keyEncipherment+dataEncipherment+keyAgreement (critical), extKeyUsage
 * clientAuth+serverAuth, basicConstraints CA:FALSE, SKI = SHA-256 of the leaf's SubjectPublicKeyInfo,
 * AKI = the CA's key ID (its certificate's SKI). Signed with ECDSA-SHA256 by an EC CA key of any curve
 * and SHA256-RSA by an RSA one (Consul's `connect.SigAlgoForKey`), whatever the CSR's key type.
 * Throws an Error with Consul's wording on a rejected request.
 */
export async function signCsr(opts: LeafSigningContext & { readonly csrPem: string }): Promise<IssuedCert> {
  const csr = await parseCertificationRequest(opts.csrPem);
  if (csr.uris.length !== 1) throw new Error(`CSR SAN contains an invalid number of URIs: ${csr.uris.length}`);
  const id = parseSpiffeId(csr.uris[0]!);
  if (id.kind !== "service") throw new Error("SPIFFE ID in CSR must be a service ID");
  if (!canSign(opts.trustDomain, id)) {
    throw new Error(`SPIFFE ID in CSR from a different trust domain: ${id.host}, we are ${opts.trustDomain}`);
  }
  if (id.datacenter !== opts.datacenter) {
    throw new Error(`SPIFFE ID in CSR from a different datacenter: ${id.datacenter}, we are ${opts.datacenter}`);
  }
  return issue(opts, { service: id.service, uri: csr.uris[0]!, spki: csr.publicKeySpki, dnsNames: csr.dnsNames, ipAddresses: csr.ipAddresses });
}

/** The authority key ID a leaf names, colon hex: compare with the active root's SigningKeyID. */
export function leafSigningKeyId(certPem: string): string {
  return colonHex(parseCertificate(certPem).authorityKeyIdHex);
}

interface Subject {
  readonly service: string;
  readonly uri: string;
  readonly spki: Uint8Array;
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
}

async function issue(ctx: LeafSigningContext, s: Subject): Promise<IssuedCert> {
  if (!Number.isFinite(ctx.ttlMs) || ctx.ttlMs <= 0) throw new Error(`invalid leaf TTL ${ctx.ttlMs} ms`);
  const serial = BigInt(ctx.serial);
  const notBefore = ctx.now - CERT_CLOCK_SKEW_MS;
  const leafPem = await issueCertificate({
    subjectCommonName: s.service,
    subjectPublicKey: s.spki,
    signingKeyPem: ctx.ca.keyPem,
    issuerCertPem: ctx.ca.certPem,
    serial,
    notBefore,
    notAfter: notBefore + ctx.ttlMs,
    keyUsage: ["digitalSignature", "keyEncipherment", "dataEncipherment", "keyAgreement"],
    extKeyUsage: ["clientAuth", "serverAuth"],
    dnsNames: s.dnsNames,
    ipAddresses: s.ipAddresses,
    uris: [s.uri],
    subjectKeyId: await connectKeyId(s.spki),
    authorityKeyId: await authorityKeyId(ctx.ca.certPem, ctx.ca.keyPem),
  });
  const info = parseCertificate(leafPem);
  let certPem = leafPem;
  for (const p of ctx.ca.intermediateCerts ?? []) certPem = `${certPem.trimEnd()}\n${p.endsWith("\n") ? p : `${p}\n`}`;
  return {
    SerialNumber: colonHex(info.serialHex.length % 2 ? `0${info.serialHex}` : info.serialHex),
    CertPEM: certPem,
    PrivateKeyPEM: "",
    Service: s.service,
    ServiceURI: s.uri,
    ValidAfter: formatRfc3339(info.notBefore.getTime()),
    ValidBefore: formatRfc3339(info.notAfter.getTime()),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}
