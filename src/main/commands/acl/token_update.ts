/**
 * `causeway acl token update` and `causeway acl token clone`: Consul 1.8's command/acl/token/update and
 * clone, over GET/PUT /v1/acl/token/:id and PUT /v1/acl/token/:id/clone. -id may be a unique accessor
 * prefix. Update reads the token, changes what the flags say and PUTs the whole token back.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import type { CliDeps } from "../support/index.ts";
import {
  linkFlags, linksFrom, mergeLinks, mergeNodeIdentities, mergeServiceIdentities, nodeIdentities, requiredId, serviceIdentities,
  type Link, type NodeIdentity, type ServiceIdentity,
} from "./links.ts";
import { aclCommand, CommandFailure, FORMAT, formatOf, META, orFail, printToken } from "./shared.ts";

type Token = {
  Description: string; Rules?: string; Policies?: Link[]; Roles?: Link[]; ServiceIdentities?: ServiceIdentity[]; NodeIdentities?: NodeIdentity[];
};

const ID: FlagSpec = {
  name: "id", kind: "string", arg: "<accessor>",
  usage: "The Accessor ID of the token to update. It may be specified as a unique ID prefix but will error if the prefix matches multiple token Accessor IDs",
};

const merge = (what: string, usage: string): FlagSpec => ({ name: `merge-${what}`, kind: "bool", usage });

/** Without the -merge-* flags each kind of link is replaced by what the flags give (none clears it). */
export function tokenUpdate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    ID,
    { name: "description", kind: "string", arg: "<text>", usage: "A description of the token" },
    ...linkFlags("token", ["policy", "role"]),
    merge("policies", "Merge the new policies with the existing policies"),
    merge("roles", "Merge the new roles with the existing roles"),
    merge("service-identities", "Merge the new service identities with the existing service identities"),
    merge("node-identities", "Merge the new node identities with the existing node identities"),
    {
      name: "upgrade-legacy", kind: "bool",
      usage: "Add new polices to a legacy token replacing all existing rules. This will cause the legacy token to behave exactly like a new token but keep the same Secret.",
    },
    META, FORMAT,
  ];
  const usage = `Usage: causeway acl token update [options]

  This command will update a token. Some parts such as marking the token local
  cannot be changed.

  Update a token description and take the policies from the existing token:

      $ causeway acl token update -id abcd -description "replication" -merge-policies`;
  return aclCommand("update", "Update an ACL token", flags, usage, deps, async (values, client, io) => {
    const format = formatOf(values);
    const id = await requiredId(values, client, "token", "Cannot update a token without specifying the -id parameter");
    const path = `/v1/acl/token/${encodeURIComponent(id)}`;
    const t = (await orFail("Error when retrieving current token", client.request("GET", path))).json() as Token;
    if (values.get("upgrade-legacy") === true) {
      if (!t.Rules) throw new CommandFailure("Can't use -upgrade-legacy on a non-legacy token");
      delete t.Rules;
    }
    // An empty -description keeps the current one, as in Consul.
    const description = values.get("description") as string | undefined;
    if (description) t.Description = description;
    const services = serviceIdentities(values);
    const nodes = nodeIdentities(values);
    const merging = (what: string) => values.get(`merge-${what}`) === true;
    const policies = await linksFrom(values, client, "policy");
    t.Policies = merging("policies") ? mergeLinks(t.Policies, policies) : policies;
    // Consul 1.8 merges a -role-id as a link by Name (a bug); this links it by ID.
    const roles = await linksFrom(values, client, "role");
    t.Roles = merging("roles") ? mergeLinks(t.Roles, roles) : roles;
    t.ServiceIdentities = merging("service-identities") ? mergeServiceIdentities(t.ServiceIdentities, services) : services;
    t.NodeIdentities = merging("node-identities") ? mergeNodeIdentities(t.NodeIdentities, nodes) : nodes;
    const updated = await orFail(`Failed to update token ${id}`, client.request("PUT", path, { body: JSON.stringify(t) }));
    printToken(io, format, updated.json(), values.get("meta") === true);
    return 0;
  });
}

/** A new token with the source's links and a new accessor and secret; -description replaces the source's. */
export function tokenClone(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { ...ID, usage: ID.usage.replace("to update", "to clone") },
    { name: "description", kind: "string", arg: "<text>", usage: "A description of the new cloned token" },
    FORMAT,
  ];
  const usage = `Usage: causeway acl token clone [options]

  This command will clone a token. When cloning an alternate description may be given
  for use with the new token.

      $ causeway acl token clone -id abcd -description "replication"`;
  return aclCommand("clone", "Clone an ACL token", flags, usage, deps, async (values, client, io) => {
    const format = formatOf(values);
    // Consul 1.8's wording, "update" included.
    const id = await requiredId(values, client, "token", "Cannot update a token without specifying the -id parameter");
    const body = JSON.stringify({ Description: values.get("description") ?? "" });
    const clone = await orFail("Error cloning token", client.request("PUT", `/v1/acl/token/${encodeURIComponent(id)}/clone`, { body }));
    printToken(io, format, clone.json(), false);
    return 0;
  });
}
