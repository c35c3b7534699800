/**
 * Connect intentions, the pure core: Consul 1.8's wire shape, body decoding and validation, precedence and
 * ordering, match / check, and the agent's connect authorize decision. No state, no I/O: callers pass the
 * current intentions, "now", fresh IDs and the ACL default.
 */
export {
  INTENTION_DEFAULT_NAMESPACE,
  INTENTION_META_KEY_MAX_LENGTH,
  INTENTION_META_MAX_PAIRS,
  INTENTION_META_VALUE_MAX_LENGTH,
  INTENTION_WILDCARD,
  type Intention,
  type IntentionAction,
  type IntentionBody,
  type IntentionMatchEntry,
  type IntentionMatchQuery,
  type IntentionMatchType,
  type IntentionSourceType,
} from "./types.ts";
export { IntentionError, type IntentionErrorCode } from "./errors.ts";
export { decodeIntentionBody } from "./decode.ts";
export { formatMultiError, validateIntention, type ValidatedFields } from "./validate.ts";
export { compareIntentions, countExact, intentionPrecedence, intentionString, sortIntentions, type IntentionTuple } from "./precedence.ts";
export {
  checkIntentionDelete,
  checkIntentionDuplicate,
  formatGoTime,
  intentionHash,
  prepareIntentionCreate,
  prepareIntentionUpdate,
  type PrepareContext,
} from "./prepare.ts";
export {
  checkIntention,
  decidingIntention,
  matchIntentions,
  parseIntentionMatchEntry,
  sourceMatches,
  type IntentionCheckRequest,
} from "./match.ts";
export { authorize, parseCertUri, type AuthorizeDefault, type AuthorizeRequest, type AuthorizeResponse, type CertUri } from "./authorize.ts";
