/**
 * `causeway acl bootstrap` and `causeway acl token create|read|list|delete`: Consul 1.8's
 * command/acl/bootstrap and command/acl/token, over /v1/acl/bootstrap and /v1/acl/token*, with its flags,
 * messages and output (format.ts).
 */
import type { Command, CommandIo } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { parseGoDuration } from "../../../lib/index.ts";
import { processCliDeps, type CliDeps } from "../support/index.ts";
import { formatToken, formatTokenList, jsonOut } from "./format.ts";
import { aclCommand as command, aclListCommand, FORMAT, formatOf, META } from "./shared.ts";

const printToken = (io: CommandIo, format: "pretty" | "json", token: unknown, showMeta: boolean) =>
  io.out(format === "json" ? jsonOut(token) : formatToken(token as never, showMeta));

export function bootstrapCommand(deps: CliDeps = processCliDeps): Command {
  return command("bootstrap", "Bootstrap ACLs", [FORMAT], `Usage: causeway acl bootstrap [options]

  The bootstrap command will request Consul to generate a new token with unlimited privileges to use
  for management purposes and output its details. This can only be done once and afterwards bootstrapping
  will be disabled. If all tokens are lost and you need to bootstrap again you can follow the bootstrap
  reset procedure.`, deps, async (values, client, io) => {
    const format = formatOf(values, io);
    if (!format) return 1;
    try {
      const res = await client.request("PUT", "/v1/acl/bootstrap");
      const { ID: _legacy, ...token } = res.json() as Record<string, unknown>;
      printToken(io, format, token, false);
      return 0;
    } catch (err) {
      io.err(`Failed ACL bootstrapping: ${(err as Error).message}\n`);
      return 1;
    }
  });
}

const links = (values: ReadonlyMap<string, unknown>, idFlag: string, nameFlag: string) => [
  ...((values.get(idFlag) as string[] | undefined) ?? []).map((ID) => ({ ID })),
  ...((values.get(nameFlag) as string[] | undefined) ?? []).map((Name) => ({ Name })),
];

function tokenCreate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "description", kind: "string", arg: "<text>", usage: "A description of the token" },
    { name: "policy-id", kind: "strings", arg: "<id>", usage: "ID of a policy to use for this token. May be specified multiple times" },
    { name: "policy-name", kind: "strings", arg: "<name>", usage: "Name of a policy to use for this token. May be specified multiple times" },
    { name: "role-id", kind: "strings", arg: "<id>", usage: "ID of a role to use for this token. May be specified multiple times" },
    { name: "role-name", kind: "strings", arg: "<name>", usage: "Name of a role to use for this token. May be specified multiple times" },
    { name: "service-identity", kind: "strings", arg: "<svc[:dc,...]>", usage: "Name of a service identity to use for this token, optionally followed by ':' and a comma-separated list of datacenters. May be specified multiple times" },
    { name: "node-identity", kind: "strings", arg: "<node:dc>", usage: "Name of a node identity to use for this token, followed by ':' and its datacenter. May be specified multiple times" },
    { name: "local", kind: "bool", usage: "Create this as a datacenter local token" },
    { name: "expires-ttl", kind: "string", arg: "<duration>", usage: "Duration of time this token should be valid for" },
    META, FORMAT,
  ];
  return command("create", "Create an ACL token", flags, "Usage: causeway acl token create [options]\n\n  When creating a new token policies may be linked using either the -policy-id\n  or the -policy-name options.", deps, async (values, client, io) => {
    const format = formatOf(values, io);
    if (!format) return 1;
    const body: Record<string, unknown> = { Description: values.get("description") ?? "", Local: values.get("local") === true };
    const policies = links(values, "policy-id", "policy-name");
    const roles = links(values, "role-id", "role-name");
    if (policies.length) body.Policies = policies;
    if (roles.length) body.Roles = roles;
    const services = ((values.get("service-identity") as string[] | undefined) ?? []).map((s) => {
      const [name, dcs] = s.split(":", 2);
      return { ServiceName: name, ...(dcs ? { Datacenters: dcs.split(",") } : {}) };
    });
    if (services.length) body.ServiceIdentities = services;
    const nodes = [];
    for (const n of (values.get("node-identity") as string[] | undefined) ?? []) {
      const [node, dc] = n.split(":", 2);
      if (!node || !dc) {
        io.err(`Malformed -node-identity argument: ${JSON.stringify(n)}\n`);
        return 1;
      }
      nodes.push({ NodeName: node, Datacenter: dc });
    }
    if (nodes.length) body.NodeIdentities = nodes;
    const ttl = values.get("expires-ttl") as string | undefined;
    if (ttl) {
      try {
        body.ExpirationTTL = parseGoDuration(ttl);
      } catch (err) {
        io.err(`Invalid value for -expires-ttl: ${(err as Error).message}\n`);
        return 1;
      }
    }
    try {
      printToken(io, format, (await client.request("PUT", "/v1/acl/token", { body: JSON.stringify(body) })).json(), values.get("meta") === true);
      return 0;
    } catch (err) {
      io.err(`Failed to create new token: ${(err as Error).message}\n`);
      return 1;
    }
  });
}

function tokenRead(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "id", kind: "string", arg: "<accessor>", usage: "The Accessor ID of the token to read." },
    { name: "self", kind: "bool", usage: "Indicates that the current HTTP token should be read by secret ID instead of expecting a -id option" },
    META, FORMAT,
  ];
  return command("read", "Read an ACL token", flags, "Usage: causeway acl token read [options] -id TOKENID\n\n  This command will retrieve and print out the details of a single token.", deps, async (values, client, io) => {
    const format = formatOf(values, io);
    if (!format) return 1;
    const self = values.get("self") === true;
    const id = values.get("id") as string | undefined;
    if (!self && !id) {
      io.err("Must specify the -id parameter\n");
      return 1;
    }
    try {
      const path = self ? "/v1/acl/token/self" : `/v1/acl/token/${encodeURIComponent(id!)}`;
      printToken(io, format, (await client.request("GET", path)).json(), values.get("meta") === true);
      return 0;
    } catch (err) {
      io.err(`Error reading token ${JSON.stringify(self ? "self" : id)}: ${(err as Error).message}\n`);
      return 1;
    }
  });
}

const tokenList = (deps: CliDeps) =>
  aclListCommand("List ACL tokens", "Usage: causeway acl token list [options]\n\n  Lists all the ACL tokens known to Consul.", "/v1/acl/tokens", formatTokenList, "Failed to retrieve the token list", deps);

function tokenDelete(deps: CliDeps): Command {
  const flags: FlagSpec[] = [{ name: "id", kind: "string", arg: "<accessor>", usage: "The Accessor ID of the token to delete." }];
  return command("delete", "Delete an ACL token", flags, "Usage: causeway acl token delete [options] -id TOKEN\n\n  Deletes an ACL token by providing the ID.", deps, async (values, client, io) => {
    const id = values.get("id") as string | undefined;
    if (!id) {
      io.err("Must specify the -id parameter\n");
      return 1;
    }
    try {
      await client.request("DELETE", `/v1/acl/token/${encodeURIComponent(id)}`);
      io.out(`Token "${id}" deleted successfully\n`);
      return 0;
    } catch (err) {
      io.err(`Error deleting token "${id}": ${(err as Error).message}\n`);
      return 1;
    }
  });
}

export const tokenSubcommands = (deps: CliDeps): Command[] => [tokenCreate(deps), tokenDelete(deps), tokenList(deps), tokenRead(deps)];
