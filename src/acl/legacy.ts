/**
 * Consul 1.8's legacy ACL tokens (`/v1/acl/create` and friends; agent/consul/acl_endpoint_legacy.go,
 * `structs.ACL`, `ACLToken.Convert`, `ACLToken.EmbeddedPolicy`). A legacy token is a token with a
 * legacy `Type` ("client" or "management") whose `ID` is its SecretID, `Name` its Description and
 * `Rules` rules in the legacy syntax (every rule a prefix rule). Pure: state through `lookup`,
 * randomness through `newUuid`.
 *
 * Differences from 1.8, on purpose: Consul stores a legacy token without an AccessorID and a leader
 * routine assigns one (and links global-management to a new "management" token) within a second;
 * here both happen at once, so the stored token is already in that upgraded form.
 */
import { GLOBAL_MANAGEMENT_POLICY_ID, type AclTokenRecord } from "../model/index.ts";
import type { AclTokenWrite } from "../state/index.ts";
import { RESERVED_ID_PREFIX, ROOT_TOKEN_NAMES } from "./builtin.ts";
import { tokenHash } from "./hash.ts";
import { AclRequestError, type AclRequestContext } from "./requests.ts";
import { parseRules, RulesError } from "./rules_parse.ts";

/** A refusal Consul answers 403 `Permission denied: <cause>` (acl.PermissionDeniedError). */
export class AclPermissionError extends Error {
  override readonly name = "AclPermissionError";
  constructor(readonly reason: string) {
    super(`Permission denied: ${reason}`);
  }
}

/** `structs.ACL` as the legacy API shows it (field order as Go writes it). */
export interface LegacyAcl {
  readonly ID: string;
  readonly Name: string;
  readonly Type: "client" | "management";
  readonly Rules: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** The body of `/v1/acl/create` and `/v1/acl/update` (Type defaults to "client"). */
export interface LegacyAclInput {
  readonly ID?: string;
  readonly Name?: string;
  readonly Type?: string;
  readonly Rules?: string;
}

/** Go's zero time.Time as JSON: the CreateTime of every legacy token (Convert sets none). */
export const LEGACY_CREATE_TIME = "0001-01-01T00:00:00Z";

/** ACLToken.Convert: the legacy view of a token, or undefined when it has no legacy Type (anonymous, new-API tokens). */
export function legacyAcl(t: AclTokenRecord): LegacyAcl | undefined {
  if (t.Type !== "client" && t.Type !== "management") return undefined;
  return { ID: t.SecretID, Name: t.Description, Type: t.Type, Rules: t.Rules ?? "", CreateIndex: t.CreateIndex, ModifyIndex: t.ModifyIndex };
}

/** ACLToken.UsesNonLegacyFields: such a token cannot be changed through the legacy API. */
export function usesNonLegacyFields(t: AclTokenRecord): boolean {
  return Boolean(
    t.Policies?.length || t.Roles?.length || t.ServiceIdentities?.length || t.NodeIdentities?.length || !t.Type || t.ExpirationTime || t.AuthMethod,
  );
}

const fail = (message: string): never => {
  throw new AclRequestError(message);
};

/**
 * ACL.Apply with op "set" after the acl:write check (aclApplyInternal, then ACLTokenSet in legacy mode):
 * create (no ID, or an unknown one; an ID is any string, not necessarily a UUID) or replace the token
 * whose secret is `input.ID`. Throws AclRequestError (`Invalid ACL Type`, `Cannot use legacy endpoint
 * to modify a non-legacy token`, `ACL rule compilation failed: ...`; Consul answers them 500) or
 * AclPermissionError (`Cannot modify root ACL`).
 */
export function buildLegacySet(input: LegacyAclInput, ctx: AclRequestContext): AclTokenWrite {
  const secret = input.ID || freshUuid(ctx);
  const type = input.Type ?? "client";
  if (type !== "client" && type !== "management") fail("Invalid ACL Type");
  const existing = ctx.lookup.tokenBySecret(secret);
  if (existing && usesNonLegacyFields(existing)) fail("Cannot use legacy endpoint to modify a non-legacy token");
  if (ROOT_TOKEN_NAMES.has(secret)) throw new AclPermissionError("Cannot modify root ACL");
  const rules = input.Rules ?? "";
  try {
    parseRules(rules, "legacy");
  } catch (err) {
    if (err instanceof RulesError) fail(`ACL rule compilation failed: ${err.message}`);
    throw err;
  }
  const token = {
    AccessorID: existing?.AccessorID ?? freshUuid(ctx), SecretID: secret, Description: input.Name ?? "",
    // The legacy upgrade gives a new management token the global-management policy.
    ...(type === "management" && !existing ? { Policies: [{ ID: GLOBAL_MANAGEMENT_POLICY_ID, Name: "" }] } : {}),
    ...(rules ? { Rules: rules } : {}), Type: type as "client" | "management", Local: false, CreateTime: LEGACY_CREATE_TIME,
  };
  return { ...token, Hash: tokenHash(token) };
}

/** ACL.Apply with op "delete": the anonymous token may not go (403). A missing secret deletes nothing. */
export function checkLegacyDelete(secret: string): void {
  if (secret === "anonymous") throw new AclPermissionError("Cannot delete anonymous token");
}

/** lib.GenerateUUID with checkTokenUUID: a fresh UUID no token uses, outside the reserved prefix. */
function freshUuid(ctx: AclRequestContext): string {
  for (;;) {
    const id = ctx.newUuid();
    if (!id.startsWith(RESERVED_ID_PREFIX) && !ctx.lookup.tokenByAccessor(id) && !ctx.lookup.tokenBySecret(id)) return id;
  }
}
