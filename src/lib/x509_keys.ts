/**
 * Private keys of a certificate authority: generating them in the PEM form Go (and so Consul) writes,
 * and reading type and size from any PEM form Consul accepts (`connect.ParseSigner`: SEC1 "EC PRIVATE KEY",
 * PKCS#1 "RSA PRIVATE KEY", PKCS#8 "PRIVATE KEY"). Pure apart from WebCrypto key generation.
 */
import * as asn1js from "asn1js";
import { toSec1Pem } from "./x509_issue.ts";
import { bitLength, pemEncode, privateKeyToPkcs8 } from "./x509_der.ts";

/** A key's algorithm and size: EC curve size (256, 384, 521) or RSA modulus length. */
export interface PrivateKeyInfo {
  readonly type: "ec" | "rsa";
  readonly bits: number;
}

const EC_CURVES: Readonly<Record<number, "P-256" | "P-384" | "P-521">> = { 256: "P-256", 384: "P-384", 521: "P-521" };

/**
 * Generates a private key like Consul's `connect.GeneratePrivateKeyWithConfig`: "ec" with 256, 384 or 521
 * bits (NIST P-256/P-384/P-521) as SEC1 "EC PRIVATE KEY" PEM; "rsa" with at least 2048 bits (exponent
 * 65537) as PKCS#1 "RSA PRIVATE KEY" PEM. Throws for anything else, P-224 included (WebCrypto has no P-224).
 */
export async function generatePrivateKey(type: string, bits: number): Promise<string> {
  if (type === "ec") {
    const curve = EC_CURVES[bits];
    if (!curve) {
      throw new Error(bits === 224
        ? "EC P-224 keys are not supported (WebCrypto has no P-224 curve): use 256, 384 or 521 bits"
        : `unknown EC curve length ${bits}: use 256, 384 or 521 bits`);
    }
    const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: curve }, true, ["sign", "verify"])) as CryptoKeyPair;
    return toSec1Pem(pemEncode("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", keys.privateKey)));
  }
  if (type === "rsa") {
    if (!Number.isSafeInteger(bits) || bits < 2048 || bits > 16384 || bits % 8 !== 0) {
      throw new Error(`invalid RSA key size ${bits}: must be a multiple of 8 from 2048 to 16384 bits`);
    }
    const params = { name: "RSASSA-PKCS1-v1_5", modulusLength: bits, publicExponent: Uint8Array.from([1, 0, 1]), hash: "SHA-256" };
    const keys = (await crypto.subtle.generateKey(params, true, ["sign", "verify"])) as CryptoKeyPair;
    return pemEncode("RSA PRIVATE KEY", pkcs8Inner(new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey))));
  }
  throw new Error(`unknown private key type requested: ${type}`);
}

/**
 * Type and size of a private key PEM (SEC1, PKCS#1 or PKCS#8), read from its structure without importing
 * it. Throws on a malformed key or an algorithm other than EC P-256/P-384/P-521 and RSA.
 */
export function privateKeyInfo(keyPem: string): PrivateKeyInfo {
  const { pkcs8, algorithm } = privateKeyToPkcs8(keyPem);
  if (algorithm.kind === "EC") return { type: "ec", bits: { "P-256": 256, "P-384": 384, "P-521": 521 }[algorithm.namedCurve] };
  // RSAPrivateKey ::= SEQUENCE { version, modulus, publicExponent, ... } (RFC 8017 A.1.2)
  const parsed = asn1js.fromBER(pkcs8Inner(pkcs8));
  const modulus = parsed.offset === -1 ? undefined : (parsed.result as asn1js.Sequence).valueBlock.value?.[1];
  if (!(modulus instanceof asn1js.Integer)) throw new Error("malformed RSA private key");
  return { type: "rsa", bits: bitLength(modulus.valueBlock.valueHexView) };
}

/** The privateKey OCTET STRING contents of a PKCS#8 PrivateKeyInfo (for RSA: the PKCS#1 RSAPrivateKey DER). */
function pkcs8Inner(pkcs8: Uint8Array): Uint8Array<ArrayBuffer> {
  const parsed = asn1js.fromBER(pkcs8);
  const inner = parsed.offset === -1 ? undefined : (parsed.result as asn1js.Sequence).valueBlock.value?.[2];
  if (!(inner instanceof asn1js.OctetString)) throw new Error("malformed PKCS#8 private key");
  return new Uint8Array(inner.valueBlock.valueHexView);
}
