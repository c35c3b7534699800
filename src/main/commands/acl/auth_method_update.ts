/**
 * `causeway acl auth-method update`: Consul 1.8's command/acl/authmethod/update over GET/PUT
 * /v1/acl/auth-method/:name. The method is read first in both modes (its Name and Type are immutable).
 */
import type { Command } from "../../command.ts";
import type { FlagSpec } from "../../flags.ts";
import { formatGoDuration } from "../../../lib/index.ts";
import type { CliDeps } from "../support/index.ts";
import { authMethodBody, decodeAuthMethod, type AuthMethod } from "./auth_format.ts";
import {
  AUTH_METHOD_META, authMethodPath, configFlag, DESCRIPTION, DISPLAY_NAME, flagText, KUBERNETES_FLAGS, kubernetesConfig, kubernetesFlags, loadCaCert,
  MAX_TOKEN_TTL, maxTokenTtlNs, printAuthMethod, readAuthMethod, TOKEN_LOCALITY,
} from "./auth_method_common.ts";
import { aclCommand, CommandFailure, FORMAT, formatOf, orFail, updateUsage } from "./shared.ts";

const CONFLICT = "Cannot use command line arguments with '-config' flag";
const BAD_JSON = "Error parsing JSON for auth method config";

/**
 * Without -no-merge each of -display-name, -description, -max-token-ttl, -token-locality given (not
 * empty) replaces its field, -config replaces the whole Config (no deep merge), and for a kubernetes
 * method each kubernetes flag given sets its Config key. With -no-merge the method is what the flags
 * say, its Name and Type kept; a kubernetes method then needs all three kubernetes flags.
 */
export function authMethodUpdate(deps: CliDeps): Command {
  const flags: FlagSpec[] = [
    AUTH_METHOD_META,
    { name: "name", kind: "string", arg: "<name>", usage: "The auth method name." },
    DISPLAY_NAME, DESCRIPTION, MAX_TOKEN_TTL, TOKEN_LOCALITY,
    {
      name: "config", kind: "string", arg: "<json>",
      usage: "The configuration for the auth method. Must be JSON. The config is updated as one field. May be prefixed with '@' to indicate that the value is a file path to load the config from. '-' may also be given to indicate that the config is available on stdin.",
    },
    ...KUBERNETES_FLAGS,
    {
      name: "no-merge", kind: "bool",
      usage: "Do not merge the current auth method information with what is provided to the command. Instead overwrite all fields with the exception of the name which is immutable.",
    },
    FORMAT,
  ];
  const usage = updateUsage("auth method", `  Update all editable fields of the auth method:

    $ causeway acl auth-method update -name "my-k8s" \\
                            -description "new description" \\
                            -kubernetes-host "https://new-apiserver.example.com:8443" \\
                            -kubernetes-ca-cert @/path/to/new-kube.ca.crt \\
                            -kubernetes-service-account-jwt "NEW_JWT_CONTENTS"`, "-name NAME [options]");
  return aclCommand("update", "Update an ACL auth method", flags, usage, deps, async (values, client, io) => {
    const ttlNs = maxTokenTtlNs(values);
    const name = flagText(values, "name");
    if (name === "") throw new CommandFailure("Cannot update an auth method without specifying the -name parameter");
    formatOf(values);
    const current = await readAuthMethod(client, name, "Error when retrieving current auth method");
    const k = kubernetesFlags(values);
    const caCert = k.caCert === "" ? "" : await loadCaCert(k.caCert, deps);
    const given = (flag: string, now: string) => flagText(values, flag) || now;
    let method: AuthMethod;
    if (values.get("no-merge") === true) {
      method = {
        Name: current.Name, Type: current.Type, DisplayName: flagText(values, "display-name"), Description: flagText(values, "description"),
        MaxTokenTTL: ttlNs > 0 ? formatGoDuration(ttlNs) : "", TokenLocality: flagText(values, "token-locality"), Config: null, CreateIndex: 0, ModifyIndex: 0,
      };
      const config = await configFlag(values, deps, CONFLICT, BAD_JSON);
      if (config !== undefined) method.Config = config;
      if (current.Type === "kubernetes") method.Config = await kubernetesConfig({ ...k, caCert }, async (loaded) => loaded);
    } else {
      method = {
        ...current, DisplayName: given("display-name", current.DisplayName), Description: given("description", current.Description),
        MaxTokenTTL: ttlNs > 0 ? formatGoDuration(ttlNs) : current.MaxTokenTTL, TokenLocality: given("token-locality", current.TokenLocality),
      };
      const config = await configFlag(values, deps, CONFLICT, BAD_JSON);
      if (config !== undefined) method.Config = config;
      const merged: Record<string, unknown> = { ...method.Config };
      if (current.Type === "kubernetes") {
        if (k.host !== "") merged.Host = k.host;
        if (caCert !== "") merged.CACert = caCert;
        if (k.jwt !== "") merged.ServiceAccountJWT = k.jwt;
      }
      method.Config = merged;
    }
    const updated = await orFail(`Error updating auth method ${JSON.stringify(name)}`, client.request("PUT", authMethodPath(name), { body: authMethodBody(method) }));
    printAuthMethod(io, values, decodeAuthMethod(updated.json()));
    return 0;
  });
}
