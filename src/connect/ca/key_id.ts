/**
 * Consul's `connect.KeyId` (agent/connect/parsing.go): the key identifier Connect CA certificates carry
 * as subjectKeyIdentifier, SHA-256 of the key's SubjectPublicKeyInfo DER (not RFC 5280's SHA-1 of the
 * key bits; RFC 5280 4.2.1.2 allows any unique value).
 */
import { digest } from "../../lib/index.ts";

/** The 32-byte Connect key ID of a public key given as SubjectPublicKeyInfo DER. */
export function connectKeyId(spki: Uint8Array): Promise<Uint8Array> {
  return digest("SHA-256", spki);
}
