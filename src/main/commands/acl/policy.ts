/**
 * `causeway acl policy create|read|list|delete`: Consul 1.8's command/acl/policy over /v1/acl/policy*,
 * with its flags, messages and output (format.ts). `-rules` takes the text, `@file` or `-` (stdin).
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { loadDataArg, utf8, type CliDeps } from "../support/index.ts";
import { formatPolicy, formatPolicyList, jsonOut } from "./format.ts";
import { aclCommand, aclListCommand, FORMAT, formatOf, META } from "./shared.ts";

function policyCreate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "name", kind: "string", arg: "<name>", usage: "The new policy's name. This flag is required." },
    { name: "description", kind: "string", arg: "<text>", usage: "A description of the policy" },
    { name: "valid-datacenter", kind: "strings", arg: "<dc>", usage: "Datacenter that the policy should be valid within. This flag may be specified multiple times" },
    { name: "rules", kind: "string", arg: "<rules>", usage: "The policy rules. May be prefixed with '@' to indicate that the value is a file path to load the rules from. '-' may also be given to indicate that the rules are available on stdin" },
    META, FORMAT,
  ];
  return aclCommand("create", "Create an ACL policy", flags, "Usage: causeway acl policy create -name NAME [options]\n\n  Create a new policy.", deps, async (values, client, io) => {
    const format = formatOf(values, io);
    if (!format) return 1;
    const name = values.get("name") as string | undefined;
    if (!name) {
      io.err("Missing required '-name' flag\n");
      return 1;
    }
    let rules = "";
    const rulesArg = values.get("rules") as string | undefined;
    if (rulesArg) {
      try {
        rules = utf8(await loadDataArg(rulesArg, deps));
      } catch (err) {
        io.err(`Error loading rules: ${(err as Error).message}\n`);
        return 1;
      }
    }
    const body = { Name: name, Description: values.get("description") ?? "", Rules: rules, Datacenters: values.get("valid-datacenter") ?? [] };
    try {
      const p = (await client.request("PUT", "/v1/acl/policy", { body: JSON.stringify(body) })).json();
      io.out(format === "json" ? jsonOut(p) : `${formatPolicy(p as never, values.get("meta") === true)}\n`);
      return 0;
    } catch (err) {
      io.err(`Failed to create new policy: ${(err as Error).message}\n`);
      return 1;
    }
  });
}

const ID_OR_NAME: FlagSpec[] = [
  { name: "id", kind: "string", arg: "<id>", usage: "The ID of the policy." },
  { name: "name", kind: "string", arg: "<name>", usage: "The name of the policy." },
];

function policyRead(deps: CliDeps): Command {
  return aclCommand("read", "Read an ACL policy", [...ID_OR_NAME, META, FORMAT], "Usage: causeway acl policy read [options] POLICY\n\n  This command will retrieve and print out the details of a single policy.", deps, async (values, client, io) => {
    const format = formatOf(values, io);
    if (!format) return 1;
    const id = values.get("id") as string | undefined;
    const name = values.get("name") as string | undefined;
    if (!id && !name) {
      io.err("Must specify either the -id or -name parameters\n");
      return 1;
    }
    try {
      const path = id ? `/v1/acl/policy/${encodeURIComponent(id)}` : `/v1/acl/policy/name/${encodeURIComponent(name!)}`;
      const p = (await client.request("GET", path)).json();
      io.out(format === "json" ? jsonOut(p) : `${formatPolicy(p as never, values.get("meta") === true)}\n`);
      return 0;
    } catch (err) {
      io.err(`Error reading policy ${JSON.stringify(id ?? name)}: ${(err as Error).message}\n`);
      return 1;
    }
  });
}

const policyList = (deps: CliDeps) =>
  aclListCommand("Lists ACL policies", "Usage: causeway acl policy list [options]\n\n  Lists all the ACL policies.", "/v1/acl/policies", formatPolicyList, "Failed to retrieve the policy list", deps);

function policyDelete(deps: CliDeps): Command {
  return aclCommand("delete", "Delete an ACL policy", ID_OR_NAME, "Usage: causeway acl policy delete [options] -id POLICY\n\n  Deletes an ACL policy by providing either the ID or the name.", deps, async (values, client, io) => {
    let id = values.get("id") as string | undefined;
    const name = values.get("name") as string | undefined;
    if (!id && !name) {
      io.err("Must specify either the -id or -name parameters\n");
      return 1;
    }
    try {
      if (!id) id = ((await client.request("GET", `/v1/acl/policy/name/${encodeURIComponent(name!)}`)).json() as { ID: string }).ID;
      await client.request("DELETE", `/v1/acl/policy/${encodeURIComponent(id)}`);
      io.out(`Policy "${id}" deleted successfully\n`);
      return 0;
    } catch (err) {
      io.err(`Error deleting policy "${id ?? name}": ${(err as Error).message}\n`);
      return 1;
    }
  });
}

export const policySubcommands = (deps: CliDeps): Command[] => [policyCreate(deps), policyDelete(deps), policyList(deps), policyRead(deps)];
