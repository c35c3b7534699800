/**
 * The lib layer's public face: small pure helpers with no dependency on other src folders.
 * No clock, no global randomness: callers pass "now" and a source of random bytes.
 */
export {
  createCa,
  createLeaf,
  importSigningKey,
  type CaOptions,
  type CertAndKey,
  type LeafOptions,
  type KeyUsageName,
  type LeafUsage,
} from "./x509.ts";
export {
  digest,
  generateEcPrivateKey,
  issueCertificate,
  publicKeySpki,
  reissueCertificate,
  serialBytes,
  toSec1Pem,
  type CertificateSpec,
  type ReissueSpec,
} from "./x509_issue.ts";
export { createCertificationRequest, parseCertificationRequest, type CsrInfo, type CsrOptions } from "./x509_csr.ts";
export { generatePrivateKey, privateKeyInfo, type PrivateKeyInfo } from "./x509_keys.ts";
export { formatDuration, nonNegativeDurationMs, parseDuration } from "./duration.ts";
export * from "./go_json/index.ts";
export { formatIp, parseIp, pemBlocks, pemDecode, pemEncode, type PemBlock, type RandomBytes } from "./x509_der.ts";
export { certificateMatchesKey, parseCertificate, parseCertificates, type CertificateInfo } from "./x509_parse.ts";
export { ByteBuffer, concatBytes, varintSize } from "./byte_buffer.ts";
export { fromBase64, toBase64 } from "./base64.ts";
export { shutdownStack, type ShutdownStack } from "./shutdown_stack.ts";
export { bigintReplacer, parseExact, stringifyExact, type Uint64 } from "./uint64_json.ts";
export { ownEntry } from "./own_entry.ts";
export * from "./sockaddr/index.ts";
