/**
 * What Consul 1.8's ACL RPC endpoint does with a token, policy or role write before it reaches Raft
 * (`agent/consul/acl_endpoint.go` tokenSetInternal, policySetInternal, roleSetInternal): IDs generated
 * or checked, links resolved from names to IDs (and stored without names), identities validated and
 * de-duplicated, expiration settled, CreateTime and Hash set. Pure: the state comes through `lookup`,
 * randomness through `newUuid`, time through `now`. Refusals throw AclRequestError with Consul's text
 * (Consul answers them 500; the HTTP layer answers 400).
 */
import {
  GLOBAL_MANAGEMENT_POLICY_ID, type AclAuthMethod, type AclLink, type AclNodeIdentity, type AclPolicy, type AclRole, type AclServiceIdentity, type AclTokenRecord,
} from "../model/index.ts";
import type { AclPolicyWrite, AclRoleWrite, AclTokenWrite } from "../state/index.ts";
import { RESERVED_ID_PREFIX } from "./builtin.ts";
import { policyHash, roleHash, tokenHash } from "./hash.ts";
import { parseRules, RulesError } from "./rules_parse.ts";

export class AclRequestError extends Error {
  override readonly name = "AclRequestError";
}

/** The state an ACL write is checked against. */
export interface AclLookup {
  tokenByAccessor(id: string): AclTokenRecord | undefined;
  tokenBySecret(secret: string): AclTokenRecord | undefined;
  policyById(id: string): AclPolicy | undefined;
  policyByName(name: string): AclPolicy | undefined;
  roleById(id: string): AclRole | undefined;
  roleByName(name: string): AclRole | undefined;
  authMethod(name: string): AclAuthMethod | undefined;
}

export interface AclRequestContext {
  readonly lookup: AclLookup;
  /** A fresh random UUID per call. */
  newUuid(): string;
  /** Wall-clock milliseconds. */
  now(): number;
}

/** A link as a request may give it: by ID or by name. */
export interface LinkInput {
  readonly ID?: string;
  readonly Name?: string;
}

/** A token as a create or update request carries it (the HTTP layer decoded it; ExpirationTTL in ms). */
export interface TokenInput {
  readonly AccessorID?: string;
  readonly SecretID?: string;
  readonly Description?: string;
  readonly Policies?: readonly LinkInput[];
  readonly Roles?: readonly LinkInput[];
  readonly ServiceIdentities?: readonly AclServiceIdentity[];
  readonly NodeIdentities?: readonly AclNodeIdentity[];
  readonly Local?: boolean;
  readonly AuthMethod?: string;
  readonly ExpirationTime?: string;
  readonly ExpirationTTLMs?: number;
  readonly Rules?: string;
  readonly Type?: string;
}

/** Consul's ACLTokenMaxExpirationTTL and ACLTokenMinExpirationTTL. */
export const TOKEN_MAX_EXPIRATION_MS = 24 * 3_600_000;
export const TOKEN_MIN_EXPIRATION_MS = 60_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID.test(s);
const reserved = (s: string) => s.startsWith(RESERVED_ID_PREFIX);
/** Consul's validServiceIdentityName / validNodeIdentityName (at most 256 characters). */
const IDENTITY_NAME = /^[a-z0-9]([a-z0-9\-_]*[a-z0-9])?$/;
const validIdentityName = (s: string) => s.length <= 256 && IDENTITY_NAME.test(s);
const rfc3339 = (ms: number) => new Date(ms).toISOString();

const fail = (message: string): never => {
  throw new AclRequestError(message);
};

/** A fresh UUID no token uses as accessor or secret, outside the reserved prefix (lib.GenerateUUID with checkTokenUUID). */
function freshTokenUuid(ctx: AclRequestContext): string {
  for (;;) {
    const id = ctx.newUuid();
    if (!reserved(id) && !ctx.lookup.tokenByAccessor(id) && !ctx.lookup.tokenBySecret(id)) return id;
  }
}

/** A user-given accessor or secret: a UUID, not reserved, used by no token in either role. */
function givenTokenUuid(id: string, field: "AccessorID" | "SecretID", ctx: AclRequestContext): string {
  if (!isUuid(id)) fail(`Invalid Token: ${field} is not a valid UUID`);
  if (reserved(id)) fail(`Invalid Token: UUIDs with the prefix "${RESERVED_ID_PREFIX}" are reserved`);
  if (ctx.lookup.tokenByAccessor(id) || ctx.lookup.tokenBySecret(id)) fail(`Invalid Token: ${field} is already in use`);
  return id;
}

