import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { generatePrivateKey, importSigningKey, pemEncode, privateKeyInfo, publicKeySpki } from "./index.ts";
import { OPENSSL, opensslWorkspace } from "../../test/harness/openssl.ts";

const { file, openssl } = opensslWorkspace("causeway-x509-keys-");

describe("generatePrivateKey", () => {
  test.each([[256, "prime256v1"], [384, "secp384r1"], [521, "secp521r1"]])("ec %p: SEC1 PEM on curve %s that openssl checks", async (bits: number, curve: string) => {
    const pem = await generatePrivateKey("ec", bits);
    expect(pem).toStartWith("-----BEGIN EC PRIVATE KEY-----\n");
    const out = openssl("ec", "-in", file(pem), "-check", "-noout", "-text").out;
    expect(out).toContain("EC Key valid");
    expect(out).toContain(`ASN1 OID: ${curve}`);
    expect(privateKeyInfo(pem)).toEqual({ type: "ec", bits });
  });

  test("rsa 2048: PKCS#1 PEM (Go's MarshalPKCS1PrivateKey form) that openssl checks, exponent 65537", async () => {
    const pem = await generatePrivateKey("rsa", 2048);
    expect(pem).toStartWith("-----BEGIN RSA PRIVATE KEY-----\n");
    const out = openssl("rsa", "-in", file(pem), "-check", "-noout", "-text").out;
    expect(out).toContain("RSA key ok");
    expect(out).toContain("Private-Key: (2048 bit, 2 primes)");
    expect(out).toContain("publicExponent: 65537 (0x10001)");
    expect(privateKeyInfo(pem)).toEqual({ type: "rsa", bits: 2048 });
    // The PKCS#1 form signs and yields the same public key as openssl reads from it.
    await importSigningKey(pem);
    const der = spawnSync(OPENSSL, ["pkey", "-in", file(pem), "-pubout", "-outform", "DER"]).stdout;
    expect(Array.from(await publicKeySpki(pem))).toEqual(Array.from(der));
  });

  test.each([
    ["ec", 224, "EC P-224 keys are not supported (WebCrypto has no P-224 curve): use 256, 384 or 521 bits"],
    ["ec", 512, "unknown EC curve length 512: use 256, 384 or 521 bits"],
    ["rsa", 1024, "invalid RSA key size 1024: must be a multiple of 8 from 2048 to 16384 bits"],
    ["rsa", 2049, "invalid RSA key size 2049"],
    ["dsa", 2048, "unknown private key type requested: dsa"],
  ])("%s %p is refused", async (type: string, bits: number, message: string) => {
    await expect(generatePrivateKey(type, bits)).rejects.toThrow(message);
  });
});

describe("privateKeyInfo reads every PEM form Consul's ParseSigner accepts", () => {
  const cases: [string, string[], { type: string; bits: number }][] = [
    ["SEC1 P-256", ["ecparam", "-genkey", "-name", "prime256v1", "-noout"], { type: "ec", bits: 256 }],
    ["PKCS#8 P-384", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"], { type: "ec", bits: 384 }],
    ["SEC1 P-521", ["ecparam", "-genkey", "-name", "secp521r1", "-noout"], { type: "ec", bits: 521 }],
    ["PKCS#1 RSA 2048", ["genrsa", "-traditional", "2048"], { type: "rsa", bits: 2048 }],
    ["PKCS#8 RSA 3072", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072"], { type: "rsa", bits: 3072 }],
  ];
  for (const [name, args, want] of cases) {
    test(`${name} (made by openssl): ${want.type}/${want.bits}, importable for signing`, async () => {
      const pem = openssl(...args).out;
      expect(privateKeyInfo(pem)).toEqual(want as never);
      await importSigningKey(pem);
    });
  }

  test("unsupported curves and algorithms, and malformed keys, throw readable errors", () => {
    expect(() => privateKeyInfo(openssl("ecparam", "-genkey", "-name", "secp224r1", "-noout").out))
      .toThrow("unsupported EC curve P-224 (1.3.132.0.33): only P-256, P-384 and P-521 are supported");
    expect(() => privateKeyInfo(openssl("ecparam", "-genkey", "-name", "secp256k1", "-noout").out)).toThrow("unsupported EC curve secp256k1");
    expect(() => privateKeyInfo(openssl("genpkey", "-algorithm", "ED25519").out)).toThrow("unsupported key algorithm 1.3.101.112");
    expect(() => privateKeyInfo("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")).toThrow("no PEM PRIVATE KEY");
    expect(() => privateKeyInfo(pemEncode("RSA PRIVATE KEY", Uint8Array.from([4, 1, 0])))).toThrow("malformed RSA PRIVATE KEY (PKCS#1)");
    expect(() => privateKeyInfo(pemEncode("RSA PRIVATE KEY", Uint8Array.from([0x30, 0x03, 0x02, 0x01, 0x00])))).toThrow("malformed RSA private key");
    expect(() => privateKeyInfo(pemEncode("PRIVATE KEY", Uint8Array.from([0x30, 0x00])))).toThrow("malformed PRIVATE KEY (PKCS#8)");
    expect(() => privateKeyInfo(pemEncode("EC PRIVATE KEY", Uint8Array.from([0xff])))).toThrow("malformed EC PRIVATE KEY (SEC1)");
  });
});
