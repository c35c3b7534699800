/**
 * What the `acl auth-method` commands share (Consul 1.8 command/acl/authmethod): reading a method and
 * printing it; the flags of create and update, -max-token-ttl read as Go's flag.Duration, -config
 * decoded as json.Unmarshal into a map[string]interface{} (with its error texts), and the kubernetes
 * flags loaded as Consul's helpers.LoadDataSource loads them (`@file`, `-` for stdin).
 */
import type { CommandIo } from "../../command.ts";
import { UsageError, type FlagSpec } from "../../flags.ts";
import { GoError, parseGoDuration, parseGoJson } from "../../../lib/index.ts";
import type { AgentHttpClient } from "../support/http_client.ts";
import { loadDataArg, utf8, type CliDeps } from "../support/index.ts";
import { authMethodOut, decodeAuthMethod, formatAuthMethod, type AuthMethod } from "./auth_format.ts";
import { CommandFailure, formatOf, orFail, printAs } from "./shared.ts";

type Values = ReadonlyMap<string, unknown>;

export const authMethodPath = (name: string) => `/v1/acl/auth-method/${encodeURIComponent(name)}`;

/** Prints a method as -format and -meta say. */
export const printAuthMethod = (io: CommandIo, values: Values, method: AuthMethod) =>
  printAs(io, formatOf(values), method, (m) => formatAuthMethod(m, values.get("meta") === true), authMethodOut);

/**
 * The method named `name` (api AuthMethodRead: a 404 is no method): a failure is "<failure>: ...", no
 * method "Auth method not found with name ...".
 */
export async function readAuthMethod(client: AgentHttpClient, name: string, failure: string): Promise<AuthMethod> {
  const res = await orFail(failure, client.request("GET", authMethodPath(name), { accept: [404] }));
  if (res.status === 404) throw new CommandFailure(`Auth method not found with name ${JSON.stringify(name)}`);
  return decodeAuthMethod(res.json());
}

/** A string flag's value, "" when not given (Consul compares with "" and cannot tell the two apart). */
export const flagText = (values: Values, name: string) => (values.get(name) as string | undefined) ?? "";

export const AUTH_METHOD_META: FlagSpec = { name: "meta", kind: "bool", usage: "Indicates that auth method metadata such as the raft indices should be shown for each entry." };

export const DISPLAY_NAME: FlagSpec = {
  name: "display-name", kind: "string", arg: "<name>", usage: "An optional name to use instead of the name when displaying this auth method in a UI.",
};
export const DESCRIPTION: FlagSpec = { name: "description", kind: "string", arg: "<text>", usage: "A description of the auth method." };
export const MAX_TOKEN_TTL: FlagSpec = {
  name: "max-token-ttl", kind: "string", arg: "<duration>", usage: "Duration of time all tokens created by this auth method should be valid for",
};
export const TOKEN_LOCALITY: FlagSpec = {
  name: "token-locality", kind: "string", arg: "<local|global>",
  usage: "Defines the kind of token that this auth method should produce. This can be either 'local' or 'global'. If empty the value of 'local' is assumed.",
};

/** -kubernetes-host, -kubernetes-ca-cert, -kubernetes-service-account-jwt. */
export const KUBERNETES_FLAGS: readonly FlagSpec[] = [
  { name: "kubernetes-host", kind: "string", arg: "<url>", usage: "Address of the Kubernetes API server. This flag is required for type=kubernetes." },
  {
    name: "kubernetes-ca-cert", kind: "string", arg: "<pem>",
    usage: "PEM encoded CA cert for use by the TLS client used to talk with the Kubernetes API. May be prefixed with '@' to indicate that the value is a file path to load the cert from. This flag is required for type=kubernetes.",
  },
  {
    name: "kubernetes-service-account-jwt", kind: "string", arg: "<jwt>",
    usage: "A Kubernetes service account JWT used to access the TokenReview API to validate other JWTs during login. This flag is required for type=kubernetes.",
  },
];

/**
 * -max-token-ttl in nanoseconds (0 when not given), parsed as Go's flag package parses a Duration: a
 * bad value is the UsageError `invalid value "x" for flag -max-token-ttl: parse error`.
 */
