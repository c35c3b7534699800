/**
 * What Consul 1.8's ACL RPC endpoint does with an auth method or binding rule write before it reaches
 * Raft (`agent/consul/acl_endpoint.go` AuthMethodSet, BindingRuleSet), with its messages. Pure: the
 * existing objects come in as arguments, randomness through `newUuid`, and the selector check (bexpr,
 * which lives in src/connect) through `checkSelector`. Refusals throw AclRequestError (Consul answers
 * them 500; the HTTP layer answers 400, as for tokens, policies and roles).
 *
 * Not modelled: the per-type validation of `Config` (kubeauth's Host/CACert/ServiceAccountJWT, the jwt
 * method's key sources), which in Consul builds a validator that talks to Kubernetes or fetches keys.
 * This build stores the Config as given; login is refused for every type (see src/http/acl_login.ts).
 */
import { formatGoDuration } from "../lib/index.ts";
import type { AclAuthMethod, AclBindingRule } from "../model/index.ts";
import type { AclAuthMethodWrite, AclBindingRuleWrite } from "../state/index.ts";
import { AclRequestError, isUuid, TOKEN_MAX_EXPIRATION_MS, TOKEN_MIN_EXPIRATION_MS } from "./requests.ts";

const fail = (message: string): never => {
  throw new AclRequestError(message);
};

/**
 * The auth method types this build accepts, sorted as authmethod.Types() lists them. Consul 1.8 OSS
 * registers `kubernetes` (kubeauth) and `jwt` (ssoauth); `oidc` is Enterprise-only.
 */
export const AUTH_METHOD_TYPES: readonly string[] = ["jwt", "kubernetes"];

/** Consul's validAuthMethod. */
const AUTH_METHOD_NAME = /^[A-Za-z0-9\-_]{1,128}$/;
/** validServiceIdentityName / validNodeIdentityName and validRoleName (requests.ts has the same rules). */
const IDENTITY_NAME = /^[a-z0-9]([a-z0-9\-_]*[a-z0-9])?$/;
const ROLE_NAME = /^[A-Za-z0-9\-_]{1,256}$/;

/** An auth method as a request carries it (the HTTP layer decoded it; MaxTokenTTL in nanoseconds). */
export interface AuthMethodInput {
  readonly Name?: string;
  readonly Type?: string;
  readonly DisplayName?: string;
  readonly Description?: string;
  readonly MaxTokenTTLNs?: number;
  readonly TokenLocality?: string;
  readonly Config?: Readonly<Record<string, unknown>> | null;
}

export interface AuthMethodContext {
  /** The stored method of the same name (case-insensitively), if any: the write is then an update. */
  readonly existing: AclAuthMethod | undefined;
  /** Whether this server's datacenter is the primary (TokenLocality "global" is allowed only there). */
  readonly inPrimaryDatacenter: boolean;
}

/**
 * AuthMethodSet: name checked, Type kept from the existing method when omitted and immutable otherwise,
 * Type one of AUTH_METHOD_TYPES, MaxTokenTTL within the token expiration bounds, TokenLocality valid.
 */
