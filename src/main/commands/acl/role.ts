/**
 * `causeway acl role create|read|update|list|delete`: Consul 1.8's command/acl/role over /v1/acl/role*,
 * with its flags, messages and output (format.ts). -id may be a unique role ID prefix; a role the servers
 * do not have reads as 404 with no body, printed as "Role not found with ...".
 */
import type { Command, CommandIo } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import type { CliDeps } from "../support/index.ts";
import { formatRole, formatRoleList } from "./format.ts";
import {
  idFromFlags, idFromPartial, linkFlags, linksFrom, mergeLinks, mergeNodeIdentities, mergeServiceIdentities, nodeIdentities, requiredId, serviceIdentities,
  type Link, type NodeIdentity, type ServiceIdentity,
} from "./links.ts";
import { aclCommand, aclListCommand, CommandFailure, FORMAT, formatOf, META, noMergeFlag, orFail, printAs, updateUsage } from "./shared.ts";

type Role = { ID: string; Name: string; Description: string; Policies?: Link[]; ServiceIdentities?: ServiceIdentity[]; NodeIdentities?: NodeIdentity[] };
type Values = ReadonlyMap<string, unknown>;

const idFlag = (verb: string): FlagSpec => ({
  name: "id", kind: "string", arg: "<id>",
  usage: `The ID of the role to ${verb}. It may be specified as a unique ID prefix but will error if the prefix matches multiple role IDs`,
});
const DESCRIPTION: FlagSpec = { name: "description", kind: "string", arg: "<text>", usage: "A description of the role" };

/** Prints a role as -format and -meta say. */
const printRole = (io: CommandIo, format: "pretty" | "json", values: Values, role: unknown) =>
  printAs(io, format, role, (r) => formatRole(r as never, values.get("meta") === true));

/** GET `path` (a role by ID or by name); a failure is "<failure>: ...", a 404 is `notFound`. */
async function getRole(client: AgentHttpClient, path: string, failure: string, notFound: string): Promise<Role> {
  const res = await orFail(failure, client.request("GET", path, { accept: [404] }));
  if (res.status === 404) throw new CommandFailure(notFound);
  return res.json() as Role;
}

const rolePath = (id: string) => `/v1/acl/role/${encodeURIComponent(id)}`;

function roleCreate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "name", kind: "string", arg: "<name>", usage: "The new role's name. This flag is required." },
    DESCRIPTION, ...linkFlags("role", ["policy"]), META, FORMAT,
  ];
  return aclCommand("create", "Create an ACL role", flags, "Usage: causeway acl role create -name NAME [options]\n\n  Create a new role.", deps, async (values, client, io) => {
    const format = formatOf(values);
    const name = values.get("name") as string | undefined;
    // Consul 1.8's wording ("require"), kept for scripts matching it.
    if (!name) throw new CommandFailure("Missing require '-name' flag");
    if (!["policy-name", "policy-id", "service-identity", "node-identity"].some((f) => values.has(f))) {
      throw new CommandFailure("Cannot create a role without specifying -policy-name, -policy-id, -service-identity, or -node-identity at least once");
    }
    const role: Omit<Role, "ID"> = { Name: name, Description: (values.get("description") as string | undefined) ?? "" };
    const policies = await linksFrom(values, client, "policy");
    const services = serviceIdentities(values);
    const nodes = nodeIdentities(values);
    if (policies.length) role.Policies = policies;
    if (services.length) role.ServiceIdentities = services;
    if (nodes.length) role.NodeIdentities = nodes;
    const created = await orFail("Failed to create new role", client.request("PUT", "/v1/acl/role", { body: JSON.stringify(role) }));
    printRole(io, format, values, created.json());
    return 0;
  });
}

