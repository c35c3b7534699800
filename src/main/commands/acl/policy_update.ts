/**
 * `causeway acl policy update`: Consul 1.8's command/acl/policy/update over GET/PUT /v1/acl/policy/:id.
 * The policy is named by -id (a unique ID prefix) or else -name; with -id, -name renames it.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import type { CliDeps } from "../support/index.ts";
import { idFromFlags } from "./links.ts";
import { aclCommand, CommandFailure, FORMAT, formatOf, META, noMergeFlag, orFail, printPolicy, RULES, rulesOf, updateUsage, VALID_DATACENTER } from "./shared.ts";

type Policy = { ID: string; Name: string; Description: string; Datacenters: string[] | null; Rules: string };

/**
 * Without -no-merge the current policy is read and each of -name, -description, -rules given (even as
 * "") replaces its field, -valid-datacenter replaces the datacenters; with -no-merge the policy is
 * exactly what the flags say.
 */
export function policyUpdate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "id", kind: "string", arg: "<id>", usage: "The ID of the policy to update. It may be specified as a unique ID prefix but will error if the prefix matches multiple policy IDs" },
    { name: "name", kind: "string", arg: "<name>", usage: "The policies name." },
    { name: "description", kind: "string", arg: "<text>", usage: "A description of the policy" },
    VALID_DATACENTER,
    RULES, noMergeFlag("policy"), META, FORMAT,
  ];
  const usage = updateUsage("policy", `  Rename the policy:\n\n      $ causeway acl policy update -id abcd -name "better-name"`);
  return aclCommand("update", "Update an ACL policy", flags, usage, deps, async (values, client, io) => {
    const format = formatOf(values);
    const id = await idFromFlags(values, client, "policy");
    if (!id) throw new CommandFailure("Must specify either the -id or -name parameters");
    const rules = await rulesOf(values, deps);
    const path = `/v1/acl/policy/${encodeURIComponent(id)}`;
    const given = (flag: string) => values.get(flag) as string | undefined;
    let policy: Policy;
    if (values.get("no-merge") === true) {
      policy = { ID: id, Name: given("name") ?? "", Description: given("description") ?? "", Datacenters: (values.get("valid-datacenter") as string[] | undefined) ?? null, Rules: rules };
    } else {
      const current = (await orFail(`Error reading policy ${JSON.stringify(id)}`, client.request("GET", path))).json() as Policy;
      policy = {
        ID: id, Name: given("name") ?? current.Name, Description: given("description") ?? current.Description,
        Datacenters: (values.get("valid-datacenter") as string[] | undefined) ?? current.Datacenters, Rules: values.has("rules") ? rules : current.Rules,
      };
    }
    const updated = await orFail(`Error updating policy ${JSON.stringify(id)}`, client.request("PUT", path, { body: JSON.stringify(policy) }));
    printPolicy(io, format, updated.json(), values.get("meta") === true);
    return 0;
  });
}
