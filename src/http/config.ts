/**
 * The config entry endpoints (Consul 1.8 agent/config_endpoint.go and the ConfigEntry RPCs):
 * PUT /v1/config[?cas=N] (body = one entry; answers true|false), GET /v1/config/:kind (list, [] when
 * none; GET /v1/config/ lists every kind), GET /v1/config/:kind/:name (404 when absent) and
 * DELETE /v1/config/:kind/:name (answers {}).
 *
 * Writes are checked here before anything is proposed: decoding, the entry's own rules and the discovery
 * chain graph it would form with the current entries (Consul's validateProposedConfigEntryInGraph). Every
 * refusal is a 400 with Consul's message and writes nothing. Consul 1.8 answers 500 for refusals that come
 * from its ConfigEntry RPCs (validation, graph, an unknown kind in the path); Causeway answers 400 for all
 * of them, as they are the client's fault (the api client treats any non-200 the same way).
 */
import type { Context, Hono } from "hono";
import {
  CONFIG_ENTRY_KINDS,
  ConfigEntryError,
  ConfigEntryGraphError,
  decodeConfigEntry,
  validateConfigEntry,
  validateDeleteInGraph,
  validateEntryInGraph,
  type ConfigEntry,
  type ConfigEntryKind,
} from "../connect/index.ts";
import { GoError, parseGoJson } from "../lib/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import type { ReadOptions } from "./query_options.ts";
import { readBodyText } from "./body.ts";
import { serveRead, serveWrite, STATE_UNAVAILABLE } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { query } from "./request.ts";
import { badPath, otherMethodsNotAllowed, pathTail } from "./route_params.ts";

const PREFIX = "/v1/config/";

/** structs.MakeConfigEntry: the path's kind, matched exactly; undefined for a kind Causeway does not know. */
function kindOf(raw: string): ConfigEntryKind | undefined {
  return CONFIG_ENTRY_KINDS.find((k) => k === raw);
}

const badKind = (c: Context, kind: string): Response => textError(c, 400, `invalid config entry kind: ${kind}`);

/** `kind[/name]` after the prefix, split once (Go's strings.SplitN(path, "/", 2)); undefined for a bad escape. */
function kindAndName(c: Context): [string, string | undefined] | undefined {
  const tail = pathTail(c, PREFIX);
  if (tail === undefined) return undefined;
  const slash = tail.indexOf("/");
  return slash < 0 ? [tail, undefined] : [tail.slice(0, slash), tail.slice(slash + 1)];
}

/**
 * The answer for a refused entry (400; decoding errors carry Consul's "Request decoding failed: "
 * prefix) or any other failure (errorResponse: a body over its limit, a failed read of the entries).
 */
function refusal(c: Context, err: unknown): Response {
  if (err instanceof GoError) return textError(c, 400, `Request decoding failed: ${err.message}`);
  if (err instanceof ConfigEntryError) {
    return textError(c, 400, err.reason === "decode" ? `Request decoding failed: ${err.message}` : err.message);
  }
  if (err instanceof ConfigEntryGraphError) return textError(c, 400, err.message);
  return errorResponse(c, err);
}

/** A non-blocking read of every config entry, for graph validation before a write. */
async function currentEntries(deps: HttpApiDeps, c: Context): Promise<readonly ConfigEntry[]> {
  const options: ReadOptions = { datacenter: query(c, "dc") || undefined, consistency: "default", minIndex: 0, maxWaitMs: 0 };
  const { value } = await deps.state!.read({ type: "config-entry-list" }, options);
  return value;
}

export function mountConfig(app: Hono, deps: HttpApiDeps): void {
  app.put("/v1/config", async (c) => {
    // Consul: `if casStr := req.URL.Query().Get("cas"); casStr != ""` -- an empty ?cas= is no CAS.
    const casRaw = query(c, "cas") ?? "";
    if (casRaw !== "" && (!/^\d+$/.test(casRaw) || !Number.isSafeInteger(Number(casRaw)))) {
      return textError(c, 400, `Invalid cas value ${JSON.stringify(casRaw)}: must be an unsigned integer`);
    }
    let entry: ConfigEntry;
    try {
      entry = decodeConfigEntry(parseGoJson(await readBodyText(c)));
      validateConfigEntry(entry);
    } catch (err) {
      return refusal(c, err);
    }
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    try {
      validateEntryInGraph(await currentEntries(deps, c), entry);
    } catch (err) {
      return refusal(c, err);
    }
    if (casRaw === "") return serveWrite(c, deps, { type: "config-entry", op: "set", entry }, () => jsonResponse(c, true));
    return serveWrite(c, deps, { type: "config-entry", op: "cas", entry, index: Number(casRaw) }, (r) =>
      jsonResponse(c, r.type === "cas" ? r.ok : true));
  });

  // Hono's `/v1/config/*` also matches `/v1/config`, which Consul serves for PUT only.
  app.all("/v1/config", (c) => textError(c, 405, `method ${c.req.method} not allowed`));

  app.get(`${PREFIX}*`, (c) =>
    serveRead(c, deps, () => {
      const parts = kindAndName(c);
      if (parts === undefined) return badPath(c);
      const [rawKind, name] = parts;
      // GET /v1/config/ (no kind) lists the entries of every kind, as ConfigEntry.List does for Kind "".
      if (rawKind === "" && name === undefined) return { type: "config-entry-list" };
      const kind = kindOf(rawKind);
      if (kind === undefined) return badKind(c, rawKind);
      return name === undefined ? { type: "config-entry-list", kind } : { type: "config-entry-get", kind, name };
    }, (value) => {
      if (Array.isArray(value)) return jsonResponse(c, value);
      if (value === null) {
        const [kind, name] = kindAndName(c)!;
        return textError(c, 404, `Config entry not found for ${JSON.stringify(kind)} / ${JSON.stringify(name)}`);
      }
      return jsonResponse(c, value);
    }));

  app.delete(`${PREFIX}*`, async (c) => {
    const parts = kindAndName(c);
    if (parts === undefined) return badPath(c);
    const [rawKind, name] = parts;
    if (name === undefined) return textError(c, 404, "Must provide both a kind and name to delete");
    const kind = kindOf(rawKind);
    if (kind === undefined) return badKind(c, rawKind);
    if (!deps.state) return textError(c, 500, STATE_UNAVAILABLE);
    try {
      validateDeleteInGraph(await currentEntries(deps, c), kind, name);
    } catch (err) {
      return refusal(c, err);
    }
    return serveWrite(c, deps, { type: "config-entry", op: "delete", kind, name }, () => jsonResponse(c, {}));
  });
  otherMethodsNotAllowed(app, `${PREFIX}*`);
}
