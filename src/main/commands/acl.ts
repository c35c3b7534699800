/**
 * `causeway acl`: Consul 1.8's `consul acl` (command/acl): `bootstrap`; `policy` and `role` with create,
 * read, update, list and delete; `token` with those and clone. Every subcommand takes -token and
 * CONSUL_HTTP_TOKEN as the others do.
 */
import type { Command } from "../command.ts";
import { policySubcommands } from "./acl/policy.ts";
import { roleSubcommands } from "./acl/role.ts";
import { bootstrapCommand, tokenSubcommands } from "./acl/token.ts";
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
`;

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
    ],
  });
}

/** `causeway acl` against the process environment. */
export const aclCommand: Command = createAclCommand();