/** Links resolved to existing objects by ID (or by name when no ID is given), de-duplicated, stored without names. */
function resolveLinks(links: readonly LinkInput[] | undefined, what: "policy" | "role", byId: (id: string) => { ID: string } | undefined, byName: (n: string) => { ID: string } | undefined): AclLink[] {
  const out: AclLink[] = [];
  const seen = new Set<string>();
  for (const l of links ?? []) {
    const found = l.ID ? byId(l.ID) : byName(l.Name ?? "");
    if (!found) fail(l.ID ? `No such ACL ${what} with ID "${l.ID}"` : `No such ACL ${what} with name "${l.Name ?? ""}"`);
    if (seen.has(found!.ID.toLowerCase())) continue;
    seen.add(found!.ID.toLowerCase());
    out.push({ ID: found!.ID, Name: "" });
  }
  return out;
}

/** Service and node identities checked and de-duplicated as Consul does (sorted by name when more than one). */
function identities(x: Pick<TokenInput, "ServiceIdentities" | "NodeIdentities">, holder: "token" | "role", local: boolean) {
  for (const s of x.ServiceIdentities ?? []) {
    if (!s.ServiceName) fail(`Service identity is missing the service name field on this ${holder}`);
    if (local && s.Datacenters && s.Datacenters.length > 0) fail(`Service identity "${s.ServiceName}" cannot specify a list of datacenters on a local token`);
    if (!validIdentityName(s.ServiceName)) fail(`Service identity "${s.ServiceName}" has an invalid name. Only alphanumeric characters, '-' and '_' are allowed`);
  }
  for (const n of x.NodeIdentities ?? []) {
    if (!n.NodeName) fail(`Node identity is missing the node name field on this ${holder}`);
    if (!n.Datacenter) fail(`Node identity is missing the datacenter field on this ${holder}`);
    if (!validIdentityName(n.NodeName)) fail("Node identity has an invalid name. Only alphanumeric characters, '-' and '_' are allowed");
  }
  const services = new Map<string, AclServiceIdentity>();
  for (const s of [...(x.ServiceIdentities ?? [])].sort((a, b) => (a.ServiceName < b.ServiceName ? -1 : a.ServiceName > b.ServiceName ? 1 : 0))) {
    const prev = services.get(s.ServiceName);
    // Prefer the wider scope: no datacenters means all of them.
    const dcs = !prev ? s.Datacenters : !prev.Datacenters?.length || !s.Datacenters?.length ? undefined : [...new Set([...prev.Datacenters, ...s.Datacenters])];
    services.set(s.ServiceName, { ServiceName: s.ServiceName, ...(dcs && dcs.length ? { Datacenters: dcs } : {}) });
  }
  const nodes = new Map<string, AclNodeIdentity>();
  for (const n of x.NodeIdentities ?? []) nodes.set(`${n.NodeName}\0${n.Datacenter}`, { NodeName: n.NodeName, Datacenter: n.Datacenter });
  const sortedNodes = [...nodes.values()].sort((a, b) => (a.NodeName === b.NodeName ? (a.Datacenter < b.Datacenter ? -1 : 1) : a.NodeName < b.NodeName ? -1 : 1));
  return {
    ...(services.size ? { ServiceIdentities: [...services.values()] } : {}),
    ...(sortedNodes.length ? { NodeIdentities: sortedNodes } : {}),
  };
}

/** The expiration of a new token: from ExpirationTTL or ExpirationTime, within Consul's bounds. */
function expiration(input: TokenInput, createdAt: number): string | undefined {
  let at: number | undefined;
  if (input.ExpirationTTLMs !== undefined && input.ExpirationTTLMs !== 0) {
    if (input.ExpirationTTLMs < 0) fail(`Token Expiration TTL '-${goDuration(-input.ExpirationTTLMs)}' should be > 0`);
    if (input.ExpirationTime) fail("Token Expiration TTL and Expiration Time cannot both be set");
    at = createdAt + input.ExpirationTTLMs;
  } else if (input.ExpirationTime) {
    at = Date.parse(input.ExpirationTime);
    if (Number.isNaN(at)) fail(`ExpirationTime ${JSON.stringify(input.ExpirationTime)} is not an RFC 3339 time`);
  }
  if (at === undefined) return undefined;
  if (at < createdAt) fail("ExpirationTime cannot be before CreateTime");
  const inMs = at - createdAt;
  if (inMs > TOKEN_MAX_EXPIRATION_MS) fail(`ExpirationTime cannot be more than 24h0m0s in the future (was ${goDuration(inMs)})`);
  if (inMs < TOKEN_MIN_EXPIRATION_MS) fail(`ExpirationTime cannot be less than 1m0s in the future (was ${goDuration(inMs)})`);
  return rfc3339(at);
}