export function buildAuthMethodWrite(input: AuthMethodInput, ctx: AuthMethodContext): AclAuthMethodWrite {
  const name = input.Name ?? "";
  if (name === "") fail("Invalid Auth Method: no Name is set");
  if (!AUTH_METHOD_NAME.test(name)) fail("Invalid Auth Method: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
  let type = input.Type ?? "";
  if (ctx.existing) {
    if (type === "") type = ctx.existing.Type;
    else if (type !== ctx.existing.Type) fail("the Type field of an Auth Method is immutable");
  }
  if (!AUTH_METHOD_TYPES.includes(type)) fail(`Invalid Auth Method: Type should be one of: [${AUTH_METHOD_TYPES.join(" ")}]`);
  const ttlNs = input.MaxTokenTTLNs ?? 0;
  if (ttlNs !== 0) {
    if (ttlNs > TOKEN_MAX_EXPIRATION_MS * 1e6) fail(`MaxTokenTTL ${formatGoDuration(ttlNs)} cannot be more than ${formatGoDuration(TOKEN_MAX_EXPIRATION_MS * 1e6)}`);
    if (ttlNs < TOKEN_MIN_EXPIRATION_MS * 1e6) fail(`MaxTokenTTL ${formatGoDuration(ttlNs)} cannot be less than ${formatGoDuration(TOKEN_MIN_EXPIRATION_MS * 1e6)}`);
  }
  const locality = input.TokenLocality ?? "";
  if (locality === "global" && !ctx.inPrimaryDatacenter) fail("Invalid Auth Method: TokenLocality 'global' can only be used in the primary datacenter");
  if (locality !== "" && locality !== "local" && locality !== "global") fail("Invalid Auth Method: TokenLocality should be one of 'local' or 'global'");
  return {
    Name: name,
    Type: type,
    ...(input.DisplayName ? { DisplayName: input.DisplayName } : {}),
    Description: input.Description ?? "",
    ...(ttlNs !== 0 ? { MaxTokenTTL: formatGoDuration(ttlNs) } : {}),
    ...(locality ? { TokenLocality: locality as "local" | "global" } : {}),
    ...(input.Config && Object.keys(input.Config).length ? { Config: input.Config } : {}),
  };
}

/**
 * The variables a binding rule's BindName may use for a method (the blank identity's
 * ProjectedVarNames): kubernetes' service account fields; for jwt, `value.<name>` for each
 * Config.ClaimMappings target.
 */
export function projectedVarNames(method: Pick<AclAuthMethod, "Type" | "Config">): string[] {
  if (method.Type === "kubernetes") return ["serviceaccount.namespace", "serviceaccount.name", "serviceaccount.uid"];
  const mappings = method.Config?.ClaimMappings;
  if (mappings && typeof mappings === "object") return Object.values(mappings as Record<string, unknown>).filter((v) => typeof v === "string").map((v) => `value.${v}`);
  return [];
}

/** A binding rule as a request carries it. */
export interface BindingRuleInput {
  readonly ID?: string;
  readonly Description?: string;
  readonly AuthMethod?: string;
  readonly Selector?: string;
  readonly BindType?: string;
  readonly BindName?: string;
}

export interface BindingRuleContext {
  /** The stored rule with the input's ID, if any (only looked at when the input has an ID). */
  readonly existing: AclBindingRule | undefined;
  /** A stored auth method by name (case-insensitively). */
  authMethod(name: string): AclAuthMethod | undefined;
  /** Whether a rule with this ID exists (a fresh ID must not be one). */
  ruleExists(id: string): boolean;
  /** A fresh random UUID per call. */
  newUuid(): string;
  /** The selector's compile error for this method's selectable fields, or undefined when it is valid. */
  checkSelector(method: AclAuthMethod, selector: string): string | undefined;
}

/**
 * BindName with each `${var}` replaced by a placeholder (Consul's validateBindingRuleBindName
 * interpolates "fake" values), then checked as the bind type's name: a service or node identity
 * name, or a role name.
 */
function checkBindName(bindType: string, bindName: string, vars: readonly string[]): void {
  let bad: string | undefined;
  const filled = bindName.replace(/\$\{([^}]*)\}/g, (_m, v: string) => {
    const name = v.trim();
    if (!vars.includes(name)) bad ??= name;
    return "fake";
  });
  if (bad !== undefined) fail(`Invalid Binding Rule: invalid BindName: unknown variable accessed: ${bad}`);
  if (filled.includes("${")) fail("Invalid Binding Rule: invalid BindName: unterminated interpolation");
  const ok = bindType === "role" ? ROLE_NAME.test(filled) : filled.length <= 256 && IDENTITY_NAME.test(filled);
  if (!ok) fail("Invalid Binding Rule: invalid BindName");
}

/**
 * BindingRuleSet: create (no ID: a fresh one) or update (the ID of an existing rule, whose AuthMethod
 * may be omitted but not changed); the method must exist; Selector, BindType and BindName checked.
 */
export function buildBindingRuleWrite(input: BindingRuleInput, ctx: BindingRuleContext): AclBindingRuleWrite {
  let id: string;
  let methodName = input.AuthMethod ?? "";
  if (!input.ID) {
    do id = ctx.newUuid(); while (ctx.ruleExists(id));
  } else {
    if (!isUuid(input.ID)) fail("Binding Rule ID invalid UUID");
    if (!ctx.existing) fail(`cannot find binding rule ${input.ID}`);
    id = ctx.existing!.ID;
    if (methodName === "") methodName = ctx.existing!.AuthMethod;
    else if (methodName !== ctx.existing!.AuthMethod) fail("the AuthMethod field of an Binding Rule is immutable");
  }
  if (methodName === "") fail("Invalid Binding Rule: no AuthMethod is set");
  const method = ctx.authMethod(methodName);
  if (!method) fail(`cannot find auth method with name ${JSON.stringify(methodName)}`);
  const selector = input.Selector ?? "";
  if (selector !== "") {
    const err = ctx.checkSelector(method!, selector);
    if (err !== undefined) fail(`invalid Binding Rule: Selector is invalid: ${err}`);
  }
  const bindType = input.BindType ?? "";
  const bindName = input.BindName ?? "";
  if (bindType === "") fail("Invalid Binding Rule: no BindType is set");
  if (bindName === "") fail("Invalid Binding Rule: no BindName is set");
  // "node" is 1.8.1's, with node identities.
  if (bindType !== "service" && bindType !== "role" && bindType !== "node") fail(`Invalid Binding Rule: unknown BindType ${JSON.stringify(bindType)}`);
  checkBindName(bindType, bindName, projectedVarNames(method!));
  return {
    ID: id, Description: input.Description ?? "", AuthMethod: methodName, Selector: selector, BindType: bindType as AclBindingRule["BindType"], BindName: bindName,
  };
}
