/**
 * `causeway reload`: Consul's `consul reload` (command/reload/reload.go in hashicorp/consul): PUT
 * /v1/agent/reload, which reads the agent's configuration again (as SIGHUP does); then `Configuration
 * reload triggered`, or `Error reloading: <reason>` and exit 1.
 */
import type { Command, CommandIo } from "../command.ts";
import type { FlagSpec } from "../flags.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, type CliDeps } from "./support/index.ts";
import { HTTP_ADDR_FLAG, TOKEN_FLAG } from "./support/http_client.ts";

const HTTP_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG];

const HELP = commandHelp(
  `Usage: causeway reload [options]

  Causes the agent to reload configurations. This can be used instead
  of sending the SIGHUP signal to the agent. Service and check definitions,
  log_level and acl.tokens take effect at once; the agent logs any other
  changed setting as needing a restart.
`,
  [],
  HTTP_FLAGS,
);

export function createReloadCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "reload",
    synopsis: "Triggers the agent to reload configuration files",
    async run(argv, io: CommandIo) {
      const parsed = parseHttpCommandLine([], argv, io, HELP, HTTP_FLAGS);
      if (typeof parsed === "number") return parsed;
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      try {
        await client.put("/v1/agent/reload");
      } catch (err) {
        io.err(`Error reloading: ${(err as Error).message}\n`);
        return 1;
      }
      io.out("Configuration reload triggered\n");
      return 0;
    },
  };
}

/** `causeway reload` against the process environment. */
export const reloadCommand: Command = createReloadCommand();
