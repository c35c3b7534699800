/**
 * `causeway acl bootstrap` and `causeway acl token create|read|list|delete` (update and clone are in
 * token_update.ts): Consul 1.8's command/acl/bootstrap and command/acl/token, over /v1/acl/bootstrap and
 * /v1/acl/token*, with its flags, messages and output (format.ts). -id may be a unique accessor prefix.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { parseGoDuration } from "../../../lib/index.ts";
import { processCliDeps, type CliDeps } from "../support/index.ts";
import { formatTokenList } from "./format.ts";
import { idFromPartial, linkFlags, linksFrom, nodeIdentities, requiredId, serviceIdentities } from "./links.ts";
import { aclCommand as command, aclListCommand, CommandFailure, FORMAT, formatOf, META, orFail, printToken } from "./shared.ts";
import { tokenClone, tokenUpdate } from "./token_update.ts";

export function bootstrapCommand(deps: CliDeps = processCliDeps): Command {
  return command("bootstrap", "Bootstrap ACLs", [FORMAT], `Usage: causeway acl bootstrap [options]

  The bootstrap command will request Consul to generate a new token with unlimited privileges to use
  for management purposes and output its details. This can only be done once and afterwards bootstrapping
  will be disabled. If all tokens are lost and you need to bootstrap again you can follow the bootstrap
  reset procedure.`, deps, async (values, client, io) => {
    const format = formatOf(values);
    const res = await orFail("Failed ACL bootstrapping", client.request("PUT", "/v1/acl/bootstrap"));
    const { ID: _legacy, ...token } = res.json() as Record<string, unknown>;
    printToken(io, format, token, false);
    return 0;
  });
}

function tokenCreate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "description", kind: "string", arg: "<text>", usage: "A description of the token" },
    ...linkFlags("token", ["policy", "role"]),
    { name: "local", kind: "bool", usage: "Create this as a datacenter local token" },
    { name: "expires-ttl", kind: "string", arg: "<duration>", usage: "Duration of time this token should be valid for" },
    META, FORMAT,
  ];
  return command("create", "Create an ACL token", flags, "Usage: causeway acl token create [options]\n\n  When creating a new token policies may be linked using either the -policy-id\n  or the -policy-name options.", deps, async (values, client, io) => {
    const format = formatOf(values);
    const body: Record<string, unknown> = { Description: values.get("description") ?? "", Local: values.get("local") === true };
    const policies = await linksFrom(values, client, "policy");
    const roles = await linksFrom(values, client, "role");
    if (policies.length) body.Policies = policies;
    if (roles.length) body.Roles = roles;
    const services = serviceIdentities(values);
    if (services.length) body.ServiceIdentities = services;
    const nodes = nodeIdentities(values);
    if (nodes.length) body.NodeIdentities = nodes;
    const ttl = values.get("expires-ttl") as string | undefined;
    if (ttl) {
      try {
        body.ExpirationTTL = parseGoDuration(ttl);
      } catch (err) {
        throw new CommandFailure(`Invalid value for -expires-ttl: ${(err as Error).message}`);
      }
    }
    const token = await orFail("Failed to create new token", client.request("PUT", "/v1/acl/token", { body: JSON.stringify(body) }));
    printToken(io, format, token.json(), values.get("meta") === true);
    return 0;
  });
}

function tokenRead(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    { name: "id", kind: "string", arg: "<accessor>", usage: "The Accessor ID of the token to read. It may be specified as a unique ID prefix but will error if the prefix matches multiple token Accessor IDs" },
    { name: "self", kind: "bool", usage: "Indicates that the current HTTP token should be read by secret ID instead of expecting a -id option" },
    META, FORMAT,
  ];
  return command("read", "Read an ACL token", flags, "Usage: causeway acl token read [options] -id TOKENID\n\n  This command will retrieve and print out the details of a single token.", deps, async (values, client, io) => {
    const format = formatOf(values);
    const self = values.get("self") === true;
    const partial = values.get("id") as string | undefined;
    if (!self && !partial) throw new CommandFailure("Must specify the -id parameter");
    const id = self ? "self" : await orFail("Error determining token ID", idFromPartial(client, "token", partial!));
    const token = await orFail(`Error reading token ${JSON.stringify(id)}`, client.request("GET", `/v1/acl/token/${encodeURIComponent(id)}`));
    printToken(io, format, token.json(), values.get("meta") === true);
    return 0;
  });
}

const tokenList = (deps: CliDeps) =>
  aclListCommand("List ACL tokens", "Usage: causeway acl token list [options]\n\n  Lists all the ACL tokens known to Consul.", "/v1/acl/tokens", formatTokenList, "Failed to retrieve the token list", deps);

function tokenDelete(deps: CliDeps): Command {
  const flags: FlagSpec[] = [{ name: "id", kind: "string", arg: "<accessor>", usage: "The Accessor ID of the token to delete. It may be specified as a unique ID prefix but will error if the prefix matches multiple token Accessor IDs" }];
  return command("delete", "Delete an ACL token", flags, "Usage: causeway acl token delete [options] -id TOKEN\n\n  Deletes an ACL token by providing either the ID or a unique ID prefix.", deps, async (values, client, io) => {
    const id = await requiredId(values, client, "token", "Must specify the -id parameter");
    await orFail(`Error deleting token ${JSON.stringify(id)}`, client.request("DELETE", `/v1/acl/token/${encodeURIComponent(id)}`));
    io.out(`Token ${JSON.stringify(id)} deleted successfully\n`);
    return 0;
  });
}

export const tokenSubcommands = (deps: CliDeps): Command[] => [
  tokenClone(deps), tokenCreate(deps), tokenDelete(deps), tokenList(deps), tokenRead(deps), tokenUpdate(deps),
];
