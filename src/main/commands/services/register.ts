/**
 * `causeway services register`: Consul's `consul services register` (command/services/register in
 * hashicorp/consul): PUT /v1/agent/service/register with an `AgentServiceRegistration` JSON body, built
 * from flags (-name, -id, -address, -port, -tag, -meta) or read from definition files (a `service` or
 * `services` block); flag values fill what a file leaves unset, tags and meta are added. Prints
 * `Registered service: NAME` per service; stops at the first failure with exit 1.
 */
import type { Command } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { clientOrExit, commandHelp, goQuote, mapFlag, parseHttpCommandLine, processCliDeps, stringFlag, usageFailure, type CliDeps } from "../support/index.ts";
import { servicesFromFiles, type ServiceRegistration } from "./definition.ts";

const FLAGS: FlagSpec[] = [
  { name: "address", kind: "string", arg: "<address>", usage: "Address of the service to register for arg-based registration." },
  { name: "id", kind: "string", arg: "<id>", usage: "ID of the service to register for arg-based registration. If this isn't set, it will default to the -name value." },
  { name: "meta", kind: "strings", arg: "<key=value>", usage: "Metadata to set on the service, formatted as key=value." },
  { name: "name", kind: "string", arg: "<name>", usage: "Name of the service to register for arg-based registration." },
  { name: "port", kind: "int", arg: "<port>", usage: "Port of the service to register for arg-based registration." },
  { name: "tag", kind: "strings", arg: "<tag>", usage: "Tag to add to the service." },
];

const HELP = commandHelp(
  `Usage: causeway services register [options] [FILE...]

  Register one or more services using the local agent API. Services can be
  registered from JSON service definition files (an object with a "service"
  block, or a "services" array, as in agent configuration) or using flags. The
  service is registered and the command returns. The caller must remember to
  call "causeway services deregister" or a similar API to deregister the
  service when complete.

      $ causeway services register web.json
      $ causeway services register -name=web -port=8080 -tag=v1
`,
  FLAGS,
);

/** The registration the flags describe, with Go's field order and `omitempty`. */
function fromFlags(f: { id?: string; name?: string; address?: string; port: number; tags: string[]; meta: Record<string, string> }): ServiceRegistration {
  const svc: ServiceRegistration = {};
  if (f.id) svc.ID = f.id;
  if (f.name) svc.Name = f.name;
  if (f.tags.length > 0) svc.Tags = f.tags;
  if (f.port !== 0) svc.Port = f.port;
  if (f.address) svc.Address = f.address;
  if (Object.keys(f.meta).length > 0) svc.Meta = f.meta;
  return svc;
}

/** register.CombineArgs: a flag value fills a field the file left empty; meta merges (flags win); tags append. */
export function combineWithFlags(file: ServiceRegistration, flags: ServiceRegistration): ServiceRegistration {
  const out: ServiceRegistration = { ...file };
  for (const field of ["ID", "Name", "Address", "Port"]) if (flags[field] !== undefined && !out[field]) out[field] = flags[field];
  if (flags.Meta) out.Meta = { ...(out.Meta as Record<string, string> | undefined), ...(flags.Meta as Record<string, string>) };
  if (flags.Tags) out.Tags = [...((out.Tags as string[] | undefined) ?? []), ...(flags.Tags as string[])];
  return out;
}

export function createServicesRegisterCommand(deps: CliDeps = processCliDeps): Command {
  return {
    name: "register",
    synopsis: "Register services with the local agent",
    async run(argv, io) {
      const parsed = parseHttpCommandLine(FLAGS, argv, io, HELP);
      if (typeof parsed === "number") return parsed;
      let flagSvc: ServiceRegistration;
      try {
        const tags = parsed.values.get("tag");
        const port = parsed.values.get("port");
        if (typeof port === "number" && (port < 0 || port > 65535)) throw new UsageError(`invalid value "${port}" for flag -port: out of range`);
        flagSvc = fromFlags({
          id: stringFlag(parsed, "id"),
          name: stringFlag(parsed, "name"),
          address: stringFlag(parsed, "address"),
          port: typeof port === "number" ? port : 0,
          tags: Array.isArray(tags) ? tags : [],
          meta: mapFlag(parsed, "meta"),
        });
      } catch (err) {
        if (err instanceof UsageError) return usageFailure(io, err.message, HELP);
        throw err;
      }
      const files = parsed.rest;
      if (files.length === 0 && !flagSvc.Name) {
        io.err("Service registration requires at least one argument or flags.\n");
        return 1;
      }
      if (files.length > 0 && flagSvc.Name) {
        io.err("Service registration requires arguments or -id, not both.\n");
        return 1;
      }
      let services: ServiceRegistration[] = [flagSvc];
      if (files.length > 0) {
        try {
          services = (await servicesFromFiles(files)).map((svc) => combineWithFlags(svc, flagSvc));
        } catch (err) {
          io.err(`Error: ${(err as Error).message}\n`);
          return 1;
        }
      }
      const client = clientOrExit(parsed, deps, io);
      if (typeof client === "number") return client;
      for (const svc of services) {
        const name = typeof svc.Name === "string" ? svc.Name : "";
        try {
          await client.request("PUT", "/v1/agent/service/register", { body: JSON.stringify(svc) });
        } catch (err) {
          io.err(`Error registering service ${goQuote(name)}: ${(err as Error).message}\n`);
          return 1;
        }
        io.out(`Registered service: ${name}\n`);
      }
      return 0;
    },
  };
}