/** Go's time.Duration String for whole milliseconds and more (`1h0m0s`, `59.5s`, `0s`). */
function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ""}${h || m ? `${m}m` : ""}${s}s`;
}

/** The fields every token write shares: links, identities, Rules/Type refused, Hash. */
function finish(base: Omit<AclTokenWrite, "Hash" | "Policies" | "Roles" | "ServiceIdentities" | "NodeIdentities">, input: TokenInput, ctx: AclRequestContext): AclTokenWrite {
  const l = ctx.lookup;
  const policies = resolveLinks(input.Policies, "policy", (id) => l.policyById(id), (n) => l.policyByName(n));
  const roles = resolveLinks(input.Roles, "role", (id) => l.roleById(id), (n) => l.roleByName(n));
  const ids = identities(input, "token", base.Local);
  if (input.Rules) fail("Rules cannot be specified for this token");
  if (input.Type) fail("Type cannot be specified for this token");
  const token = { ...base, ...(policies.length ? { Policies: policies } : {}), ...(roles.length ? { Roles: roles } : {}), ...ids };
  return { ...token, Hash: tokenHash(token) };
}

/** tokenSetInternal for a new token (PUT /v1/acl/token). */
export function buildTokenCreate(input: TokenInput, ctx: AclRequestContext): AclTokenWrite {
  const accessor = input.AccessorID ? givenTokenUuid(input.AccessorID, "AccessorID", ctx) : freshTokenUuid(ctx);
  const secret = input.SecretID ? givenTokenUuid(input.SecretID, "SecretID", ctx) : freshTokenUuid(ctx);
  if (secret.toLowerCase() === accessor.toLowerCase()) fail("Invalid Token: SecretID is already in use");
  if (input.AuthMethod && !ctx.lookup.authMethod(input.AuthMethod)) fail(`No such auth method with Name: ${input.AuthMethod}`);
  const createdAt = ctx.now();
  const expires = expiration(input, createdAt);
  return finish({
    AccessorID: accessor, SecretID: secret, Description: input.Description ?? "", Local: input.Local ?? false,
    ...(input.AuthMethod ? { AuthMethod: input.AuthMethod } : {}), ...(expires ? { ExpirationTime: expires } : {}), CreateTime: rfc3339(createdAt),
  }, input, ctx);
}

/** tokenSetInternal for an existing token (PUT /v1/acl/token/:accessor): what may change, and what may not. */
export function buildTokenUpdate(input: TokenInput, ctx: AclRequestContext): AclTokenWrite {
  const accessor = input.AccessorID ?? "";
  if (!isUuid(accessor)) fail("AccessorID is not a valid UUID");
  const existing = ctx.lookup.tokenByAccessor(accessor);
  if (!existing || (existing.ExpirationTime !== undefined && Date.parse(existing.ExpirationTime) <= ctx.now())) fail(`Cannot find token "${accessor}"`);
  const e = existing!;
  if (input.SecretID && input.SecretID !== e.SecretID) fail("Changing a tokens SecretID is not permitted");
  if ((input.Local ?? false) !== e.Local) fail(`cannot toggle local mode of ${accessor}`);
  if (input.AuthMethod && input.AuthMethod !== (e.AuthMethod ?? "")) fail(`Cannot change AuthMethod of ${accessor}`);
  if (input.ExpirationTTLMs) fail(`Cannot change expiration time of ${accessor}`);
  if (input.ExpirationTime && (e.ExpirationTime === undefined || Date.parse(input.ExpirationTime) !== Date.parse(e.ExpirationTime))) {
    fail(`Cannot change expiration time of ${accessor}`);
  }
  return finish({
    AccessorID: e.AccessorID, SecretID: e.SecretID, Description: input.Description ?? "", Local: e.Local,
    ...(e.AuthMethod ? { AuthMethod: e.AuthMethod } : {}), ...(e.ExpirationTime ? { ExpirationTime: e.ExpirationTime } : {}), CreateTime: e.CreateTime,
  }, input, ctx);
}

/**
 * ACL.BootstrapTokens' token: fresh accessor and secret, "Bootstrap Token (Global Management)", linked to
 * the global-management policy (which the primary's leader makes sure exists).
 */
export function buildBootstrapToken(ctx: Pick<AclRequestContext, "newUuid" | "now">): AclTokenWrite {
  const fresh = () => {
    for (;;) {
      const id = ctx.newUuid();
      if (!reserved(id)) return id;
    }
  };
  const base = {
    AccessorID: fresh(), SecretID: fresh(), Description: "Bootstrap Token (Global Management)", Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "" }],
    Local: false, CreateTime: rfc3339(ctx.now()),
  };
  return { ...base, Hash: tokenHash(base) };
}

/** ACL.TokenClone: a new token with the source's links, identities, locality and expiration time. */
export function buildTokenClone(source: AclTokenRecord, description: string | undefined, ctx: AclRequestContext): AclTokenWrite {
  if (source.AuthMethod) fail("Cannot clone a token created from an auth method");
  if (source.Rules) fail("Cannot clone a legacy ACL with this endpoint");
  const fresh = buildTokenCreate({
    Description: description ?? source.Description, Policies: source.Policies, Roles: source.Roles, ServiceIdentities: source.ServiceIdentities,
    NodeIdentities: source.NodeIdentities, Local: source.Local,
  }, ctx);
  return source.ExpirationTime ? { ...fresh, ExpirationTime: source.ExpirationTime } : fresh;
}

/** Consul's validPolicyName and validRoleName. */
const POLICY_NAME = /^[A-Za-z0-9\-_]{1,128}$/;
const ROLE_NAME = /^[A-Za-z0-9\-_]{1,256}$/;

/** A policy as a request carries it. */
export interface PolicyInput {
  readonly ID?: string;
  readonly Name?: string;
  readonly Description?: string;
  readonly Rules?: string;
  readonly Datacenters?: readonly string[];
}

/** policySetInternal: create (no ID) or update (ID of an existing policy). */
export function buildPolicyWrite(input: PolicyInput, ctx: AclRequestContext): AclPolicyWrite {
  const name = input.Name ?? "";
  if (name === "") fail("Invalid Policy: no Name is set");
  if (!POLICY_NAME.test(name)) fail("Invalid Policy: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
  const l = ctx.lookup;
  let id: string;
  if (!input.ID) {
    if (l.policyByName(name)) fail(`Invalid Policy: A Policy with Name "${name}" already exists`);
    do id = ctx.newUuid(); while (reserved(id) || l.policyById(id));
  } else {
    if (!isUuid(input.ID)) fail("Policy ID invalid UUID");
    const existing = l.policyById(input.ID);
    if (!existing) fail(`cannot find policy ${input.ID}`);
    const other = l.policyByName(name);
    if (other && other.ID.toLowerCase() !== input.ID.toLowerCase()) fail(`Invalid Policy: A policy with name "${name}" already exists`);
    if (input.ID.toLowerCase() === GLOBAL_MANAGEMENT_POLICY_ID) {
      if (input.Datacenters && input.Datacenters.length > 0) fail("Changing the Datacenters of the builtin global-management policy is not permitted");
      if ((input.Rules ?? "") !== existing!.Rules) fail("Changing the Rules for the builtin global-management policy is not permitted");
    }
    id = existing!.ID;
  }
  try {
    parseRules(input.Rules ?? "");
  } catch (err) {
    if (err instanceof RulesError) fail(err.message);
    throw err;
  }
  const policy = { ID: id, Name: name, Description: input.Description ?? "", Rules: input.Rules ?? "", ...(input.Datacenters?.length ? { Datacenters: [...input.Datacenters] } : {}) };
  return { ...policy, Hash: policyHash(policy) };
}

/** A role as a request carries it. */
export interface RoleInput {
  readonly ID?: string;
  readonly Name?: string;
  readonly Description?: string;
  readonly Policies?: readonly LinkInput[];
  readonly ServiceIdentities?: readonly AclServiceIdentity[];
  readonly NodeIdentities?: readonly AclNodeIdentity[];
}

/** roleSetInternal: create (no ID) or update (ID of an existing role). */
export function buildRoleWrite(input: RoleInput, ctx: AclRequestContext): AclRoleWrite {
  const name = input.Name ?? "";
  if (name === "") fail("Invalid Role: no Name is set");
  if (!ROLE_NAME.test(name)) fail("Invalid Role: invalid Name. Only alphanumeric characters, '-' and '_' are allowed");
  const l = ctx.lookup;
  let id: string;
  if (!input.ID) {
    if (l.roleByName(name)) fail(`Invalid Role: A Role with Name "${name}" already exists`);
    do id = ctx.newUuid(); while (reserved(id) || l.roleById(id));
  } else {
    if (!isUuid(input.ID)) fail("Role ID invalid UUID");
    const existing = l.roleById(input.ID);
    if (!existing) fail(`cannot find role ${input.ID}`);
    const other = l.roleByName(name);
    if (other && other.ID.toLowerCase() !== input.ID.toLowerCase()) fail(`Invalid Role: A role with name "${name}" already exists`);
    id = existing!.ID;
  }
  const policies = resolveLinks(input.Policies, "policy", (x) => l.policyById(x), (n) => l.policyByName(n));
  const role = { ID: id, Name: name, Description: input.Description ?? "", ...(policies.length ? { Policies: policies } : {}), ...identities(input, "role", false) };
  return { ...role, Hash: roleHash(role) };
}
