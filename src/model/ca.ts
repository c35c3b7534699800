/**
 * Connect CA values in Consul 1.8's JSON wire shape (`agent/structs/connect_ca.go`, `/v1/connect/ca/*`).
 * PascalCase fields, times as RFC 3339 strings (Go's `time.Time` JSON, e.g. "2018-05-25T21:39:23Z"), raft
 * indexes as numbers. Root generation, signing and defaults live in src/connect/ca; these are the plain
 * types the state store holds.
 */

/** One trusted root (`structs.CARoot`). */
export interface CARoot {
  /** SHA-1 fingerprint of the root certificate's DER, lower-case colon hex (`connect.CalculateCertFingerprint`). */
  readonly ID: string;
  /** `"<Provider> CA Root Cert"`, i.e. "Consul CA Root Cert" for the built-in provider. */
  readonly Name: string;
  /** The root certificate's serial number (uint64 in Consul; a safe integer here). */
  readonly SerialNumber: number;
  /**
   * The root's subjectKeyIdentifier, lower-case colon hex (`connect.EncodeSigningKeyID`). For roots made
   * by the built-in provider it is the SHA-256 of the public key's SubjectPublicKeyInfo (`connect.KeyId`),
   * so 32 bytes. Leaves carry it as their authorityKeyIdentifier; agents compare the two to notice rotation.
   */
  readonly SigningKeyID: string;
  /** The cluster ID that made this root (the trust domain without `.consul`). */
  readonly ExternalTrustDomain: string;
  /** RFC 3339. */
  readonly NotBefore: string;
  readonly NotAfter: string;
  /** PEM of the root certificate. */
  readonly RootCert: string;
  /**
   * Extra PEM certificates appended to every leaf this root's key signs: after a rotation, the new root
   * cross-signed by the previous one. Consul omits the field (null) when there are none; here it is [].
   */
  readonly IntermediateCerts: readonly string[];
  /** True for exactly one root: the one that signs new leaves. */
  readonly Active: boolean;
  /** "ec" or "rsa" (`connect.KeyInfoFromCert`). */
  readonly PrivateKeyType: string;
  /** 256 for the default P-256 key. */
  readonly PrivateKeyBits: number;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** GET /v1/connect/ca/roots (`structs.IndexedCARoots`; the X-Consul-Index header carries the index). */
export interface IndexedCARoots {
  /** ID of the active root, "" before the CA is initialised. */
  readonly ActiveRootID: string;
  /** `<cluster-id>.consul`. */
  readonly TrustDomain: string;
  readonly Roots: readonly CARoot[];
}

/** The built-in provider's `Config` map (`structs.ConsulCAProviderConfig` as JSON in 1.8). */
export interface ConsulCAProviderConfig {
  /** Go duration text; default "72h". */
  readonly LeafCertTTL: string;
  /**
   * The kind of key the CA generates when no PrivateKey is given (`CommonCAProviderConfig`): "ec" (default)
   * or "rsa". Ignored for a supplied key, whose own type counts. Absent when the configuration names none.
   */
  readonly PrivateKeyType?: string;
  /** Its size: 256 (default), 384, 521 for "ec"; 2048, 4096 for "rsa". Absent when the configuration names none. */
  readonly PrivateKeyBits?: number;
  /** A user-supplied root key: EC or RSA, PEM SEC1, PKCS#1 or PKCS#8; "" or absent means "generate one". */
  readonly PrivateKey?: string;
  /** A user-supplied root certificate (PEM) matching PrivateKey; "" or absent means "generate one". */
  readonly RootCert?: string;
  /**
   * In a secondary datacenter: the intermediate certificate the primary signed for this datacenter's
   * key (then `PrivateKey` is the intermediate's key and `RootCert` the primary's active root). Leaves
   * are issued by it. Absent in a primary datacenter.
   */
  readonly IntermediateCert?: string;
  /** Default "2160h" (stored by Consul, not acted on in 1.8). */
  readonly RotationPeriod: string;
  /** Default "8760h": validity of intermediates signed for secondary datacenters. */
  readonly IntermediateCertTTL: string;
}

/** GET/PUT /v1/connect/ca/configuration (`structs.CAConfiguration`). */
export interface CAConfiguration {
  /** A UUID; the trust domain is `<ClusterID>.consul`. */
  readonly ClusterID: string;
  /** "consul" (the built-in provider) is the only provider implemented. */
  readonly Provider: "consul";
  readonly Config: ConsulCAProviderConfig;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}
