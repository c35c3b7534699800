/**
 * A small client for the local agent's HTTP API, for CLI commands (`members`, `join`, ...). It mirrors
 * what Consul's commands get from command/flags.HTTPFlags and the Go `api` package: the `-http-addr`
 * flag with its environment fallbacks, and errors worded as the Go client words them
 * (`Unexpected response code: 500 (<body>)`, `Put "<url>": <cause>`), so messages read like Consul's.
 */
import process from "node:process";
import { parseExact } from "../../../lib/index.ts";
import type { FlagSpec } from "../../flags.ts";

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

/** The environment variables consulted for the ACL token (sent as `X-Consul-Token`), first match wins. */
export const HTTP_TOKEN_ENV = ["CAUSEWAY_HTTP_TOKEN", "CONSUL_HTTP_TOKEN"] as const;

export const TOKEN_FLAG: FlagSpec = {
  name: "token",
  kind: "string",
  arg: "<value>",
  usage: `ACL token to use in the request, sent as the X-Consul-Token header. Also taken from ${HTTP_TOKEN_ENV.join(" or ")}.`,
};

/** Consul's `-datacenter` (command/flags.HTTPFlags.ServerFlags): sent as `?dc=` on every request. */
export const DATACENTER_FLAG: FlagSpec = {
  name: "datacenter",
  kind: "string",
  arg: "<name>",
  usage: "Name of the datacenter to query. If unspecified, this will default to the datacenter of the queried agent.",
};

/** Consul's `-stale`: sent as `?stale=` by the read commands that honour it. */
export const STALE_FLAG: FlagSpec = {
  name: "stale",
  kind: "bool",
  usage:
    "Permit any server (non-leader) to respond to this request. This allows for lower latency and higher " +
    "throughput, but can result in stale data. This option has no effect on non-read operations. Default false.",
};

/** Consul's client flags (`-http-addr`, `-token`) then its server flags (`-datacenter`, `-stale`). */
export const HTTP_API_FLAGS: readonly FlagSpec[] = [HTTP_ADDR_FLAG, TOKEN_FLAG, DATACENTER_FLAG, STALE_FLAG];

export type Env = Readonly<Record<string, string | undefined>>;

/** The `fetch` the client uses; tests may pass their own. `body` and `headers` are only set when needed. */
export type FetchFn = (
  input: string,
  init: { method: string; body?: Uint8Array<ArrayBuffer>; headers?: Readonly<Record<string, string>>; signal?: AbortSignal },
) => Promise<Response>;

/** A query parameter: one value, or several (`?node-meta=a:1&node-meta=b:2`), kept in the given order. */
export type QueryValue = string | readonly string[];
export type Query = Readonly<Record<string, QueryValue>>;

/** What `AgentHttpClient.request` may send. */
export interface AgentRequestOptions {
  readonly query?: Query;
  /** The request body: a string is sent as its UTF-8 bytes. */
  readonly body?: string | Uint8Array;
  /** Statuses besides 200 that resolve instead of rejecting (the KV API's 404 for "no such key"). */
  readonly accept?: readonly number[];
}

/** A whole response, read to the end. */
export interface AgentResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Uint8Array;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body as JSON; throws `invalid JSON from <url>: ...` when it is not. */
  json(): unknown;
}

/** Per-client defaults that Consul's Go client adds to every request (`api.Config`). */
export interface AgentClientDefaults {
  /** `Config.Datacenter`: added as `?dc=` unless the request sets `dc` itself. */
  readonly datacenter?: string;
  /** `Config.Token`: sent as the `X-Consul-Token` header. */
  readonly token?: string;
}

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
  /**
   * Any method, with an optional query and body; resolves to the whole response when its status is 200
   * or in `options.accept`, else rejects with AgentHttpError. A transport failure rejects as for `put`.
   */
  request(method: string, path: string, options?: AgentRequestOptions): Promise<AgentResponse>;
}

