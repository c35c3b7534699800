/**
 * Consul 1.8's `consul acl` pretty output (command/acl/token/formatter.go, command/acl/policy/formatter.go,
 * command/acl/role/formatter.go), and `-format=json` (Go's MarshalIndent with 4 spaces). Times print as Go's time.Time String does.
 */
import { fromBase64 } from "../../../lib/index.ts";

type Link = { ID: string; Name: string };
type Token = {
  AccessorID: string; SecretID?: string; Description: string; Local: boolean; AuthMethod?: string; CreateTime: string; ExpirationTime?: string;
  Hash?: string; CreateIndex?: number; ModifyIndex?: number; Policies?: Link[]; Roles?: Link[]; ServiceIdentities?: { ServiceName: string; Datacenters?: string[] }[];
  NodeIdentities?: { NodeName: string; Datacenter: string }[]; Rules?: string; Legacy?: boolean;
};
type Role = {
  ID: string; Name: string; Description: string; Hash?: string; CreateIndex?: number; ModifyIndex?: number; Policies?: Link[];
  ServiceIdentities?: Token["ServiceIdentities"]; NodeIdentities?: Token["NodeIdentities"];
};
type Policy = { ID: string; Name: string; Description: string; Datacenters: string[] | null; Hash?: string; CreateIndex?: number; ModifyIndex?: number; Rules?: string };

