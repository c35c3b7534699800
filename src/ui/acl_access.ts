/**
 * The ACL pages' pure rules: whether a token may write ACLs (its policies' rules evaluated with
 * src/acl's authorizer, global-management always writing), what an API refusal means for the
 * pages (ACLs off, token refused, permission denied), where a login may send the reader back to, and
 * the checks of the policy, role and token forms (a bad field is named, and nothing is written).
 */
import {
  GLOBAL_MANAGEMENT_POLICY_ID, isUuid, ParsedPolicyCache, parseRules, RulesError, tokenAuthorizer,
} from "../acl/index.ts";
import type { AclLink, AclNodeIdentity, AclPolicy, AclRole, AclServiceIdentity, AclToken, AclTokenRecord } from "../model/index.ts";
import { ApiError } from "./page.ts";

/**
 * A token as `/v1/acl/token/self`, `/v1/acl/token/:id` and (without SecretID) `/v1/acl/tokens` answer
 * it: the model's token, its SecretID, CreateTime and Hash optional (absent from list stubs), plus the
 * legacy flag of list stubs.
 */
export type TokenView = Omit<AclToken, "SecretID" | "CreateTime" | "Hash"> & {
  readonly SecretID?: string;
  readonly CreateTime?: string;
  readonly Hash?: string;
  readonly Legacy?: boolean;
};

/** A policy as the API answers it (`Datacenters` null when it applies everywhere; no Rules in list stubs). */
export interface PolicyView {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Rules?: string;
  readonly Datacenters?: readonly string[] | null;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export type RoleView = Omit<AclRole, "Hash">;

/**
 * Whether `self` may write ACLs in `dc`: a link to global-management is write; otherwise the rules of
 * its policies, its roles' policies and (for a legacy token) its own Rules, as the servers evaluate them.
 * `policy` and `role` find the linked objects (undefined: unreadable or gone, granting nothing). The
 * default policy never grants ACL access (allow-all excludes it), so "deny" ends the chain.
 */
export function mayWriteAcls(
  self: TokenView, policy: (id: string) => PolicyView | undefined, role: (id: string) => RoleView | undefined, dc: string,
): boolean {
  if ((self.Policies ?? []).some((l) => l.ID === GLOBAL_MANAGEMENT_POLICY_ID)) return true;
  const token = { ...self, SecretID: self.SecretID ?? "", Hash: "", CreateTime: self.CreateTime ?? "", ...(self.Rules ? { Type: "client" } : {}) } as AclTokenRecord;
  const objects = {
    policy: (id: string) => {
      const p = policy(id);
      return p && p.Rules !== undefined ? ({ ...p, Rules: p.Rules, Datacenters: p.Datacenters ?? [], Hash: "" } as AclPolicy) : undefined;
    },
    role: (id: string) => {
      const r = role(id);
      return r ? ({ ...r, Hash: "" } as AclRole) : undefined;
    },
  };
  const authorizer = tokenAuthorizer(token, objects, { datacenter: dc, defaultPolicy: "deny", cache: new ParsedPolicyCache() });
  return authorizer.check("acl", "write") === "allow";
}

/** How an ACL read or write failed, as the pages tell it. */
export type AclRefusal = "off" | "not-found" | "denied" | "other";

export function refusalOf(err: unknown): AclRefusal {
  const message = (err as Error)?.message ?? "";
  if (/ACL support disabled/i.test(message)) return "off";
  if (/ACL not found/i.test(message)) return "not-found";
  if ((err instanceof ApiError && err.status === 403) || /permission denied/i.test(message)) return "denied";
  return "other";
}

/** Where a login may lead: a path under `base` (no scheme, host or `//`), else the tokens list of `dc`. */
export function loginTarget(next: string | undefined, base: string, dc: string): string {
  const fallback = `${base}${encodeURIComponent(dc)}/acls/tokens`;
  if (!next || !next.startsWith(base) || next.includes("//") || next.includes("\\") || /[\r\n]/.test(next)) return fallback;
  return next;
}

/** A form's check: its value, or the field at fault and why. */
export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly field: string; readonly message: string };

/** A form as hono's parseBody({ all: true }) gives it. */
export type FormBody = Record<string, string | File | (string | File)[]>;

