/**
 * `causeway acl binding-rule create|read|update|list|delete`: Consul 1.8's command/acl/bindingrule over
 * /v1/acl/binding-rule(s), with its flags, messages and output (auth_format.ts). -id may be a unique
 * rule ID prefix (acl.GetBindingRuleIDFromPartial); a rule the servers do not have reads as 404,
 * printed as "Binding rule not found with ID ...".
 */
import type { Command, CommandIo } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import type { CliDeps } from "../support/index.ts";
import { decodeBindingRule, formatBindingRule, formatBindingRuleList, type BindingRule } from "./auth_format.ts";
import { flagText } from "./auth_method_common.ts";
import { requiredId } from "./links.ts";
import { aclCommand, aclListCommand, CommandFailure, FORMAT, formatOf, noMergeFlag, orFail, printAs, updateUsage } from "./shared.ts";

type Values = ReadonlyMap<string, unknown>;

const META: FlagSpec = { name: "meta", kind: "bool", usage: "Indicates that binding rule metadata such as the raft indices should be shown for each entry." };
const DESCRIPTION: FlagSpec = { name: "description", kind: "string", arg: "<text>", usage: "A description of the binding rule." };
const SELECTOR: FlagSpec = {
  name: "selector", kind: "string", arg: "<expr>", usage: "Selector is an expression that matches against verified identity attributes returned from the auth method during login.",
};
const BIND_TYPE: FlagSpec = { name: "bind-type", kind: "string", arg: "<service|role>", usage: 'Type of binding to perform ("service" or "role"). Default "service".' };
const BIND_NAME: FlagSpec = { name: "bind-name", kind: "string", arg: "<name>", usage: "Name to bind on match. Can use ${var} interpolation. This flag is required." };
const idFlag = (verb: string): FlagSpec => ({
  name: "id", kind: "string", arg: "<id>",
  usage: `The ID of the binding rule to ${verb}. It may be specified as a unique ID prefix but will error if the prefix matches multiple binding rule IDs`,
});

/** -bind-type, "service" when not given (its Go default); "" only when given empty. */
const bindType = (values: Values) => (values.get("bind-type") as string | undefined) ?? "service";

const rulePath = (id: string) => `/v1/acl/binding-rule/${encodeURIComponent(id)}`;

/** Prints a rule as -format and -meta say. */
const printRule = (io: CommandIo, values: Values, rule: BindingRule) => printAs(io, formatOf(values), rule, (r) => formatBindingRule(r, values.get("meta") === true));

/** The rule with ID `id` (api BindingRuleRead: a 404 is no rule): a failure is "<failure>: ...", no rule "Binding rule not found with ID ...". */
async function readRule(client: AgentHttpClient, id: string, failure: string): Promise<BindingRule> {
  const res = await orFail(failure, client.request("GET", rulePath(id), { accept: [404] }));
  if (res.status === 404) throw new CommandFailure(`Binding rule not found with ID ${JSON.stringify(id)}`);
  return decodeBindingRule(res.json());
}

/** -method, -bind-type (explicitly empty) and -bind-name are required, each refused with the help. */
function ruleCreate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    META, { name: "method", kind: "string", arg: "<name>", usage: "The auth method's name for which this binding rule applies. This flag is required." },
    DESCRIPTION, SELECTOR, BIND_TYPE, BIND_NAME, FORMAT,
  ];
  const usage = `Usage: causeway acl binding-rule create [options]

  Create a new binding rule:

    $ causeway acl binding-rule create \\
          -method=minikube \\
          -bind-type=service \\
          -bind-name='k8s-\${serviceaccount.name}' \\
          -selector='serviceaccount.namespace==default and serviceaccount.name==web'`;
  return aclCommand("create", "Create an ACL binding rule", flags, usage, deps, async (values, client, io) => {
    const method = flagText(values, "method");
    if (method === "") throw new UsageError("Missing required '-method' flag");
    if (bindType(values) === "") throw new UsageError("Missing required '-bind-type' flag");
    if (flagText(values, "bind-name") === "") throw new UsageError("Missing required '-bind-name' flag");
    formatOf(values);
    const rule: BindingRule = {
      ID: "", Description: flagText(values, "description"), AuthMethod: method, Selector: flagText(values, "selector"), BindType: bindType(values),
      BindName: flagText(values, "bind-name"), CreateIndex: 0, ModifyIndex: 0,
    };
    const created = await orFail("Failed to create new binding rule", client.request("PUT", "/v1/acl/binding-rule", { body: JSON.stringify(rule) }));
    printRule(io, values, decodeBindingRule(created.json()));
    return 0;
  });
}

