/**
 * `causeway event`: Consul's `consul event` (command/event/event.go in hashicorp/consul): fires a user
 * event through PUT /v1/event/fire/<name> (`?node=`, `?service=`, `?tag=` filters, the payload as the
 * body) and prints its ID. The agent is asked for its node first, as Consul does, so that a down agent
 * fails with "Error querying Consul agent".
 */
import { compileGoRegexp } from "../../connect/index.ts";
import type { Command, CommandIo } from "../command.ts";
import type { FlagSpec } from "../flags.ts";
import { clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, stringFlag, type CliDeps } from "./support/index.ts";
import { DATACENTER_FLAG, HTTP_ADDR_FLAG, TOKEN_FLAG } from "./support/http_client.ts";

const FLAGS: FlagSpec[] = [
  { name: "name", kind: "string", arg: "<string>", usage: "Name of the event." },
  { name: "node", kind: "string", arg: "<string>", usage: "Regular expression to filter on node names." },
  { name: "service", kind: "string", arg: "<string>", usage: "Regular expression to filter on service instances." },
  { name: "tag", kind: "string", arg: "<string>", usage: "Regular expression to filter on service tags. Must be used with -service." },
];
const HTTP_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG, DATACENTER_FLAG];

const HELP = commandHelp(
  `Usage: causeway event [options] [payload]

  Dispatches a custom user event across a datacenter. An event must provide
  a name, but a payload is optional. Events support filtering using
  regular expressions on node name, service, and tag definitions.
`,
  FLAGS,
  HTTP_FLAGS,
);

export function createEventCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "event",
    synopsis: "Fire a new event",
    async run(argv, io: CommandIo) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP, HTTP_FLAGS);
      if (typeof parsed === "number") return parsed;
      const name = stringFlag(parsed, "name") ?? "";
      const filters = { node: stringFlag(parsed, "node") ?? "", service: stringFlag(parsed, "service") ?? "", tag: stringFlag(parsed, "tag") ?? "" };
      if (name === "") {
        io.err(`Event name must be specified\n\n${HELP}`);
        return 1;
      }
      for (const [what, pattern] of Object.entries(filters)) {
        if (pattern === "") continue;
        try {
          compileGoRegexp(pattern); // the agent's engine (Go's RE2 syntax), so what passes here passes there
        } catch (err) {
          io.err(`Failed to compile ${what} filter regexp: ${(err as Error).message}\n`);
          return 1;
        }
      }
      if (filters.tag !== "" && filters.service === "") {
        io.err("Cannot provide tag filter without service filter.\n");
        return 1;
      }
      if (parsed.rest.length > 1) {
        io.err(`Too many command line arguments.\n\n${HELP}`);
        return 1;
      }
      const payload = parsed.rest[0] ?? "";
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      try {
        await client.getJson("/v1/agent/self");
      } catch (err) {
        io.err(`Error querying Consul agent: ${(err as Error).message}\n`);
        return 1;
      }
      let id: string;
      try {
        const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ""));
        const res = await client.request("PUT", `/v1/event/fire/${encodeURIComponent(name)}`, { query, ...(payload ? { body: payload } : {}) });
        id = (JSON.parse(new TextDecoder().decode(res.body)) as { ID?: string }).ID ?? "";
      } catch (err) {
        io.err(`Error firing event: ${(err as Error).message}\n`);
        return 1;
      }
      io.out(`Event ID: ${id}\n`);
      return 0;
    },
  };
}

/** `causeway event` against the process environment. */
export const eventCommand: Command = createEventCommand();
