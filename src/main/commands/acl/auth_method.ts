/**
 * `causeway acl auth-method create|read|list|delete` (update is in auth_method_update.ts): Consul 1.8's
 * command/acl/authmethod over /v1/acl/auth-method(s), with its flags, messages and output
 * (auth_format.ts). A method the servers do not have reads as 404, printed as "Auth method not found
 * with name ...".
 */
import type { Command } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { formatGoDuration } from "../../../lib/index.ts";
import type { CliDeps } from "../support/index.ts";
import { authMethodBody, authMethodStubOut, decodeAuthMethod, formatAuthMethodList, type AuthMethod } from "./auth_format.ts";
import {
  AUTH_METHOD_META, authMethodPath, configFlag, DESCRIPTION, DISPLAY_NAME, flagText, KUBERNETES_FLAGS, kubernetesConfig, kubernetesFlags, loadCaCert,
  MAX_TOKEN_TTL, maxTokenTtlNs, printAuthMethod, readAuthMethod, TOKEN_LOCALITY,
} from "./auth_method_common.ts";
import { authMethodUpdate } from "./auth_method_update.ts";
import { aclCommand, aclListCommand, CommandFailure, FORMAT, formatOf, orFail } from "./shared.ts";

const NAME_TO = (verb: string): FlagSpec => ({ name: "name", kind: "string", arg: "<name>", usage: `The name of the auth method to ${verb}.` });

/**
 * -type and -name are required (with the help, as Consul prints them); -config and the kubernetes flags
 * exclude each other; type=kubernetes takes its Config from the kubernetes flags, which are then all
 * required.
 */
function authMethodCreate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    AUTH_METHOD_META,
    { name: "type", kind: "string", arg: "<type>", usage: "The new auth method's type. This flag is required." },
    { name: "name", kind: "string", arg: "<name>", usage: "The new auth method's name. This flag is required." },
    DISPLAY_NAME, DESCRIPTION, MAX_TOKEN_TTL, TOKEN_LOCALITY, ...KUBERNETES_FLAGS, FORMAT,
    {
      name: "config", kind: "string", arg: "<json>",
      usage: "The configuration for the auth method. Must be JSON. May be prefixed with '@' to indicate that the value is a file path to load the config from. '-' may also be given to indicate that the config is available on stdin",
    },
  ];
  const usage = `Usage: causeway acl auth-method create -name NAME -type TYPE [options]

  Create a new auth method:

    $ causeway acl auth-method create -type "kubernetes" \\
                            -name "my-k8s" \\
                            -description "This is an example kube method" \\
                            -kubernetes-host "https://apiserver.example.com:8443" \\
                            -kubernetes-ca-cert @/path/to/kube.ca.crt \\
                            -kubernetes-service-account-jwt "JWT_CONTENTS"`;
  return aclCommand("create", "Create an ACL auth method", flags, usage, deps, async (values, client, io) => {
    const ttlNs = maxTokenTtlNs(values);
    const type = flagText(values, "type");
    const name = flagText(values, "name");
    if (type === "") throw new UsageError("Missing required '-type' flag");
    if (name === "") throw new UsageError("Missing required '-name' flag");
    formatOf(values);
    const method: AuthMethod = {
      Name: name, Type: type, DisplayName: flagText(values, "display-name"), Description: flagText(values, "description"),
      MaxTokenTTL: ttlNs > 0 ? formatGoDuration(ttlNs) : "", TokenLocality: flagText(values, "token-locality"), Config: null, CreateIndex: 0, ModifyIndex: 0,
    };
    const config = await configFlag(values, deps, "Cannot use command line arguments with '-config' flags", "Error parsing JSON configuration file");
    if (config !== undefined) method.Config = config;
    if (type === "kubernetes") method.Config = await kubernetesConfig(kubernetesFlags(values), (arg) => loadCaCert(arg, deps));
    const created = await orFail("Failed to create new auth method", client.request("PUT", "/v1/acl/auth-method", { body: authMethodBody(method) }));
    printAuthMethod(io, values, decodeAuthMethod(created.json()));
    return 0;
  });
}

function authMethodRead(deps: CliDeps): Command {
  const usage = "Usage: causeway acl auth-method read -name NAME [options]\n\n  Read an auth method:\n\n    $ causeway acl auth-method read -name my-auth-method";
  return aclCommand("read", "Read an ACL auth method", [AUTH_METHOD_META, NAME_TO("read"), FORMAT], usage, deps, async (values, client, io) => {
    const name = flagText(values, "name");
    if (name === "") throw new CommandFailure("Must specify the -name parameter");
    formatOf(values);
    printAuthMethod(io, values, await readAuthMethod(client, name, `Error reading auth method ${JSON.stringify(name)}`));
    return 0;
  });
}

const authMethodList = (deps: CliDeps) =>
  aclListCommand(
    "Lists ACL auth methods", "Usage: causeway acl auth-method list [options]\n\n  List all auth methods:\n\n    $ causeway acl auth-method list", "/v1/acl/auth-methods",
    formatAuthMethodList, "Failed to retrieve the auth method list", deps, { shape: authMethodStubOut, meta: AUTH_METHOD_META },
  );

function authMethodDelete(deps: CliDeps): Command {
  const usage = 'Usage: causeway acl auth-method delete -name NAME [options]\n\n  Delete an auth method:\n\n    $ causeway acl auth-method delete -name "my-auth-method"';
  return aclCommand("delete", "Delete an ACL auth method", [NAME_TO("delete")], usage, deps, async (values, client, io) => {
    const name = flagText(values, "name");
    if (name === "") throw new CommandFailure("Must specify the -name parameter");
    await orFail(`Error deleting auth method ${JSON.stringify(name)}`, client.request("DELETE", authMethodPath(name)));
    io.out(`Auth method ${JSON.stringify(name)} deleted successfully\n`);
    return 0;
  });
}

export const authMethodSubcommands = (deps: CliDeps): Command[] => [
  authMethodCreate(deps), authMethodDelete(deps), authMethodList(deps), authMethodRead(deps), authMethodUpdate(deps),
];
