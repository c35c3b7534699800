/**
 * `causeway acl set-agent-token TYPE TOKEN`: Consul 1.8's command/acl/agenttokens over PUT
 * /v1/agent/token/<name> with `{"Token": ...}`. TYPE is default, agent, master or replication; TOKEN may
 * be `@file` or `-` (stdin). As the 1.8 api client does (Agent.updateTokenFallback), each type is tried
 * under its current name and then its legacy one (acl_token, acl_agent_token, acl_agent_master_token,
 * acl_replication_token) until one succeeds; the error shown is the last one.
 */
import type { Command } from "../../command.ts";
import { ownEntry } from "../../../lib/index.ts";
import { loadDataArg, utf8, type CliDeps } from "../support/index.ts";
import { AgentHttpError } from "../support/http_client.ts";
import { aclArgsCommand, CommandFailure } from "./shared.ts";

/** Each TYPE and the names api.Agent tries for it, in order. */
const TARGETS: Readonly<Record<string, readonly string[]>> = {
  default: ["default", "acl_token"],
  agent: ["agent", "acl_agent_token"],
  master: ["agent_master", "acl_agent_master_token"],
  replication: ["replication", "acl_replication_token"],
};

const USAGE = `Usage: causeway acl set-agent-token [options] TYPE TOKEN

  This command will set the corresponding token for the agent to use.
  Note that the tokens uploaded this way are not persisted and if
  the agent reloads then the tokens will need to be set again.

  Token Types:

    default       The default token is the token that the agent will use for
                  both internal agent operations and operations initiated by
                  the HTTP and DNS interfaces when no specific token is provided.
                  If not set the agent will use the anonymous token.

    agent         The token that the agent will use for internal agent operations.
                  If not given then the default token is used for these operations.

    master        This sets the token that can be used to access the Agent APIs in
                  the event that the ACL datacenter cannot be reached.

    replication   This is the token that the agent will use for replication
                  operations. This token will need to be configured with read access
                  to whatever data is being replicated.

  Example:

    $ causeway acl set-agent-token default c4d0f8df-3aba-4ab6-a7a0-35b760dc29a1`;

/** Consul's dataFromArgs: TYPE and TOKEN (loaded), or its "Error! ..." message. */
async function typeAndToken(args: readonly string[], deps: CliDeps): Promise<[string, string]> {
  if (args.length === 0) throw new CommandFailure("Error! Missing TYPE and TOKEN arguments");
  // Consul 1.8's wording, capitals included.
  if (args.length === 1) throw new CommandFailure(`Error! ${ownEntry(TARGETS, args[0]!) ? "Missing TOKEN argument" : "MISSING TYPE argument"}`);
  if (args.length > 2) throw new CommandFailure(`Error! Too many arguments: expected 2 got ${args.length}`);
  try {
    return [args[0]!, utf8(await loadDataArg(args[1]!, deps))];
  } catch (err) {
    throw new CommandFailure(`Error! ${(err as Error).message}`);
  }
}

export function setAgentTokenCommand(deps: CliDeps): Command {
  return aclArgsCommand("set-agent-token", "Assign tokens for the Consul Agent's usage", [], USAGE, deps, async (_values, args, client, io) => {
    const [type, token] = await typeAndToken(args, deps);
    const agent = client();
    const targets = ownEntry(TARGETS, type);
    if (!targets) throw new CommandFailure("Unknown token type");
    let failure: Error | undefined;
    for (const target of targets) {
      try {
        await agent.request("PUT", `/v1/agent/token/${target}`, { body: JSON.stringify({ Token: token }) });
        io.out(`ACL token ${JSON.stringify(type)} set successfully\n`);
        return 0;
      } catch (err) {
        failure = err as Error;
        // Only an agent that does not know the name gets the legacy one (the 1.8 client's updateTokenFallback).
        if (!(err instanceof AgentHttpError && err.statusCode === 404)) break;
      }
    }
    throw new CommandFailure(`Failed to set ACL token ${JSON.stringify(type)}: ${failure!.message}`);
  });
}
