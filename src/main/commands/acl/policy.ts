/**
 * `causeway acl policy create|read|list|delete` (update is in policy_update.ts): Consul 1.8's
 * command/acl/policy over /v1/acl/policy*, with its flags, messages and output (format.ts). `-rules` takes
 * the text, `@file` or `-` (stdin); -id may be a unique policy ID prefix.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import type { CliDeps } from "../support/index.ts";
import { formatPolicyList } from "./format.ts";
import { idFromFlags } from "./links.ts";
import { policyUpdate } from "./policy_update.ts";
import { aclCommand, aclListCommand, CommandFailure, FORMAT, formatOf, META, orFail, printPolicy, RULES, rulesOf, VALID_DATACENTER } from "./shared.ts";

function policyCreate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "name", kind: "string", arg: "<name>", usage: "The new policy's name. This flag is required." },
    { name: "description", kind: "string", arg: "<text>", usage: "A description of the policy" },
    VALID_DATACENTER, RULES, META, FORMAT,
  ];
  return aclCommand("create", "Create an ACL policy", flags, "Usage: causeway acl policy create -name NAME [options]\n\n  Create a new policy.", deps, async (values, client, io) => {
    const format = formatOf(values);
    const name = values.get("name") as string | undefined;
    if (!name) throw new CommandFailure("Missing required '-name' flag");
    const body = { Name: name, Description: values.get("description") ?? "", Rules: await rulesOf(values, deps), Datacenters: values.get("valid-datacenter") ?? [] };
    const policy = await orFail("Failed to create new policy", client.request("PUT", "/v1/acl/policy", { body: JSON.stringify(body) }));
    printPolicy(io, format, policy.json(), values.get("meta") === true);
    return 0;
  });
}

const ID_OR_NAME: FlagSpec[] = [
  { name: "id", kind: "string", arg: "<id>", usage: "The ID of the policy. It may be specified as a unique ID prefix but will error if the prefix matches multiple policy IDs" },
  { name: "name", kind: "string", arg: "<name>", usage: "The name of the policy." },
];

function policyRead(deps: CliDeps): Command {
  return aclCommand("read", "Read an ACL policy", [...ID_OR_NAME, META, FORMAT], "Usage: causeway acl policy read [options] POLICY\n\n  This command will retrieve and print out the details of a single policy.", deps, async (values, client, io) => {
    const format = formatOf(values);
    const id = await idFromFlags(values, client, "policy");
    if (!id) throw new CommandFailure("Must specify either the -id or -name parameters");
    const policy = await orFail(`Error reading policy ${JSON.stringify(id)}`, client.request("GET", `/v1/acl/policy/${encodeURIComponent(id)}`));
    printPolicy(io, format, policy.json(), values.get("meta") === true);
    return 0;
  });
}

const policyList = (deps: CliDeps) =>
  aclListCommand("Lists ACL policies", "Usage: causeway acl policy list [options]\n\n  Lists all the ACL policies.", "/v1/acl/policies", formatPolicyList, "Failed to retrieve the policy list", deps);

function policyDelete(deps: CliDeps): Command {
  return aclCommand("delete", "Delete an ACL policy", ID_OR_NAME, "Usage: causeway acl policy delete [options] -id POLICY\n\n  Deletes an ACL policy by providing either the ID, a unique ID prefix, or the name.", deps, async (values, client, io) => {
    const id = await idFromFlags(values, client, "policy");
    if (!id) throw new CommandFailure("Must specify either the -id or -name parameters");
    await orFail(`Error deleting policy ${JSON.stringify(id)}`, client.request("DELETE", `/v1/acl/policy/${encodeURIComponent(id)}`));
    io.out(`Policy ${JSON.stringify(id)} deleted successfully\n`);
    return 0;
  });
}

export const policySubcommands = (deps: CliDeps): Command[] => [policyCreate(deps), policyDelete(deps), policyList(deps), policyRead(deps), policyUpdate(deps)];
