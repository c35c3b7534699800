/**
 * Gossip keyring operator endpoint, `/v1/operator/keyring`
 * (https://developer.hashicorp.com/consul/api-docs/operator/keyring), answering as Consul's
 * agent/operator_endpoint.go OperatorKeyringEndpoint does: GET lists, POST installs, PUT changes the
 * primary key, DELETE removes, each on every gossip pool the agent manages.
 */
import type { Context, Hono } from "hono";
import type { KeyringApi, KeyringPoolResult } from "./deps.ts";
import { GoError, parseGoJson } from "../lib/index.ts";
import { readBodyText } from "./body.ts";
import { errorResponse, jsonResponse } from "./respond.ts";
import { query } from "./request.ts";

/** What the route answers (500) when the agent has no keyring management (gossip not running). */
export const KEYRING_UNAVAILABLE = "Keyring operations are not available: gossip is not running on this agent";

/**
 * GET/POST/PUT/DELETE /v1/operator/keyring. Write bodies are `{"Key": "<base64>"}`. Success is 200 with
 * the pools as a JSON array for GET and an empty body otherwise; a request body that does not decode or
 * a malformed key is 400; an operation that every node refused is 400, and one that failed otherwise on
 * any pool 500, with Consul's multi-error text
 * (`<dc> (LAN) error: ...` or `WAN error: ...`, then `<node>: <message>` lines). `relay-factor` is
 * validated like Consul's (0 to 5) and otherwise ignored: responses are not relayed.
 */
export function mountKeyring(app: Hono, keyring: KeyringApi | undefined): void {
  const path = "/v1/operator/keyring";
  app.get(path, async (c) => {
    const bad = relayFactorError(c);
    if (bad) return plain(c, 400, bad);
    if (!keyring) return plain(c, 500, KEYRING_UNAVAILABLE);
    return run(c, () => keyring.list(), true);
  });
  for (const [method, op] of [["post", "install"], ["put", "use"], ["delete", "remove"]] as const) {
    app.on(method.toUpperCase(), path, async (c) => {
      let body: unknown;
      try {
        // Go's json decoder: "EOF" for an empty body, its scanner's words for bad JSON.
        body = parseGoJson(await readBodyText(c));
      } catch (err) {
        if (err instanceof GoError) return plain(c, 400, `Request decode failed: ${err.message}`);
        return errorResponse(c, err, plain);
      }
      const key = typeof body === "object" && body !== null ? (body as Record<string, unknown>).Key : undefined;
      if (key !== undefined && typeof key !== "string") return plain(c, 400, "Request decode failed: Key must be a string");
      const bad = relayFactorError(c) ?? keyError(key ?? "");
      if (bad) return plain(c, 400, bad);
      if (!keyring) return plain(c, 500, KEYRING_UNAVAILABLE);
      return run(c, () => keyring[op](key as string), false);
    });
  }
}

async function run(c: Context, op: () => Promise<readonly KeyringPoolResult[]>, list: boolean): Promise<Response> {
  let results: readonly KeyringPoolResult[];
  try {
    results = await op();
  } catch (err) {
    return errorResponse(c, err, plain);
  }
  const errors = keyringErrors(results);
  if (errors) return plain(c, refusedByEveryNode(results) ? 400 : 500, errors);
  return list ? jsonResponse(c, results.map(poolBody)) : c.body(null, 200);
}

/** One pool in Consul 1.8's JSON shape (Messages omitted when empty, maps in sorted key order as Go writes them). */
export function poolBody(r: KeyringPoolResult): Record<string, unknown> {
  const messages = Object.keys(r.messages).length > 0 ? { Messages: sorted(r.messages) } : {};
  return { WAN: r.wan, Datacenter: r.datacenter, Segment: r.segment, ...messages, Keys: sorted(r.keys), NumNodes: r.numNodes };
}

/**
 * Consul's keyringErrorsOrNil formatted as hashicorp/go-multierror prints it, or "" when no pool
 * reported an error.
 */
export function keyringErrors(results: readonly KeyringPoolResult[]): string {
  const errs: string[] = [];
  for (const r of results) {
    if (r.error === "") continue;
    let pool = r.wan ? "WAN" : `${r.datacenter} (LAN)`;
    if (r.segment !== "") pool += ` [segment: ${r.segment}]`;
    errs.push(`${pool} error: ${r.error}`);
    for (const [node, message] of Object.entries(sorted(r.messages))) errs.push(`${node}: ${message}`);
  }
  if (errs.length === 0) return "";
  const head = errs.length === 1 ? "1 error occurred:" : `${errs.length} errors occurred:`;
  return `${head}\n\t* ${errs.join("\n\t* ")}\n\n`;
}

/**
 * Whether every pool that failed did so because each of its nodes refused the operation ("n/n nodes
 * reported failure": removing the primary key, using a key that is not installed, no encryption). Such
 * a request is at fault and answered 400 (Consul: 500); a partial failure (nodes that did not answer,
 * or some that did the operation) stays a 500.
 */
function refusedByEveryNode(results: readonly KeyringPoolResult[]): boolean {
  return results.every((r) => {
    if (r.error === "") return true;
    const m = /^(\d+)\/(\d+) nodes reported failure$/.exec(r.error);
    return m !== null && m[1] === m[2];
  });
}

/** Consul's relay-factor parsing (strconv.Atoi, then ParseRelayFactor). */
function relayFactorError(c: Context): string | undefined {
  const raw = query(c, "relay-factor");
  if (raw === undefined || raw === "") return undefined;
  if (!/^[+-]?\d+$/.test(raw)) return `Error parsing relay factor: strconv.Atoi: parsing "${raw}": invalid syntax`;
  const n = Number(raw);
  return n < 0 || n > 5 ? "Invalid relay-factor: Relay factor must be in range: [0, 5]" : undefined;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Why `key` is not a gossip key (standard padded base64 of 16, 24 or 32 bytes), in the words of Go's
 * decoder and memberlist's ValidateKey; undefined when it is one.
 */
export function keyError(key: string): string | undefined {
  const bad = [...key].findIndex((ch) => !/[A-Za-z0-9+/=]/.test(ch));
  if (bad >= 0 || !BASE64.test(key)) return `Invalid key: illegal base64 data at input byte ${bad >= 0 ? bad : key.indexOf("=")}`;
  if (key.length % 4 !== 0) return `Invalid key: illegal base64 data at input byte ${key.length - (key.length % 4)}`;
  const pad = key.endsWith("==") ? 2 : key.endsWith("=") ? 1 : 0;
  const size = (key.length / 4) * 3 - pad;
  return size === 16 || size === 24 || size === 32 ? undefined : "Invalid key: key size must be 16, 24 or 32 bytes";
}

function sorted<T>(o: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Consul writes handler errors as the bare text. */
function plain(c: Context, status: number, message: string): Response {
  return c.body(message, status as 500, { "Content-Type": "text/plain; charset=utf-8" });
}
