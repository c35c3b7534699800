/**
 * What the token, role and policy commands share about what a token or role links to (Consul 1.8's
 * command/acl/acl_helpers.go and the merge loops of token update and role update): the link flags, their
 * parsing (-service-identity, -node-identity), policy and role links with IDs resolved from prefixes,
 * ID lookups by prefix or by name over the list endpoints, and the merges of an update.
 */
import type { FlagSpec } from "../../flags.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import { CommandFailure, orFail } from "./shared.ts";

export type Link = { ID?: string; Name?: string };
export type ServiceIdentity = { ServiceName: string; Datacenters?: string[] };
export type NodeIdentity = { NodeName: string; Datacenter: string };
type Values = ReadonlyMap<string, unknown>;
type Kind = "token" | "policy" | "role" | "rule";

const strings = (values: Values, flag: string) => (values.get(flag) as string[] | undefined) ?? [];

/**
 * The flags naming what a `target` ("token" or "role") links to: -<kind>-id and -<kind>-name for each of
 * `kinds`, then -service-identity and -node-identity; all repeatable.
 */
export function linkFlags(target: string, kinds: readonly ("policy" | "role")[]): FlagSpec[] {
  return [
    ...kinds.flatMap((k): FlagSpec[] => [
      { name: `${k}-id`, kind: "strings", arg: "<id>", usage: `ID of a ${k} to use for this ${target}.` },
      { name: `${k}-name`, kind: "strings", arg: "<name>", usage: `Name of a ${k} to use for this ${target}.` },
    ]),
    {
      name: "service-identity", kind: "strings", arg: "<svc[:dc,...]>",
      usage: `Name of a service identity to use for this ${target}, as SERVICENAME or SERVICENAME:DATACENTER1,DATACENTER2,...`,
    },
    {
      name: "node-identity", kind: "strings", arg: "<node:dc>",
      usage: `Name of a node identity to use for this ${target}, as NODENAME:DATACENTER.`,
    },
  ];
}

/** -service-identity values (`svc` or `svc:dc1,dc2`); anything with more colons is a CommandFailure naming the flag. */
export function serviceIdentities(values: Values): ServiceIdentity[] {
  return strings(values, "service-identity").map((raw) => {
    const parts = raw.split(":");
    if (parts.length === 1) return { ServiceName: parts[0]! };
    if (parts.length === 2) return { ServiceName: parts[0]!, Datacenters: parts[1]!.split(",") };
    throw new CommandFailure(`Malformed -service-identity argument: ${JSON.stringify(raw)}`);
  });
}

/** -node-identity values (`node:dc`); anything else is a CommandFailure naming the flag. */
export function nodeIdentities(values: Values): NodeIdentity[] {
  return strings(values, "node-identity").map((raw) => {
    const parts = raw.split(":");
    if (parts.length !== 2) throw new CommandFailure(`Malformed -node-identity argument: ${JSON.stringify(raw)}`);
    return { NodeName: parts[0]!, Datacenter: parts[1]! };
  });
}

const LIST: Record<Kind, { path: string; id: string; builtin?: [string, string] }> = {
  token: { path: "/v1/acl/tokens", id: "AccessorID", builtin: ["anonymous", "00000000-0000-0000-0000-000000000002"] },
  policy: { path: "/v1/acl/policies", id: "ID", builtin: ["global-management", "00000000-0000-0000-0000-000000000001"] },
  role: { path: "/v1/acl/roles", id: "ID" },
  // Binding rules: Consul's messages say "rule" ("Partial rule ID is not unique"), its prefix "binding rule".
  rule: { path: "/v1/acl/binding-rules", id: "ID" },
};

/** How "Error determining <kind> ID" names each kind. */
const LABEL: Record<Kind, string> = { token: "token", policy: "policy", role: "role", rule: "binding rule" };

const list = async (client: AgentHttpClient, kind: Kind) => (await client.request("GET", LIST[kind].path)).json() as Record<string, string>[];

/**
 * Consul's acl.Get{Token,Policy,Role,BindingRule}IDFromPartial: "anonymous" (tokens) and
 * "global-management" (policies) name the built-in IDs, a 36-character value is taken as the whole ID,
 * anything else must be the prefix of exactly one listed ID. Rejects with "Partial <kind> ID is not
 * unique", "No such <kind> ID with prefix: <prefix>", or the list request's failure.
 */