/** The values of `name` (a repeated field, a single one, or none), as strings. */
export function formList(form: FormBody, name: string): string[] {
  const v = form[name];
  const all = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return all.filter((x): x is string => typeof x === "string");
}

/** The first value of `name`, or "". */
export function formText(form: FormBody, name: string): string {
  return formList(form, name)[0] ?? "";
}

const POLICY_NAME = /^[A-Za-z0-9\-_]{1,128}$/;
const ROLE_NAME = /^[A-Za-z0-9\-_]{1,256}$/;
const DATACENTER = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export interface PolicyForm {
  readonly Name: string;
  readonly Description: string;
  readonly Rules: string;
  readonly Datacenters: readonly string[];
}

/** A policy form's values checked: a valid name, rules that parse (HCL or JSON), datacenter names. */
export function checkPolicyForm(form: FormBody): Checked<PolicyForm> {
  const value: PolicyForm = {
    Name: formText(form, "name").trim(), Description: formText(form, "description"), Rules: formText(form, "rules").replace(/\r\n?/g, "\n"),
    Datacenters: formList(form, "datacenters").map((d) => d.trim()).filter((d) => d !== ""),
  };
  if (!POLICY_NAME.test(value.Name)) return { ok: false, field: "Name", message: "Name: use 1 to 128 letters, digits, '-' or '_'." };
  try {
    parseRules(value.Rules);
  } catch (err) {
    if (err instanceof RulesError) return { ok: false, field: "Rules", message: `Rules: ${err.message}` };
    throw err;
  }
  const bad = value.Datacenters.find((d) => !DATACENTER.test(d));
  if (bad !== undefined) return { ok: false, field: "Datacenters", message: `Datacenters: ${JSON.stringify(bad)} is not a datacenter name.` };
  return { ok: true, value };
}

export interface RoleForm {
  readonly Name: string;
  readonly Description: string;
  readonly PolicyIDs: readonly string[];
}

/** A role form's values checked: a valid name and policy IDs that are UUIDs. */
export function checkRoleForm(form: FormBody): Checked<RoleForm> {
  const value: RoleForm = { Name: formText(form, "name").trim(), Description: formText(form, "description"), PolicyIDs: formList(form, "policies") };
  if (!ROLE_NAME.test(value.Name)) return { ok: false, field: "Name", message: "Name: use 1 to 256 letters, digits, '-' or '_'." };
  if (value.PolicyIDs.some((id) => !isUuid(id))) return { ok: false, field: "Policies", message: "Policies: every policy must be given by its ID." };
  return { ok: true, value };
}

export interface TokenForm {
  readonly Description: string;
  readonly PolicyIDs: readonly string[];
  readonly RoleIDs: readonly string[];
  readonly Local: boolean;
}

/** A token form's values checked: policy and role IDs that are UUIDs; `local` is "on" or absent. */
export function checkTokenForm(form: FormBody): Checked<TokenForm> {
  const local = formText(form, "local");
  const value: TokenForm = { Description: formText(form, "description"), PolicyIDs: formList(form, "policies"), RoleIDs: formList(form, "roles"), Local: local === "on" };
  if (value.PolicyIDs.some((id) => !isUuid(id))) return { ok: false, field: "Policies", message: "Policies: every policy must be given by its ID." };
  if (value.RoleIDs.some((id) => !isUuid(id))) return { ok: false, field: "Roles", message: "Roles: every role must be given by its ID." };
  if (local !== "" && local !== "on") return { ok: false, field: "Scope", message: "Scope: local must be on or absent." };
  return { ok: true, value };
}

/** A delete form's confirmation: the "confirm" box must be ticked. */
export function checkConfirmed(form: FormBody): Checked<true> {
  return formText(form, "confirm") === "yes" ? { ok: true, value: true } : { ok: false, field: "Confirm", message: "Confirm: tick the box to confirm the deletion." };
}

/** "local" or "global": where a token is valid. */
export const scopeOf = (t: { readonly Local: boolean }) => (t.Local ? "local" : "global");

/** The first 8 characters of an ID, for titles ("Token 93a856df"). */
export const shortId = (id: string) => id.slice(0, 8);
