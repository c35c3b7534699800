/**
 * `causeway acl translate-rules [-token-accessor | -token-secret] TRANSLATE`: Consul 1.8's
 * command/acl/rules/translate. As in Consul, the translation runs here, not on the agent
 * (acl.TranslateLegacyRules, src/acl translateLegacyRules); the agent is asked only for a legacy token's
 * rules, with -token-accessor (TRANSLATE names the token by accessor, or a unique accessor prefix) or
 * -token-secret (TRANSLATE is the token's secret, read through /v1/acl/token/self with that secret).
 * TRANSLATE may be `@file` or `-` (stdin); the output is the translated rules.
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { TranslateError, translateLegacyRules } from "../../../acl/index.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import { loadDataArg, utf8, type CliDeps } from "../support/index.ts";
import { idFromPartial } from "./links.ts";
import { aclArgsCommand, CommandFailure, orFail } from "./shared.ts";

const FLAGS: FlagSpec[] = [
  {
    name: "token-accessor", kind: "bool",
    usage: "Specifies that the TRANSLATE argument refers to a ACL token AccessorID. The rules to translate will then be read from the retrieved token",
  },
  {
    name: "token-secret", kind: "bool",
    usage: "Specifies that the TRANSLATE argument refers to a ACL token SecretID. The rules to translate will then be read from the retrieved token",
  },
];

const USAGE = `Usage: causeway acl translate-rules [options] TRANSLATE

  Translates the legacy ACL rule syntax into the current syntax.

  Translate rules within a file:

      $ causeway acl translate-rules @rules.hcl

  Translate rules from stdin:

      $ causeway acl translate-rules -

  Translate rules from a string argument:

      $ causeway acl translate-rules 'key "" { policy = "write"}'

  Translate rules for a legacy ACL token using its SecretID passed from stdin:

      $ causeway acl translate-rules -token-secret -

  Translate rules for a legacy ACL token using its AccessorID:

      $ causeway acl translate-rules -token-accessor 429cd746-03d5-4bbb-a83a-18b164171c89`;

/**
 * Consul's acl.GetRulesFromLegacyToken: the ID goes through GetTokenIDFromPartial first (a secret too,
 * so a secret that is not 36 characters long is looked up as an accessor prefix, as in Consul); then
 * the token is read by accessor, or by secret as /v1/acl/token/self. Failures are printed as they are
 * ("No such token ID with prefix: ...", "Error reading token: ...", "Token is not a legacy token with rules").
 */
async function legacyRules(client: (token?: string) => AgentHttpClient, id: string, isSecret: boolean): Promise<string> {
  let tokenId: string;
  try {
    tokenId = await idFromPartial(client(), "token", id);
  } catch (err) {
    throw new CommandFailure((err as Error).message);
  }
  const read = isSecret ? client(tokenId).request("GET", "/v1/acl/token/self") : client().request("GET", `/v1/acl/token/${encodeURIComponent(tokenId)}`);
  const rules = ((await orFail("Error reading token", read)).json() as { Rules?: unknown }).Rules;
  if (typeof rules !== "string" || rules === "") throw new CommandFailure("Token is not a legacy token with rules");
  return rules;
}

export function translateRulesCommand(deps: CliDeps): Command {
  return aclArgsCommand("translate-rules", "Translate the legacy rule syntax into the current syntax", FLAGS, USAGE, deps, async (values, args, client, io) => {
    const accessor = values.get("token-accessor") === true;
    const secret = values.get("token-secret") === true;
    if (accessor && secret) throw new CommandFailure("Error - cannot specify both -token-secret and -token-accessor");
    if (args.length === 0) throw new CommandFailure("Error! Missing TRANSLATE argument");
    if (args.length > 1) throw new CommandFailure(`Error! Too many arguments: expected 1 got ${args.length}`);
    let data: string;
    try {
      data = utf8(await loadDataArg(args[0]!, deps));
    } catch (err) {
      throw new CommandFailure(`Error! ${(err as Error).message}`);
    }
    // Whitespace and newlines around an ID (echo without -n) are trimmed.
    if (accessor || secret) data = await legacyRules(client, data.trim(), secret);
    let translated: string;
    try {
      translated = translateLegacyRules(data);
    } catch (err) {
      if (err instanceof TranslateError) throw new CommandFailure(`Error translating rules: ${err.message}`);
      throw err;
    }
    io.out(`${translated}\n`);
    return 0;
  });
}
