/**
 * The CA's key settings and key checks, after Consul 1.8's `CommonCAProviderConfig.Validate`
 * (agent/structs/connect_ca.go), `connect.GeneratePrivateKeyWithConfig` (agent/connect/generate.go)
 * and `connect.KeyId` / `parseCARoot` (agent/connect, agent/consul/leader_connect.go).
 */
import { parseCertificate, privateKeyInfo, publicKeySpki, type PrivateKeyInfo } from "../../lib/index.ts";
import { connectKeyId } from "./key_id.ts";

/** Consul's `connect.DefaultPrivateKeyType` / `DefaultPrivateKeyBits`: a NIST P-256 key. */
export const DEFAULT_PRIVATE_KEY_TYPE = "ec";
export const DEFAULT_PRIVATE_KEY_BITS = 256;
/** Consul's `connect.MinPrivateKeyBitsRSA`: the floor for generated and (here) supplied RSA keys. */
export const MIN_RSA_KEY_BITS = 2048;

/** What kind of key the CA generates. */
export interface KeySettings {
  readonly type: "ec" | "rsa";
  readonly bits: number;
}

/**
 * Config.PrivateKeyType / PrivateKeyBits checked as Consul 1.8's `CommonCAProviderConfig.Validate` does
 * after its defaults: an absent (undefined or null) field takes the default ("ec", 256); a present one
 * is taken as is, so "" or 0 are refused like in Consul. Allowed: "ec" with 224/256/384/521 and "rsa"
 * with 2048/4096. P-224 passes Consul's check but WebCrypto has no P-224, so it is refused here with
 * its own message. Throws an Error with Consul's text (its "ecdsa" typo included).
 */
export function keySettings(type: unknown, bits: unknown): KeySettings {
  const t = type === undefined || type === null ? DEFAULT_PRIVATE_KEY_TYPE : type;
  const b = bits === undefined || bits === null ? DEFAULT_PRIVATE_KEY_BITS : bits;
  if (t === "ec") {
    if (b !== 224 && b !== 256 && b !== 384 && b !== 521) throw new Error("ECDSA key length must be one of (224, 256, 384, 521) bits");
    if (b === 224) {
      throw new Error("ECDSA P-224 keys are not supported by this CA (WebCrypto has no P-224 curve): PrivateKeyBits must be 256, 384 or 521");
    }
    return { type: "ec", bits: b };
  }
  if (t === "rsa") {
    if (b !== 2048 && b !== 4096) throw new Error("RSA key length must be 2048 or 4096 bits");
    return { type: "rsa", bits: b };
  }
  throw new Error("private key type must be either 'ecdsa' or 'rsa'");
}

/** Whether a provider config names a key type or size at all (absent and null mean "use the defaults"). */
export function namesKeySettings(config: { readonly PrivateKeyType?: unknown; readonly PrivateKeyBits?: unknown }): boolean {
  return (config.PrivateKeyType ?? null) !== null || (config.PrivateKeyBits ?? null) !== null;
}

/**
 * Type and size of a user-supplied CA key (`Config.PrivateKey`): EC P-256/P-384/P-521 or RSA of at
 * least {@link MIN_RSA_KEY_BITS} bits, in SEC1, PKCS#1 or PKCS#8 PEM. Throws a readable Error otherwise.
 */
export function suppliedKeyInfo(keyPem: string): PrivateKeyInfo {
  const info = privateKeyInfo(keyPem);
  if (info.type === "rsa" && info.bits < MIN_RSA_KEY_BITS) {
    throw new Error(`RSA key must be at least ${MIN_RSA_KEY_BITS} bits, PrivateKey has ${info.bits}`);
  }
  return info;
}

/**
 * The key ID that certificates signed by this CA carry as their authorityKeyIdentifier: the CA
 * certificate's subjectKeyIdentifier when it has one (so the chain links by key ID, as RFC 5280 4.2.1.1
 * and openssl expect, also for a user-supplied root whose SKI is not Consul's), otherwise Consul's
 * `connect.KeyId`: SHA-256 of the key's SubjectPublicKeyInfo DER. For roots made here both are the same.
 */
export async function authorityKeyId(caCertPem: string, caKeyPem: string): Promise<Uint8Array> {
  const ski = parseCertificate(caCertPem).subjectKeyIdHex;
  if (ski) return Uint8Array.from(ski.match(/../g)!, (h) => Number.parseInt(h, 16));
  return connectKeyId(await publicKeySpki(caKeyPem));
}
