/**
 * Consul 1.8's `consul acl` pretty output (command/acl/token/formatter.go, command/acl/policy/formatter.go),
 * and `-format=json` (Go's MarshalIndent with 4 spaces). Times print as Go's time.Time String does.
 */
import { fromBase64, stringifyExact } from "../../../lib/index.ts";

type Link = { ID: string; Name: string };
type Token = {
  AccessorID: string; SecretID?: string; Description: string; Local: boolean; AuthMethod?: string; CreateTime: string; ExpirationTime?: string;
  Hash?: string; CreateIndex?: number; ModifyIndex?: number; Policies?: Link[]; Roles?: Link[]; ServiceIdentities?: { ServiceName: string; Datacenters?: string[] }[];
  NodeIdentities?: { NodeName: string; Datacenter: string }[]; Rules?: string; Legacy?: boolean;
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

function links(t: Token): string {
  let out = "";
  if (t.Policies?.length) out += `Policies:\n${t.Policies.map((p) => `   ${p.ID} - ${p.Name}\n`).join("")}`;
  if (t.Roles?.length) out += `Roles:\n${t.Roles.map((r) => `   ${r.ID} - ${r.Name}\n`).join("")}`;
  if (t.ServiceIdentities?.length) {
    out += `Service Identities:\n${t.ServiceIdentities.map((s) => `   ${s.ServiceName} (Datacenters: ${s.Datacenters?.length ? s.Datacenters.join(", ") : "all"})\n`).join("")}`;
  }
  if (t.NodeIdentities?.length) out += `Node Identities:\n${t.NodeIdentities.map((n) => `   ${n.NodeName} (Datacenter: ${n.Datacenter})\n`).join("")}`;
  return out;
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

/** `-format=json`: Go's json.MarshalIndent(x, "", "    "). */
export const jsonOut = (x: unknown) => `${stringifyExact(x, 4)}\n`;
