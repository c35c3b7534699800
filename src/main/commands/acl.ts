/**
 * `causeway acl`: Consul 1.8's `consul acl` (command/acl): `bootstrap`; `policy`, `role`, `auth-method`
 * and `binding-rule` with create, read, update, list and delete; `token` with those and clone;
 * `set-agent-token` and `translate-rules`. Every subcommand takes -token and CONSUL_HTTP_TOKEN as the
 * others do.
 */
import type { Command } from "../command.ts";
import { setAgentTokenCommand } from "./acl/agent_token.ts";
import { authMethodSubcommands } from "./acl/auth_method.ts";
import { bindingRuleSubcommands } from "./acl/binding_rule.ts";
import { policySubcommands } from "./acl/policy.ts";
import { roleSubcommands } from "./acl/role.ts";
import { bootstrapCommand, tokenSubcommands } from "./acl/token.ts";
import { translateRulesCommand } from "./acl/translate_rules.ts";
import { createCommandGroup, processCliDeps, type CliDeps } from "./support/index.ts";

const HELP = `Usage: causeway acl <subcommand> [options] [args]

  This command has subcommands for interacting with Consul's ACLs.
  Here are some simple examples, and more detailed examples are available
  in the subcommands or the documentation.

  Bootstrap ACLs:

      $ causeway acl bootstrap

  Create a policy and a token using it:

      $ causeway acl policy create -name "kv-app" -rules @rules.hcl
      $ causeway acl token create -description "app" -policy-name kv-app

  Group policies in a role and give it to a token:

      $ causeway acl role create -name "app" -policy-name kv-app
      $ causeway acl token update -id 4a8b -role-name app -merge-roles

  Add a Kubernetes auth method and a binding rule for it:

      $ causeway acl auth-method create -type kubernetes -name k8s \\
          -kubernetes-host https://k8s.example.com:6443 -kubernetes-ca-cert @ca.crt \\
          -kubernetes-service-account-jwt "$JWT"
      $ causeway acl binding-rule create -method k8s -bind-type service \\
          -bind-name '\${serviceaccount.name}'
`;

/** A subcommand group's help as Consul words it, then each example: its title and command. */
const groupHelp = (group: string, what: string, examples: [string, string][]) => `Usage: causeway acl ${group} <subcommand> [options] [args]

  This command has subcommands for managing Consul's ACL ${what}.
  Here are some simple examples, and more detailed examples are available
  in the subcommands or the documentation.
${examples.map(([title, command]) => `\n  ${title}:\n\n    $ causeway acl ${group} ${command}\n`).join("")}`;

const AUTH_METHOD_HELP = groupHelp("auth-method", "auth methods", [
  ["List all auth methods", "list"], ["Read an auth method", "read -name my-k8s"], ["Delete an auth method", "delete -name my-k8s"],
]);
const BINDING_RULE_HELP = groupHelp("binding-rule", "binding rules", [
  ["List all binding rules", "list"], ["Read a binding rule", "read -id fdabbcb5-9de5-4b1a-961f-77214ae88cba"], ["Delete a binding rule", "delete -id b6b85"],
]);

export function createAclCommand(deps: CliDeps = processCliDeps): Command {
  return createCommandGroup({
    name: "acl",
    synopsis: "Interact with Consul's ACLs",
    help: HELP,
    subcommands: [
      bootstrapCommand(deps),
      createCommandGroup({ name: "policy", synopsis: "Manage Consul's ACL policies", help: "Usage: causeway acl policy <subcommand> [options] [args]\n\n  This command has subcommands for managing Consul ACL policies.\n", subcommands: policySubcommands(deps) }),
      createCommandGroup({ name: "role", synopsis: "Manage Consul's ACL roles", help: "Usage: causeway acl role <subcommand> [options] [args]\n\n  This command has subcommands for managing Consul's ACL roles.\n", subcommands: roleSubcommands(deps) }),
      createCommandGroup({ name: "token", synopsis: "Manage Consul's ACL tokens", help: "Usage: causeway acl token <subcommand> [options] [args]\n\n  This command has subcommands for managing Consul's ACL tokens.\n", subcommands: tokenSubcommands(deps) }),
      createCommandGroup({ name: "auth-method", synopsis: "Manage Consul's ACL auth methods", help: AUTH_METHOD_HELP, subcommands: authMethodSubcommands(deps) }),
      createCommandGroup({ name: "binding-rule", synopsis: "Manage Consul's ACL binding rules", help: BINDING_RULE_HELP, subcommands: bindingRuleSubcommands(deps) }),
      setAgentTokenCommand(deps),
      translateRulesCommand(deps),
    ],
  });
}

/** `causeway acl` against the process environment. */
export const aclCommand: Command = createAclCommand();
