/**
 * The KV store endpoints (Consul's agent/kvs_endpoint.go, v1.8): GET /v1/kv/<key>[?recurse][?keys
 * [&separator=]][?raw], PUT /v1/kv/<key>[?flags][?cas][?acquire|?release=<session>] with the raw value as
 * the body, DELETE /v1/kv/<key>[?recurse][?cas]. Entries are JSON with base64 values.
 */
import { Buffer } from "node:buffer";
import type { Context, Hono } from "hono";
import type { DirEntry, KVWriteVerb } from "../model/index.ts";
import type { HttpApiDeps } from "./deps.ts";
import { hasParam, serveRead, serveWrite, uintParam } from "./read_route.ts";
import { BODY_LIMITS, readBodyBytes } from "./body.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { query } from "./request.ts";
import { pathTail } from "./route_params.ts";

/** A KV entry in Consul's JSON shape (field order as Consul writes it). */
export function dirEntryBody(e: DirEntry): Record<string, unknown> {
  return {
    LockIndex: e.LockIndex,
    Key: e.Key,
    Flags: e.Flags,
    Value: e.Value === null ? null : Buffer.from(e.Value.buffer, e.Value.byteOffset, e.Value.byteLength).toString("base64"),
    ...(e.Session ? { Session: e.Session } : {}),
    CreateIndex: e.CreateIndex,
    ModifyIndex: e.ModifyIndex,
  };
}

/** The key from the path, decoded once like Go's URL.Path; undefined when the escaping is invalid. */
const keyOf = (c: Context): string | undefined => pathTail(c, "/v1/kv/");

const missingKey = (c: Context) => textError(c, 400, "Missing key name");
const badKey = (c: Context) => textError(c, 400, "Invalid key: the path is not valid percent-encoding");

/** Consul's conflictingFlags: at most one of `flags` may be present. */
function conflicting(c: Context, flags: readonly string[]): Response | undefined {
  if (flags.filter((f) => hasParam(c, f)).length < 2) return undefined;
  return textError(c, 400, `Conflicting flags: ${new URL(c.req.url).searchParams.toString()}`);
}

export function mountKv(app: Hono, deps: HttpApiDeps): void {
  app.get("/v1/kv/*", (c) => {
    const key = keyOf(c);
    if (key === undefined) return badKey(c);
    if (hasParam(c, "keys")) {
      const separator = query(c, "separator") ?? query(c, "seperator") ?? "";
      return serveRead(c, deps, () => ({ type: "kv-keys", prefix: key, separator }), (keys) =>
        keys.length === 0 && key !== "" ? c.body(null, 404) : jsonResponse(c, keys));
    }
    if (hasParam(c, "recurse")) {
      return serveRead(c, deps, () => ({ type: "kv-list", prefix: key }), (entries) =>
        entries.length === 0 ? c.body(null, 404) : jsonResponse(c, entries.map(dirEntryBody)));
    }
    if (key === "") return missingKey(c);
    return serveRead(c, deps, () => ({ type: "kv-get", key }), (entry) => {
      if (!entry) return c.body(null, 404);
      if (hasParam(c, "raw")) {
        const value = entry.Value ?? new Uint8Array();
        return c.body(value as Uint8Array<ArrayBuffer>, 200, { "Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" });
      }
      return jsonResponse(c, [dirEntryBody(entry)]);
    });
  });

  app.put("/v1/kv/*", async (c) => {
    const key = keyOf(c);
    if (key === undefined) return badKey(c);
    if (key === "") return missingKey(c);
    const conflict = conflicting(c, ["cas", "acquire", "release"]);
    if (conflict) return conflict;
    const flags = uintParam(c, "flags");
    if (flags instanceof Response) return flags;
    const cas = uintParam(c, "cas");
    if (cas instanceof Response) return cas;
    let op: KVWriteVerb = "set";
    let session: string | undefined;
    if (cas !== undefined) op = "cas";
    if (hasParam(c, "acquire")) [op, session] = ["lock", query(c, "acquire")];
    if (hasParam(c, "release")) [op, session] = ["unlock", query(c, "release")];
    if ((op === "lock" || op === "unlock") && !session) return textError(c, 400, `Missing session ID for ?${op === "lock" ? "acquire" : "release"}`);
    let value: Uint8Array;
    try {
      value = await readBodyBytes(c, BODY_LIMITS.kv, { doc: KV_MAX_VALUE_DOC });
    } catch (err) {
      return errorResponse(c, err);
    }
    // Consul copies the body into a nil bytes.Buffer: an empty body stores no value (GET shows null).
    const stored = value.length === 0 ? null : value;
    return serveWrite(c, deps, { type: "kv", op, entry: { Key: key, Flags: flags ?? 0, Value: stored, Session: session, ModifyIndex: cas } }, (r) =>
      jsonResponse(c, op === "set" ? true : r.type === "kv" ? r.ok : true));
  });

  app.delete("/v1/kv/*", (c) => {
    const key = keyOf(c);
    if (key === undefined) return badKey(c);
    const conflict = conflicting(c, ["recurse", "cas"]);
    if (conflict) return conflict;
    const recurse = hasParam(c, "recurse");
    if (!recurse && key === "") return missingKey(c);
    const cas = uintParam(c, "cas");
    if (cas instanceof Response) return cas;
    const op: KVWriteVerb = cas !== undefined ? "delete-cas" : recurse ? "delete-tree" : "delete";
    return serveWrite(c, deps, { type: "kv", op, entry: { Key: key, ModifyIndex: cas } }, (r) =>
      jsonResponse(c, op === "delete-cas" && r.type === "kv" ? r.ok : true));
  });
}

/** Where Consul's 413 for an oversized value points (agent/kvs_endpoint.go, kv_max_value_size). */
const KV_MAX_VALUE_DOC = "https://www.consul.io/docs/agent/options.html#kv_max_value_size";
