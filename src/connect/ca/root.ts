/**
 * Root certificates of the built-in ("consul") CA provider, after Consul 1.8's
 * `agent/connect/ca/provider_consul.go` (`generateCA`, `CrossSignCA`) and `agent/consul/leader_connect.go`
 * (`parseCARoot`, root rotation in `ConnectCA.ConfigurationSet`).
 */
import {
  certificateMatchesKey, digest, generatePrivateKey, issueCertificate, parseCertificate, pemDecode, publicKeySpki, reissueCertificate,
} from "../../lib/index.ts";
import { connectKeyId } from "./key_id.ts";
import { authorityKeyId, DEFAULT_PRIVATE_KEY_BITS, DEFAULT_PRIVATE_KEY_TYPE, suppliedKeyInfo, type KeySettings } from "./keys.ts";
import { spiffeSigningId, trustDomain } from "./spiffe.ts";
import { CERT_CLOCK_SKEW_MS, colonHex, CROSS_SIGN_VALIDITY_MS, formatRfc3339, ROOT_VALIDITY_YEARS, type CARoot } from "./types.ts";

/** A root and the private key that signs with it. The key never appears in API responses. */
export interface RootWithKey {
  readonly root: CARoot;
  /** SEC1 "EC PRIVATE KEY" or PKCS#1 "RSA PRIVATE KEY" PEM when generated here (as Consul writes them); as supplied otherwise. */
  readonly privateKeyPem: string;
}

/** Options of {@link generateRoot}. */
export interface GenerateRootOptions {
  readonly clusterId: string;
  /** notBefore (epoch ms); notAfter is 10 calendar years later. */
  readonly now: number;
  /**
   * Positive safe integer serial; the subject is `Consul CA <serial>`. Consul uses the provider-state
   * raft index + 1; the caller keeps serials unique per cluster.
   */
  readonly serial: number;
  /**
   * A configured root key (`Config.PrivateKey`: EC P-256/384/521 or RSA >= 2048 bits, SEC1, PKCS#1 or
   * PKCS#8 PEM); when absent or "" a key of `key` settings is generated.
   */
  readonly privateKeyPem?: string;
  /** The key to generate when no `privateKeyPem` is given; default EC P-256 (see `keySettings`). */
  readonly key?: KeySettings;
}

/**
 * Generates a self-signed root: CN `Consul CA <serial>`, URI SAN `spiffe://<cluster-id>.consul`,
 * basicConstraints CA:TRUE and keyUsage certSign+cRLSign+digitalSignature (both critical),
 * SKI = AKI = SHA-256 of the public key's SubjectPublicKeyInfo (Consul's `connect.KeyId`).
 * The result is Active with IntermediateCerts [] and indexes 0 (the state store sets them). The root is
 * signed with ECDSA-SHA256 for an EC key of any curve and SHA256-RSA for an RSA key (Consul's
 * `connect.SigAlgoForKey`). Throws for an unsupported or malformed key.
 */
export async function generateRoot(opts: GenerateRootOptions): Promise<RootWithKey> {
  checkSerial(opts.serial);
  if (opts.privateKeyPem) suppliedKeyInfo(opts.privateKeyPem);
  const key = opts.key ?? { type: DEFAULT_PRIVATE_KEY_TYPE, bits: DEFAULT_PRIVATE_KEY_BITS };
  const privateKeyPem = opts.privateKeyPem || (await generatePrivateKey(key.type, key.bits));
  const spki = await publicKeySpki(privateKeyPem);
  const keyId = await connectKeyId(spki);
  const end = new Date(opts.now);
  end.setUTCFullYear(end.getUTCFullYear() + ROOT_VALIDITY_YEARS);
  const certPem = await issueCertificate({
    subjectCommonName: `Consul CA ${opts.serial}`,
    subjectPublicKey: spki,
    signingKeyPem: privateKeyPem,
    serial: BigInt(opts.serial),
    notBefore: opts.now,
    notAfter: end.getTime(),
    ca: {},
    keyUsage: ["keyCertSign", "cRLSign", "digitalSignature"],
    uris: [spiffeSigningId(trustDomain(opts.clusterId))],
    subjectKeyId: keyId,
    authorityKeyId: keyId,
  });
  return { root: await caRootFromPem(certPem, { clusterId: opts.clusterId }), privateKeyPem };
}

/**
 * Uses a configured root (`Config.RootCert` + `Config.PrivateKey`) as is; its key type and size are the
 * key's (any of those {@link generateRoot} accepts). Rejects an unsupported key, a key that does not
 * belong to the certificate and a certificate that is not a CA.
 */