export async function idFromPartial(client: AgentHttpClient, kind: Kind, partial: string): Promise<string> {
  const { id, builtin } = LIST[kind];
  if (builtin && partial === builtin[0]) return builtin[1];
  if (partial.length === 36) return partial;
  const matches = (await list(client, kind)).map((x) => x[id]!).filter((x) => x.startsWith(partial));
  if (matches.length > 1) throw new Error(`Partial ${kind} ID is not unique`);
  if (matches.length === 0) throw new Error(`No such ${kind} ID with prefix: ${partial}`);
  return matches[0]!;
}

/** Consul 1.8's acl.Get{Policy,Role}IDByName: the ID of the listed policy or role named exactly `name`. */
export async function idByName(client: AgentHttpClient, kind: "policy" | "role", name: string): Promise<string> {
  const found = (await list(client, kind)).find((x) => x.Name === name);
  if (!found) throw new Error(`No such ${kind} with name ${name}`);
  return found.ID!;
}

/**
 * The -<kind>-name then -<kind>-id links, in that order as Consul sends them; names are left for the
 * servers to resolve, IDs are resolved from prefixes (a CommandFailure "Error resolving <kind> ID ...").
 */
export async function linksFrom(values: Values, client: AgentHttpClient, kind: "policy" | "role"): Promise<Link[]> {
  const links: Link[] = strings(values, `${kind}-name`).map((Name) => ({ Name }));
  for (const partial of strings(values, `${kind}-id`)) links.push({ ID: await orFail(`Error resolving ${kind} ID ${partial}`, idFromPartial(client, kind, partial)) });
  return links;
}

/** `current` plus each of `added` not already there (a named link by Name, an ID link by ID). */
export function mergeLinks(current: readonly Link[] = [], added: readonly Link[]): Link[] {
  const out = [...current];
  for (const l of added) if (!out.some((c) => (l.ID ? c.ID === l.ID : c.Name === l.Name))) out.push(l);
  return out;
}

/** `current` with each added service identity replacing the one of its name, or appended. */
export function mergeServiceIdentities(current: readonly ServiceIdentity[] = [], added: readonly ServiceIdentity[]): ServiceIdentity[] {
  const out = [...current];
  for (const s of added) {
    const i = out.findIndex((c) => c.ServiceName === s.ServiceName);
    if (i >= 0) out[i] = s;
    else out.push(s);
  }
  return out;
}

/**
 * `current` plus each added node identity not already there (same name and datacenter). Consul 1.8's
 * role update compares datacenters with `!=` here, a bug; this is token update's (intended) rule.
 */
export function mergeNodeIdentities(current: readonly NodeIdentity[] = [], added: readonly NodeIdentity[]): NodeIdentity[] {
  const out = [...current];
  for (const n of added) if (!out.some((c) => c.NodeName === n.NodeName && c.Datacenter === n.Datacenter)) out.push(n);
  return out;
}

/**
 * The ID that -id (a unique prefix) or else -name (exactly) names, as Consul's read, update and delete
 * commands resolve it; undefined when neither flag is given. A failure is "Error determining <kind> ID: ...".
 */
export async function idFromFlags(values: Values, client: AgentHttpClient, kind: "policy" | "role"): Promise<string | undefined> {
  const partial = values.get("id") as string | undefined;
  const name = values.get("name") as string | undefined;
  if (!partial && !name) return undefined;
  return await orFail(`Error determining ${kind} ID`, partial ? idFromPartial(client, kind, partial) : idByName(client, kind, name!));
}

/**
 * The ID -id names (a unique prefix); without -id a CommandFailure `missing`. A failure is "Error
 * determining <kind> ID: ..." ("binding rule" for rules).
 */
export async function requiredId(values: Values, client: AgentHttpClient, kind: Kind, missing: string): Promise<string> {
  const partial = values.get("id") as string | undefined;
  if (!partial) throw new CommandFailure(missing);
  return await orFail(`Error determining ${LABEL[kind]} ID`, idFromPartial(client, kind, partial));
}