/**
 * A client for the agent at `baseUrl` (from `resolveHttpAddr`). Callers escape path segments
 * (`encodeURIComponent`, or `escapeKeyPath`); query parameters are encoded here in sorted key order, as
 * Go's `url.Values.Encode`. A transport failure rejects with `<Method> "<url>": <cause>`. `defaults` adds
 * `?dc=` and the token header to every request, as the Go client does.
 */
export function createAgentHttpClient(baseUrl: string, fetchFn: FetchFn = fetch, defaults: AgentClientDefaults = {}): AgentHttpClient {
  const send = async (method: string, path: string, options: AgentRequestOptions = {}): Promise<AgentResponse> => {
    const query: Record<string, QueryValue> = { ...options.query };
    if (defaults.datacenter && query.dc === undefined) query.dc = defaults.datacenter;
    const url = `${baseUrl}${path}${encodeQuery(query)}`;
    const init: { method: string; body?: Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = { method };
    if (options.body !== undefined) init.body = typeof options.body === "string" ? new TextEncoder().encode(options.body) : new Uint8Array(options.body);
    if (defaults.token) init.headers = { "X-Consul-Token": defaults.token };
    let res: Response;
    let body: Uint8Array;
    try {
      res = await fetchFn(url, init);
      body = new Uint8Array(await res.arrayBuffer());
    } catch (err) {
      throw new Error(`${method[0]}${method.slice(1).toLowerCase()} "${url}": ${transportCause(err)}`);
    }
    const text = () => new TextDecoder().decode(body);
    if (res.status !== 200 && !options.accept?.includes(res.status)) throw new AgentHttpError(res.status, text().trim());
    return {
      status: res.status,
      headers: res.headers,
      body,
      text,
      json() {
        const t = text();
        try {
          return parseExact(t);
        } catch {
          throw new Error(`invalid JSON from ${baseUrl}${path}: ${t.slice(0, 80)}`);
        }
      },
    };
  };
  return {
    baseUrl,
    async getJson(path, query) {
      return (await send("GET", path, { query })).json();
    },
    put: async (path, query) => (await send("PUT", path, { query })).text(),
    request: send,
  };
}

/** `?k=v&...` with keys sorted and repeated values in order, or "" when there are none. */
function encodeQuery(query: Query): string {
  const params = new URLSearchParams();
  for (const key of Object.keys(query).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const value = query[key]!;
    for (const v of typeof value === "string" ? [value] : value) params.append(key, v);
  }
  return params.size > 0 ? `?${params}` : "";
}

/**
 * A KV key (or any slash-separated name) as a URL path: each segment percent-encoded, the slashes kept,
 * so `a/b c?` becomes `a/b%20c%3F` (Go sets `URL.Path` and lets `EscapedPath` do the same).
 */
export function escapeKeyPath(key: string): string {
  return key.split("/").map(encodeURIComponent).join("/");
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

/**
 * A client from the values of `HTTP_API_FLAGS`: the agent address as `agentClientFor`, the `-token` flag
 * (else `HTTP_TOKEN_ENV`) as the token header, `-datacenter` as `?dc=` on every request. Throws (with a
 * message) on a bad address.
 */
export function agentClientFromFlags(values: ReadonlyMap<string, unknown>, deps: HttpCommandDeps): AgentHttpClient {
  const env = deps.env();
  const str = (name: string) => (typeof values.get(name) === "string" ? (values.get(name) as string) : undefined);
  const token = str("token") ?? HTTP_TOKEN_ENV.map((name) => env[name]).find((v) => v !== undefined && v !== "");
  const defaults: AgentClientDefaults = { ...(str("datacenter") ? { datacenter: str("datacenter") } : {}), ...(token ? { token } : {}) };
  return createAgentHttpClient(resolveHttpAddr(str("http-addr"), env), deps.fetch, defaults);
}
