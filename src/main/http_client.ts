/**
 * A small client for the local agent's HTTP API, for CLI commands (`members`, `join`, ...). It mirrors
 * what Consul's commands get from command/flags.HTTPFlags and the Go `api` package: the `-http-addr`
 * flag with its environment fallbacks, and errors worded as the Go client words them
 * (`Unexpected response code: 500 (<body>)`, `Put "<url>": <cause>`), so messages read like Consul's.
 */
import process from "node:process";
import type { FlagSpec } from "./flags.ts";

export const DEFAULT_HTTP_ADDR = "http://127.0.0.1:8500";

/** The environment variables consulted for the agent address, first match wins. */
export const HTTP_ADDR_ENV = ["CAUSEWAY_HTTP_ADDR", "CONSUL_HTTP_ADDR"] as const;

export const HTTP_ADDR_FLAG: FlagSpec = {
  name: "http-addr",
  kind: "string",
  arg: "<address>",
  usage:
    "The address and port of the agent's HTTP API, with an optional http:// or https:// scheme. " +
    `Also taken from ${HTTP_ADDR_ENV.join(" or ")}. Default "${DEFAULT_HTTP_ADDR}".`,
};

export type Env = Readonly<Record<string, string | undefined>>;

/** The `fetch` the client uses; tests may pass their own. */
export type FetchFn = (input: string, init: { method: string }) => Promise<Response>;

/**
 * The base URL for the agent: the flag if given, else the first non-empty environment variable of
 * `HTTP_ADDR_ENV`, else the default. An address without a scheme is plain http, as in Consul. Throws
 * with a message for an address that is not a URL or uses another scheme.
 */
export function resolveHttpAddr(flag: string | undefined, env: Env): string {
  const raw = flag ?? HTTP_ADDR_ENV.map((name) => env[name]).find((v) => v !== undefined && v !== "") ?? DEFAULT_HTTP_ADDR;
  const withScheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new Error(`invalid HTTP address "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`unsupported scheme in HTTP address "${raw}" (want http or https)`);
  return url.origin;
}

/** A response with a status other than 200, as the Go client's `StatusError`. */
export class AgentHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super(`Unexpected response code: ${statusCode} (${body})`);
  }
}

export interface AgentHttpClient {
  readonly baseUrl: string;
  /** GET `path` and decode the JSON body. Rejects with AgentHttpError on a non-200 answer. */
  getJson(path: string, query?: Readonly<Record<string, string>>): Promise<unknown>;
  /** PUT `path` with no body; resolves to the response text. Rejects with AgentHttpError on a non-200 answer. */
  put(path: string, query?: Readonly<Record<string, string>>): Promise<string>;
}

/**
 * A client for the agent at `baseUrl` (from `resolveHttpAddr`). Callers escape path segments
 * (`encodeURIComponent`); query parameters are encoded here in sorted order, as Go's `url.Values.Encode`.
 * A transport failure rejects with `<Method> "<url>": <cause>`.
 */
export function createAgentHttpClient(baseUrl: string, fetchFn: FetchFn = fetch): AgentHttpClient {
  const request = async (method: string, path: string, query: Readonly<Record<string, string>> = {}): Promise<string> => {
    const params = new URLSearchParams(Object.entries(query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const url = `${baseUrl}${path}${params.size > 0 ? `?${params}` : ""}`;
    let res: Response;
    let text: string;
    try {
      res = await fetchFn(url, { method });
      text = await res.text();
    } catch (err) {
      throw new Error(`${method[0]}${method.slice(1).toLowerCase()} "${url}": ${transportCause(err)}`);
    }
    if (res.status !== 200) throw new AgentHttpError(res.status, text.trim());
    return text;
  };
  return {
    baseUrl,
    async getJson(path, query) {
      const text = await request("GET", path, query);
      try {
        return JSON.parse(text);
      } catch {
        throw new Error(`invalid JSON from ${baseUrl}${path}: ${text.slice(0, 80)}`);
      }
    },
    put: (path, query) => request("PUT", path, query),
  };
}

/** A readable cause for a failed fetch: runtimes hide the errno in different places. */
function transportCause(err: unknown): string {
  const codes = [(err as { code?: unknown })?.code, (err as { cause?: { code?: unknown } })?.cause?.code];
  if (codes.some((c) => c === "ECONNREFUSED" || c === "ConnectionRefused")) return "connection refused";
  return err instanceof Error ? err.message : String(err);
}

/** What an HTTP-speaking command takes from the process; tests pass their own. */
export interface HttpCommandDeps {
  readonly env: () => Env;
  readonly fetch?: FetchFn;
}

/** The process environment and the runtime's fetch. */
export const processHttpDeps: HttpCommandDeps = { env: () => process.env };

/**
 * Resolves the agent address from the `-http-addr` flag value and `deps`, and builds a client.
 * Throws (with a message) on a bad address.
 */
export function agentClientFor(httpAddrFlag: string | undefined, deps: HttpCommandDeps): AgentHttpClient {
  return createAgentHttpClient(resolveHttpAddr(httpAddrFlag, deps.env()), deps.fetch);
}
