/**
 * The Connect CA core (built-in "consul" provider, Consul 1.8 behaviour): wire types, SPIFFE IDs, root
 * generation and rotation (cross-signing), leaf signing and the agent's renewal decision. Pure apart from
 * WebCrypto: callers inject "now", serial numbers and randomness; nothing here stores state.
 */
export {
  CA_CHANGE_JITTER_WINDOW_MS, leafRenewalWindow, MIN_RENEWABLE_LIFETIME_MS, shouldRotateLeaf,
  type LeafRotationDecision, type LeafRotationInput, type RenewalWindow, type UnitRandom,
} from "./renew.ts";
export {
  authorityKeyId, DEFAULT_PRIVATE_KEY_BITS, DEFAULT_PRIVATE_KEY_TYPE, keySettings, MIN_RSA_KEY_BITS, namesKeySettings, suppliedKeyInfo,
  type KeySettings,
} from "./keys.ts";
export { createIntermediateCsr, signIntermediateCsr } from "./intermediate.ts";
export { leafSigningKeyId, signCsr, signLeaf, type LeafSigningContext, type SignLeafOptions, type SigningCa } from "./leaf.ts";
export {
  caRootFromPem, crossSignRoot, generateRoot, importRoot, rotateRoots,
  type CrossSignOptions, type GenerateRootOptions, type RootWithKey,
} from "./root.ts";
export {
  canSign, newClusterId, parseSpiffeId, spiffeServiceId, spiffeSigningId, trustDomain, TRUST_DOMAIN_SUFFIX,
  type SpiffeId, type SpiffeServiceParts,
} from "./spiffe.ts";
export {
  CERT_CLOCK_SKEW_MS, colonHex, CROSS_SIGN_VALIDITY_MS, DEFAULT_INTERMEDIATE_CERT_TTL, DEFAULT_LEAF_CERT_TTL, DEFAULT_ROTATION_PERIOD,
  defaultCaConfiguration, formatRfc3339, ROOT_VALIDITY_YEARS,
  type CAConfiguration, type CARoot, type ConsulCAProviderConfig, type IndexedCARoots, type IssuedCert,
} from "./types.ts";
