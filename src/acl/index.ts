/** ACLs: the rules language, policy merging, authorizers (all pure) and token resolution. */
export {
  chainAuthorizers, enforce, policyAuthorizer, staticAuthorizer, type AclAccess, type AclResource, type Authorizer, type Decision,
} from "./authorizer.ts";
export {
  agentMasterRules, ANONYMOUS_TOKEN_ACCESSOR_ID, ANONYMOUS_TOKEN_DESCRIPTION, ANONYMOUS_TOKEN_SECRET, GLOBAL_MANAGEMENT_POLICY_DESCRIPTION,
  GLOBAL_MANAGEMENT_POLICY_ID, GLOBAL_MANAGEMENT_POLICY_NAME, GLOBAL_MANAGEMENT_RULES, nodeIdentityRules, RESERVED_ID_PREFIX, ROOT_TOKEN_NAMES,
  serviceIdentityRules,
} from "./builtin.ts";
export { mergeRules } from "./merge.ts";
export { ParsedPolicyCache, tokenAuthorizer, tokenRules, type AclObjects } from "./resolve.ts";
export {
  emptyRules, intentionLevel, SCALAR_RESOURCES, SEGMENT_RESOURCES, strongerLevel, type AccessLevel, type ParsedRules, type ScalarResource,
  type SegmentResource, type SegmentRule, type SegmentRules,
} from "./rules.ts";
export { parseRules, RulesError, type RulesSyntax } from "./rules_parse.ts";
export { policyHash, roleHash, tokenHash } from "./hash.ts";
export {
  AclRequestError, buildBootstrapToken, buildPolicyWrite, buildRoleWrite, buildTokenClone, buildTokenCreate, buildTokenUpdate, isUuid, TOKEN_MAX_EXPIRATION_MS, TOKEN_MIN_EXPIRATION_MS,
  type AclLookup, type AclRequestContext, type LinkInput, type PolicyInput, type RoleInput, type TokenInput,
} from "./requests.ts";
export {
  AUTH_METHOD_TYPES, buildAuthMethodWrite, buildBindingRuleWrite, projectedVarNames, type AuthMethodContext, type AuthMethodInput, type BindingRuleContext,
  type BindingRuleInput,
} from "./requests_auth.ts";
export {
  AclPermissionError, buildLegacySet, checkLegacyDelete, LEGACY_CREATE_TIME, legacyAcl, usesNonLegacyFields, type LegacyAcl, type LegacyAclInput,
} from "./legacy.ts";
export { TranslateError, translateLegacyRules } from "./translate.ts";
export { commandDenial, PERMISSION_DENIED, txnDenials } from "./enforce_writes.ts";
export { authorizeRead, REDACTED_TOKEN, type ReadAuthorizeOptions, type ReadDecision } from "./enforce_reads.ts";
export { AclResolveError, createTokenResolver, type ResolvedToken, type TokenResolver, type TokenResolverOptions } from "./token_resolver.ts";
export { ACL_REPLICATION, diffReplicated, type ReplicationDiff } from "./replication_diff.ts";
