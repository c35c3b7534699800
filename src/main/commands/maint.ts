/**
 * `causeway maint`: Consul's `consul maint` (command/maint/maint.go in hashicorp/consul). With -enable or
 * -disable, PUT /v1/agent/maintenance (the node) or /v1/agent/service/maintenance/<id> (-service);
 * without either, lists what is in maintenance on this agent from its checks (`_node_maintenance` and
 * `_service_maintenance:<id>`), in check ID order.
 */
import type { Command, CommandIo } from "../command.ts";
import type { FlagSpec } from "../flags.ts";
import { boolFlag, clientOrExit, commandHelp, parseHttpCommandLine, processCliDeps, stringFlag, type CliDeps } from "./support/index.ts";
import { HTTP_ADDR_FLAG, TOKEN_FLAG } from "./support/http_client.ts";

const NODE_MAINTENANCE = "_node_maintenance";
const SERVICE_MAINTENANCE_PREFIX = "_service_maintenance:";

const FLAGS: FlagSpec[] = [
  { name: "enable", kind: "bool", usage: "Enable maintenance mode." },
  { name: "disable", kind: "bool", usage: "Disable maintenance mode." },
  { name: "reason", kind: "string", arg: "<string>", usage: "Text describing the maintenance reason." },
  { name: "service", kind: "string", arg: "<serviceID>", usage: "Control maintenance mode for a specific service ID." },
];
const HTTP_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG];

const HELP = commandHelp(
  `Usage: causeway maint [options]

  Places a node or service into maintenance mode. During maintenance mode,
  the node or service will be excluded from all queries through the DNS
  or API interfaces, effectively taking it out of the pool of available
  nodes. This is done by registering an additional critical health check.

  When enabling maintenance mode for a node or service, you may optionally
  specify a reason string. This string will appear in the "Notes" field
  of the critical health check which is registered against the node or
  service. If no reason is provided, a default value will be used.

  Maintenance mode is persistent, and will be restored in the event of an
  agent restart. It is therefore required to disable maintenance mode on
  a given node or service before it will be placed back into the pool.

  By default, we operate on the node as a whole. By specifying the
  "-service" argument, this behavior can be changed to enable or disable
  only a specific service.

  If no arguments are given, the agent's maintenance status will be shown.
  This will return blank if nothing is currently under maintenance.
`,
  FLAGS,
  HTTP_FLAGS,
);

interface AgentCheck {
  readonly CheckID: string;
  readonly ServiceID?: string;
  readonly Notes?: string;
}

/** The listing Consul prints for the maintenance checks among `checks` (others ignored), by check ID. */
export function formatMaintenance(nodeName: string, checks: readonly AgentCheck[]): string {
  let out = "";
  for (const check of [...checks].sort((a, b) => (a.CheckID < b.CheckID ? -1 : a.CheckID > b.CheckID ? 1 : 0))) {
    if (check.CheckID === NODE_MAINTENANCE) out += `Node:\n  Name:   ${nodeName}\n  Reason: ${check.Notes ?? ""}\n\n`;
    else if (check.CheckID.startsWith(SERVICE_MAINTENANCE_PREFIX)) out += `Service:\n  ID:     ${check.ServiceID ?? ""}\n  Reason: ${check.Notes ?? ""}\n\n`;
  }
  return out;
}

export function createMaintCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "maint",
    synopsis: "Controls node or service maintenance mode",
    async run(argv, io: CommandIo) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP, HTTP_FLAGS);
      if (typeof parsed === "number") return parsed;
      const enable = boolFlag(parsed, "enable");
      const disable = boolFlag(parsed, "disable");
      const reason = stringFlag(parsed, "reason") ?? "";
      const serviceId = stringFlag(parsed, "service") ?? "";
      const refuse = (message: string) => (io.err(`${message}\n`), 1);
      if (enable && disable) return refuse("Only one of -enable or -disable may be provided");
      if (!enable && reason !== "") return refuse("Reason may only be provided with -enable");
      if (!enable && !disable && serviceId !== "") return refuse("Service requires either -enable or -disable");
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;

      let nodeName: string;
      try {
        const self = (await client.getJson("/v1/agent/self")) as { Config?: { NodeName?: string } } | null;
        nodeName = self?.Config?.NodeName ?? "";
      } catch (err) {
        return refuse(`Error querying Consul agent: ${(err as Error).message}`);
      }

      if (!enable && !disable) {
        let checks: Record<string, AgentCheck>;
        try {
          checks = ((await client.getJson("/v1/agent/checks")) as Record<string, AgentCheck> | null) ?? {};
        } catch (err) {
          return refuse(`Error getting checks: ${(err as Error).message}`);
        }
        io.out(formatMaintenance(nodeName, Object.values(checks)));
        return 0;
      }

      const query = enable ? { enable: "true", ...(reason ? { reason } : {}) } : { enable: "false" };
      const what = serviceId === "" ? "node" : "service";
      try {
        if (serviceId === "") await client.put("/v1/agent/maintenance", query);
        else await client.put(`/v1/agent/service/maintenance/${encodeURIComponent(serviceId)}`, query);
      } catch (err) {
        return refuse(`Error ${enable ? "enabling" : "disabling"} ${what} maintenance: ${(err as Error).message}`);
      }
      const state = enable ? "enabled" : "disabled";
      io.out(serviceId === "" ? `Node maintenance is now ${state}\n` : `Service maintenance is now ${state} for ${JSON.stringify(serviceId)}\n`);
      return 0;
    },
  };
}

/** `causeway maint` against the process environment. */
export const maintCommand: Command = createMaintCommand();