export function maxTokenTtlNs(values: Values): number {
  const raw = values.get("max-token-ttl") as string | undefined;
  if (raw === undefined) return 0;
  try {
    return parseGoDuration(raw);
  } catch {
    throw new UsageError(`invalid value "${raw}" for flag -max-token-ttl: parse error`);
  }
}

export interface KubernetesFlags {
  readonly host: string;
  readonly caCert: string;
  readonly jwt: string;
}

/** The -kubernetes-* values, "" for each not given. */
export function kubernetesFlags(values: Values): KubernetesFlags {
  return { host: flagText(values, "kubernetes-host"), caCert: flagText(values, "kubernetes-ca-cert"), jwt: flagText(values, "kubernetes-service-account-jwt") };
}

/**
 * The CA cert as LoadDataSource gives it (the text, `@file`, `-` for stdin): a load failure is "Invalid
 * '-kubernetes-ca-cert' value: ...", an empty result "Kubernetes CA Cert is empty".
 */
export async function loadCaCert(arg: string, deps: CliDeps): Promise<string> {
  const cert = utf8(await orFail("Invalid '-kubernetes-ca-cert' value", loadDataArg(arg, deps)));
  if (cert === "") throw new CommandFailure("Kubernetes CA Cert is empty");
  return cert;
}

/**
 * The kubernetes Config from the three flags, each required ("Missing required '-kubernetes-host'
 * flag" and so on), the CA cert through `cert` (create loads it here, update has loaded it before).
 */
export async function kubernetesConfig(k: KubernetesFlags, cert: (arg: string) => Promise<string>): Promise<Record<string, unknown>> {
  for (const [flag, value] of [["kubernetes-host", k.host], ["kubernetes-ca-cert", k.caCert], ["kubernetes-service-account-jwt", k.jwt]]) {
    if (value === "") throw new CommandFailure(`Missing required '-${flag}' flag`);
  }
  return { Host: k.host, CACert: await cert(k.caCert), ServiceAccountJWT: k.jwt };
}

/**
 * -config's JSON (text, `@file` or `-`), or undefined when not given. Refused with `conflict` when a
 * kubernetes flag is given too; a load failure is "Error loading configuration file: ...", a decode
 * failure `<parseFailure>: <json.Unmarshal's error>`. JSON null is null (a nil map).
 */
export async function configFlag(values: Values, deps: CliDeps, conflict: string, parseFailure: string): Promise<Record<string, unknown> | null | undefined> {
  const arg = flagText(values, "config");
  if (arg === "") return undefined;
  const k = kubernetesFlags(values);
  if (k.host !== "" || k.caCert !== "" || k.jwt !== "") throw new CommandFailure(conflict);
  const text = utf8(await orFail("Error loading configuration file", loadDataArg(arg, deps)));
  try {
    return unmarshalMap(text);
  } catch (err) {
    if (err instanceof GoError) throw new CommandFailure(`${parseFailure}: ${err.message}`);
    throw err;
  }
}

/** The index just past the object or array starting at `start` of text that parsed. */
function endOfValue(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
    } else if (c === "{" || c === "[") depth++;
    else if ((c === "}" || c === "]") && --depth === 0) return i + 1;
  }
  return text.length;
}

/**
 * Go's json.Unmarshal(text, &map[string]interface{}): "unexpected end of JSON input" for empty or
 * truncated text, the scanner's "invalid character ..." texts (also "... after top-level value" for
 * text after an object or array), and "json: cannot unmarshal <kind> into Go value of type
 * map[string]interface {}" for a value that is not an object or null.
 */
export function unmarshalMap(text: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = parseGoJson(text);
  } catch (err) {
    if (err instanceof GoError && (err.message === "EOF" || err.message === "unexpected EOF")) throw new GoError("unexpected end of JSON input");
    throw err;
  }
  const start = text.search(/[^ \t\r\n]/);
  if (text[start] === "{" || text[start] === "[") {
    const after = text.slice(endOfValue(text, start)).replace(/^[ \t\r\n]+/, "");
    if (after !== "") throw new GoError(`invalid character '${after[0] === "'" ? "\\'" : after[0]}' after top-level value`);
  }
  if (value === null) return null;
  if (typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  const kind = Array.isArray(value) ? "array" : typeof value === "boolean" ? "bool" : typeof value;
  throw new GoError(`json: cannot unmarshal ${kind} into Go value of type map[string]interface {}`);
}