export async function importRoot(opts: { readonly rootCertPem: string; readonly privateKeyPem: string; readonly clusterId: string }): Promise<RootWithKey> {
  suppliedKeyInfo(opts.privateKeyPem);
  if (!parseCertificate(opts.rootCertPem).isCa) throw new Error("RootCert is not a CA certificate");
  if (!(await certificateMatchesKey(opts.rootCertPem, opts.privateKeyPem))) throw new Error("RootCert does not match PrivateKey");
  return { root: await caRootFromPem(opts.rootCertPem, { clusterId: opts.clusterId }), privateKeyPem: opts.privateKeyPem };
}

/**
 * A CARoot describing a root certificate PEM (Consul's `parseCARoot`): ID = SHA-1 fingerprint,
 * SigningKeyID = the certificate's SKI, SerialNumber = the serial's low 64 bits (Go's `Uint64()`),
 * PrivateKeyType/PrivateKeyBits from the public key (`connect.KeyInfoFromCert`: "ec" and the curve size,
 * or "rsa" and the modulus length). Throws on a malformed certificate or another key type.
 */
export async function caRootFromPem(
  certPem: string,
  opts: { readonly clusterId: string; readonly provider?: string; readonly active?: boolean },
): Promise<CARoot> {
  const info = parseCertificate(certPem);
  if (info.publicKey.kind === "other") throw new Error("error extracting root key info: unsupported key type");
  const provider = opts.provider ?? "consul";
  return {
    ID: colonHex(await digest("SHA-1", pemDecode(certPem, "CERTIFICATE"))),
    Name: `${provider.charAt(0).toUpperCase()}${provider.slice(1)} CA Root Cert`,
    SerialNumber: Number(BigInt.asUintN(64, BigInt(`0x${info.serialHex}`))),
    SigningKeyID: colonHex(info.subjectKeyIdHex),
    ExternalTrustDomain: opts.clusterId,
    NotBefore: formatRfc3339(info.notBefore.getTime()),
    NotAfter: formatRfc3339(info.notAfter.getTime()),
    RootCert: certPem,
    IntermediateCerts: [],
    Active: opts.active ?? true,
    PrivateKeyType: info.publicKey.kind.toLowerCase(),
    PrivateKeyBits: info.publicKey.bits,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** Options of {@link crossSignRoot}. */
export interface CrossSignOptions {
  /** The root being rotated in. */
  readonly newRootCertPem: string;
  /** The currently active root and its key. */
  readonly oldRootCertPem: string;
  readonly oldRootKeyPem: string;
  readonly now: number;
  /** Positive safe integer serial, unique among certificates the old key signed. */
  readonly serial: number;
}

/**
 * The old root's key certifies the new root's key (Consul's `CrossSignCA` on the old provider): same
 * subject, public key and extensions as the new root, issuer = the old root, AKI = the old root's key ID,
 * valid from now-1min for 7 days, signed by the old key's algorithm (so any EC/RSA pair of old and new
 * keys works, as in Consul's `CrossSignCA`). Consul stores it as the new root's IntermediateCerts[0] and appends it
 * to every leaf the new root signs, so a peer that still trusts only the old root accepts new leaves
 * through new-leaf -> cross-signed -> old root. Leaves signed by the old root stay valid because the old
 * root stays in the roots list (inactive) -- see {@link rotateRoots}.
 */
export async function crossSignRoot(opts: CrossSignOptions): Promise<string> {
  checkSerial(opts.serial);
  const notBefore = opts.now - CERT_CLOCK_SKEW_MS;
  return reissueCertificate({
    certPem: opts.newRootCertPem,
    issuerCertPem: opts.oldRootCertPem,
    signingKeyPem: opts.oldRootKeyPem,
    serial: BigInt(opts.serial),
    notBefore,
    notAfter: notBefore + CROSS_SIGN_VALIDITY_MS,
    authorityKeyId: await authorityKeyId(opts.oldRootCertPem, opts.oldRootKeyPem),
  });
}

/**
 * The roots list after a rotation (Consul's `ConfigurationSet`): every previously active root becomes
 * inactive (kept, so that its leaves keep verifying until they are replaced), and `newRoot` is appended,
 * active, with `crossSignedPem` (when given) as its first IntermediateCerts entry. Pure; indexes untouched.
 */
export function rotateRoots(roots: readonly CARoot[], newRoot: CARoot, crossSignedPem?: string): CARoot[] {
  if (roots.some((r) => r.ID === newRoot.ID)) throw new Error(`root ${newRoot.ID} is already in the roots list`);
  const intermediates = crossSignedPem ? [crossSignedPem, ...newRoot.IntermediateCerts] : [...newRoot.IntermediateCerts];
  return [...roots.map((r) => (r.Active ? { ...r, Active: false } : r)), { ...newRoot, Active: true, IntermediateCerts: intermediates }];
}

function checkSerial(serial: number): void {
  if (!Number.isSafeInteger(serial) || serial <= 0) throw new Error(`invalid serial number ${serial} (must be a positive safe integer)`);
}
