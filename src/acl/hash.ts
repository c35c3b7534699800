/**
 * The `Hash` of tokens, policies and roles (Consul 1.8 `agent/structs/acl.go` SetHash): BLAKE2b-256 over
 * the object's mutable content fields in Consul's order, base64 on the wire. Replication compares it to
 * tell changed objects from unchanged ones; IDs, times and Raft indexes are not part of it.
 */
import { blake2b } from "@noble/hashes/blake2.js";
import { toBase64 } from "../lib/index.ts";
import type { AclNodeIdentity, AclServiceIdentity } from "../model/index.ts";

const enc = new TextEncoder();

function digest(parts: readonly string[]): string {
  const h = blake2b.create({ dkLen: 32 });
  for (const p of parts) h.update(enc.encode(p));
  return toBase64(h.digest());
}

const identities = (s: readonly AclServiceIdentity[] = [], n: readonly AclNodeIdentity[] = []) => [
  ...s.flatMap((x) => [x.ServiceName, ...(x.Datacenters ?? [])]),
  ...n.flatMap((x) => [x.NodeName, x.Datacenter]),
];

export function tokenHash(t: {
  readonly Description: string; readonly Type?: string; readonly Rules?: string; readonly Local: boolean;
  readonly Policies?: readonly { readonly ID: string }[]; readonly Roles?: readonly { readonly ID: string }[];
  readonly ServiceIdentities?: readonly AclServiceIdentity[]; readonly NodeIdentities?: readonly AclNodeIdentity[];
}): string {
  return digest([
    t.Description, t.Type ?? "", t.Rules ?? "", t.Local ? "local" : "global",
    ...(t.Policies ?? []).map((l) => l.ID), ...(t.Roles ?? []).map((l) => l.ID), ...identities(t.ServiceIdentities, t.NodeIdentities),
  ]);
}

export function policyHash(p: { readonly Name: string; readonly Description: string; readonly Rules: string; readonly Datacenters?: readonly string[] }): string {
  // Consul also hashes Syntax, which is "" for every policy made through the current API.
  return digest([p.Name, p.Description, p.Rules, "", ...(p.Datacenters ?? [])]);
}

export function roleHash(r: {
  readonly Name: string; readonly Description: string; readonly Policies?: readonly { readonly ID: string }[];
  readonly ServiceIdentities?: readonly AclServiceIdentity[]; readonly NodeIdentities?: readonly AclNodeIdentity[];
}): string {
  return digest([r.Name, r.Description, ...(r.Policies ?? []).map((l) => l.ID), ...identities(r.ServiceIdentities, r.NodeIdentities)]);
}