/** Go's time.Time String() of an RFC 3339 instant, in UTC: `2026-12-03 12:00:00.5 +0000 UTC`. */
export function goTime(rfc3339: string): string {
  const ms = Date.parse(rfc3339);
  if (Number.isNaN(ms)) return rfc3339;
  const iso = new Date(ms).toISOString();
  const frac = iso.slice(20, 23).replace(/0+$/, "");
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${frac ? `.${frac}` : ""} +0000 UTC`;
}

const hex = (b64 = "") => Array.from(fromBase64(b64), (x) => x.toString(16).padStart(2, "0")).join("");

/** The Policies, Roles, Service Identities and Node Identities sections, headers after `indent`, entries 3 further. */
function links(t: Pick<Token, "Policies" | "Roles" | "ServiceIdentities" | "NodeIdentities">, indent = ""): string {
  const section = <T>(title: string, items: T[] | undefined, line: (x: T) => string) =>
    items?.length ? `${indent}${title}:\n${items.map((x) => `${indent}   ${line(x)}\n`).join("")}` : "";
  return section("Policies", t.Policies, (p) => `${p.ID} - ${p.Name}`) +
    section("Roles", t.Roles, (r) => `${r.ID} - ${r.Name}`) +
    section("Service Identities", t.ServiceIdentities, (s) => `${s.ServiceName} (Datacenters: ${s.Datacenters?.length ? s.Datacenters.join(", ") : "all"})`) +
    section("Node Identities", t.NodeIdentities, (n) => `${n.NodeName} (Datacenter: ${n.Datacenter})`);
}

/** The -meta lines: Hash (hex), Create Index, Modify Index, labels padded to `width`, each after `indent`. */
function meta(x: { Hash?: string; CreateIndex?: number; ModifyIndex?: number }, width: number, indent = ""): string {
  const line = (label: string, value: unknown) => `${indent}${`${label}:`.padEnd(width)}${value}\n`;
  return line("Hash", hex(x.Hash)) + line("Create Index", x.CreateIndex) + line("Modify Index", x.ModifyIndex);
}

export function formatToken(t: Token, showMeta: boolean): string {
  let out = `AccessorID:       ${t.AccessorID}\nSecretID:         ${t.SecretID ?? ""}\nDescription:      ${t.Description}\nLocal:            ${t.Local}\n`;
  if (t.AuthMethod) out += `Auth Method:      ${t.AuthMethod}\n`;
  out += `Create Time:      ${goTime(t.CreateTime)}\n`;
  if (t.ExpirationTime) out += `Expiration Time:  ${goTime(t.ExpirationTime)}\n`;
  if (showMeta) out += meta(t, 18);
  out += links(t);
  if (t.Rules) out += `Rules:\n${t.Rules}\n`;
  return out;
}

export function formatTokenList(tokens: readonly Token[], showMeta: boolean): string {
  return tokens.map((t) => {
    let out = `AccessorID:       ${t.AccessorID}\nDescription:      ${t.Description}\nLocal:            ${t.Local}\n`;
    if (t.AuthMethod) out += `Auth Method:      ${t.AuthMethod}\n`;
    out += `Create Time:      ${goTime(t.CreateTime)}\n`;
    if (t.ExpirationTime) out += `Expiration Time:  ${goTime(t.ExpirationTime)}\n`;
    out += `Legacy:           ${t.Legacy ?? false}\n`;
    if (showMeta) out += meta(t, 18);
    return out + links(t);
  }).join("\n");
}

export function formatPolicy(p: Policy, showMeta: boolean): string {
  let out = `ID:           ${p.ID}\nName:         ${p.Name}\nDescription:  ${p.Description}\nDatacenters:  ${(p.Datacenters ?? []).join(", ")}\n`;
  if (showMeta) out += meta(p, 14);
  return `${out}Rules:\n${p.Rules ?? ""}`;
}

export function formatPolicyList(policies: readonly Policy[], showMeta: boolean): string {
  return policies.map((p) => {
    let out = `${p.Name}:\n   ID:           ${p.ID}\n   Description:  ${p.Description}\n   Datacenters:  ${(p.Datacenters ?? []).join(", ")}\n`;
    if (showMeta) out += meta(p, 14, "   ");
    return out;
  }).join("");
}

export function formatRole(r: Role, showMeta: boolean): string {
  let out = `ID:           ${r.ID}\nName:         ${r.Name}\nDescription:  ${r.Description}\n`;
  if (showMeta) out += meta(r, 14);
  return out + links(r);
}

/** Consul's role list: the entries back to back, each headed by the role's name. */
export function formatRoleList(roles: readonly Role[], showMeta: boolean): string {
  return roles.map((r) => {
    let out = `${r.Name}:\n   ID:           ${r.ID}\n   Description:  ${r.Description}\n`;
    if (showMeta) out += meta(r, 14, "   ");
    return out + links(r, "   ");
  }).join("");
}

/** A JSON string as Go's encoding/json writes it: JSON.stringify's escapes plus the HTML-safe `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`. */
const goString = (s: string) => JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * Go's json.MarshalIndent(value, "", <space spaces>) for plain data: an object's members in its key order
 * (a Go struct's fields; undefined ones left out), a Map's in sorted key order (a Go map), bigints exact,
 * strings HTML-safe. `indent` is where the value starts (for the recursion).
 */
export function marshalIndent(value: unknown, space: number, indent = ""): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return goString(value);
  if (typeof value === "bigint" || typeof value === "boolean") return String(value);
  if (typeof value === "number") return Number.isFinite(value) ? JSON.stringify(value) : "null";
  const inner = indent + " ".repeat(space);
  const block = (open: string, items: string[], close: string) => (items.length ? `${open}\n${items.map((x) => inner + x).join(",\n")}\n${indent}${close}` : `${open}${close}`);
  if (Array.isArray(value)) return block("[", value.map((v) => marshalIndent(v, space, inner)), "]");
  const entries = value instanceof Map
    ? [...(value as Map<string, unknown>).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    : Object.entries(value).filter(([, v]) => v !== undefined);
  return block("{", entries.map(([k, v]) => `${goString(k)}: ${marshalIndent(v, space, inner)}`), "}");
}

/** `-format=json`: Go's json.MarshalIndent(x, "", "    "), then the newline Consul's UI adds. */
export const jsonOut = (x: unknown) => `${marshalIndent(x, 4)}\n`;