function roleRead(deps: CliDeps): Command {
  const flags: FlagSpec[] = [idFlag("read"), { name: "name", kind: "string", arg: "<name>", usage: "The name of the role to read." }, META, FORMAT];
  return aclCommand("read", "Read an ACL role", flags, "Usage: causeway acl role read [options] ROLE\n\n  This command will retrieve and print out the details of a single role.", deps, async (values, client, io) => {
    const format = formatOf(values);
    const partial = values.get("id") as string | undefined;
    const name = values.get("name") as string | undefined;
    let role: Role;
    if (partial) {
      const id = await orFail("Error determining role ID", idFromPartial(client, "role", partial));
      role = await getRole(client, rolePath(id), `Error reading role ${JSON.stringify(id)}`, `Role not found with ID ${JSON.stringify(id)}`);
    } else if (name) {
      role = await getRole(client, `/v1/acl/role/name/${encodeURIComponent(name)}`, `Error reading role ${JSON.stringify(name)}`, `Role not found with name ${JSON.stringify(name)}`);
    } else {
      throw new CommandFailure("Must specify either the -id or -name parameters");
    }
    printRole(io, format, values, role);
    return 0;
  });
}

/**
 * Merges the flags into the current role unless -no-merge: -name and -description replace when not
 * empty, links and identities are added (a service identity replaces the one of its name). With
 * -no-merge the role is exactly what the flags say.
 */
function roleUpdate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    idFlag("update"), { name: "name", kind: "string", arg: "<name>", usage: "The role name." }, DESCRIPTION, ...linkFlags("role", ["policy"]),
    noMergeFlag("role"), META, FORMAT,
  ];
  const usage = updateUsage("role", `  Rename the role:\n\n      $ causeway acl role update -id abcd -name "better-name"`);
  return aclCommand("update", "Update an ACL role", flags, usage, deps, async (values, client, io) => {
    const format = formatOf(values);
    const id = await requiredId(values, client, "role", "Cannot update a role without specifying the -id parameter");
    const services = serviceIdentities(values);
    const nodes = nodeIdentities(values);
    const current = await getRole(client, rolePath(id), "Error when retrieving current role", `Role not found with ID ${JSON.stringify(id)}`);
    const name = (values.get("name") as string | undefined) ?? "";
    const description = (values.get("description") as string | undefined) ?? "";
    const policies = await linksFrom(values, client, "policy");
    const role: Role = values.get("no-merge") === true
      ? { ID: id, Name: name, Description: description, Policies: policies, ServiceIdentities: services, NodeIdentities: nodes }
      : {
        ...current, Name: name || current.Name, Description: description || current.Description, Policies: mergeLinks(current.Policies, policies),
        ServiceIdentities: mergeServiceIdentities(current.ServiceIdentities, services), NodeIdentities: mergeNodeIdentities(current.NodeIdentities, nodes),
      };
    const updated = await orFail(`Error updating role ${JSON.stringify(id)}`, client.request("PUT", rolePath(id), { body: JSON.stringify(role) }));
    printRole(io, format, values, updated.json());
    return 0;
  });
}

const roleList = (deps: CliDeps) =>
  aclListCommand("Lists ACL roles", "Usage: causeway acl role list [options]\n\n  Lists all the ACL roles.", "/v1/acl/roles", formatRoleList, "Failed to retrieve the role list", deps);

function roleDelete(deps: CliDeps): Command {
  const flags: FlagSpec[] = [idFlag("delete"), { name: "name", kind: "string", arg: "<name>", usage: "The name of the role to delete." }];
  return aclCommand("delete", "Delete an ACL role", flags, "Usage: causeway acl role delete [options] -id ROLE\n\n  Deletes an ACL role by providing the ID, a unique ID prefix, or the name.", deps, async (values, client, io) => {
    const id = await idFromFlags(values, client, "role");
    if (!id) throw new CommandFailure("Must specify the -id or -name parameters");
    await orFail(`Error deleting role ${JSON.stringify(id)}`, client.request("DELETE", rolePath(id)));
    io.out(`Role ${JSON.stringify(id)} deleted successfully\n`);
    return 0;
  });
}

export const roleSubcommands = (deps: CliDeps): Command[] => [roleCreate(deps), roleDelete(deps), roleList(deps), roleRead(deps), roleUpdate(deps)];