function ruleRead(deps: CliDeps): Command {
  const usage = `Usage: causeway acl binding-rule read -id ID [options]

  This command will retrieve and print out the details of a single binding
  rule.

  Read a binding rule:

    $ causeway acl binding-rule read -id fdabbcb5-9de5-4b1a-961f-77214ae88cba`;
  return aclCommand("read", "Read an ACL binding rule", [META, idFlag("read"), FORMAT], usage, deps, async (values, client, io) => {
    // Consul 1.8's wording, the period included.
    const id = await requiredId(values, client, "rule", "Must specify the -id parameter.");
    formatOf(values);
    printRule(io, values, await readRule(client, id, `Error reading binding rule ${JSON.stringify(id)}`));
    return 0;
  });
}

/**
 * Without -no-merge, -description, -bind-type and -bind-name replace their fields when not empty and
 * -selector when given (empty is valid). As in Consul 1.8, -bind-type defaults to "service" here too,
 * so an update without it turns a role rule into a service rule. With -no-merge the rule is what the
 * flags say (-bind-type and -bind-name required), its ID and AuthMethod kept.
 */
function ruleUpdate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    META, idFlag("update"), DESCRIPTION, SELECTOR, BIND_TYPE, BIND_NAME,
    noMergeFlag("binding rule"), FORMAT,
  ];
  const usage = updateUsage("binding rule", `  Update all editable fields of the binding rule:

    $ causeway acl binding-rule update \\
          -id=43cb72df-9c6f-4315-ac8a-01a9d98155ef \\
          -description="new description" \\
          -bind-type=role \\
          -bind-name='k8s-\${serviceaccount.name}' \\
          -selector='serviceaccount.namespace==default and serviceaccount.name==web'`, "-id ID [options]");
  return aclCommand("update", "Update an ACL binding rule", flags, usage, deps, async (values, client, io) => {
    const id = await requiredId(values, client, "rule", "Cannot update a binding rule without specifying the -id parameter");
    formatOf(values);
    const current = await readRule(client, id, "Error when retrieving current binding rule");
    const [description, name, type] = [flagText(values, "description"), flagText(values, "bind-name"), bindType(values)];
    let rule: BindingRule;
    if (values.get("no-merge") === true) {
      if (type === "") throw new UsageError("Missing required '-bind-type' flag");
      if (name === "") throw new UsageError("Missing required '-bind-name' flag");
      rule = { ...current, Description: description, BindType: type, BindName: name, Selector: flagText(values, "selector") };
    } else {
      rule = {
        ...current, Description: description || current.Description, BindType: type || current.BindType, BindName: name || current.BindName,
        Selector: values.has("selector") ? flagText(values, "selector") : current.Selector,
      };
    }
    const updated = await orFail(`Error updating binding rule ${JSON.stringify(id)}`, client.request("PUT", rulePath(id), { body: JSON.stringify(rule) }));
    printRule(io, values, decodeBindingRule(updated.json()));
    return 0;
  });
}

const ruleList = (deps: CliDeps) =>
  aclListCommand(
    "Lists ACL binding rules",
    `Usage: causeway acl binding-rule list [options]

  Lists all the ACL binding rules.

  Show all:

    $ causeway acl binding-rule list

  Show all for a specific auth method:

    $ causeway acl binding-rule list -method="my-method"`,
    "/v1/acl/binding-rules", formatBindingRuleList, "Failed to retrieve the binding rule list", deps, {
      shape: decodeBindingRule, meta: META,
      filter: { flag: { name: "method", kind: "string", arg: "<name>", usage: "Only show rules linked to the auth method with the given name." }, param: "authmethod" },
    },
  );

function ruleDelete(deps: CliDeps): Command {
  const usage = `Usage: causeway acl binding-rule delete -id ID [options]

  Deletes an ACL binding rule by providing the ID or a unique ID prefix.

  Delete by prefix:

    $ causeway acl binding-rule delete -id b6b85

  Delete by full ID:

    $ causeway acl binding-rule delete -id b6b856da-5193-4e78-845a-7d61ca8371ba`;
  return aclCommand("delete", "Delete an ACL binding rule", [idFlag("delete")], usage, deps, async (values, client, io) => {
    const id = await requiredId(values, client, "rule", "Must specify the -id parameter");
    await orFail(`Error deleting binding rule ${JSON.stringify(id)}`, client.request("DELETE", rulePath(id)));
    io.out(`Binding rule ${JSON.stringify(id)} deleted successfully\n`);
    return 0;
  });
}

export const bindingRuleSubcommands = (deps: CliDeps): Command[] => [ruleCreate(deps), ruleDelete(deps), ruleList(deps), ruleRead(deps), ruleUpdate(deps)];
