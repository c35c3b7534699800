/**
 * The prepared query endpoints (Consul 1.8 agent/prepared_query_endpoint.go over
 * agent/consul/prepared_query_endpoint.go): POST/GET /v1/query, GET/PUT/DELETE /v1/query/:id,
 * GET /v1/query/:idOrName/execute and /explain.
 *
 * Writes are checked here (Consul's parseQuery and template compilation, src/connect) before anything is
 * proposed; the state store checks names, sessions and existence. The new ID is chosen here (deps.newId),
 * as Consul's leader does before Raft. An execution resolves and runs the query in the datacenter asked
 * (`prepared-query-execute`), then, with no instance there, fails over through `?dc`-forwarded reads of
 * the resolved query (`prepared-query-execute-remote`, Consul's ExecuteRemote). Refusals Consul answers
 * with 500 are 400 here; an unknown query is 404 "Query not found".
 */
import type { Context, Hono } from "hono";
import {
  compileTemplate, executePreparedQuery, isTemplate, parseQueryError, PREPARED_QUERY_INVALID_PREFIX, TemplateError,
} from "../connect/index.ts";
import { decodeGoStruct, formatIp, GoError, map, parseGoJson, parseIp, slice, struct } from "../lib/index.ts";
import {
  QUERY_NOT_FOUND, type PreparedQuery, type PreparedQueryExecuteResult, type PreparedQueryOutcome, type QuerySource,
} from "../model/index.ts";
import type { PreparedQueryWrite } from "../state/index.ts";
import { readBodyText } from "./body.ts";
import type { HttpApiDeps } from "./deps.ts";
import { parseReadOptions, setQueryMeta, type QueryMeta, type ReadOptions } from "./query_options.ts";
import { serveRead, serveWrite, STATE_UNAVAILABLE } from "./read_route.ts";
import { errorResponse, jsonResponse, textError } from "./respond.ts";
import { query } from "./request.ts";
import { badPath, decodeMessage, pathTail } from "./route_params.ts";

const STR = "string";
const QUERY_STRUCT = struct("structs.PreparedQuery", {
  ID: STR, Name: STR, Session: STR, Token: STR,
  Template: struct("structs.QueryTemplateOptions", { Type: STR, Regexp: STR, RemoveEmptyTags: "bool" }),
  Service: struct("structs.ServiceQuery", {
    Service: STR,
    Failover: struct("structs.QueryDatacenterOptions", { NearestN: "int", Datacenters: slice(STR) }),
    OnlyPassing: "bool", IgnoreCheckIDs: slice(STR), Near: STR, Tags: slice(STR), NodeMeta: map(STR), ServiceMeta: map(STR), Connect: "bool",
  }),
  DNS: struct("structs.QueryDNSOptions", { TTL: STR }),
  CreateIndex: "uint64", ModifyIndex: "uint64",
}).struct;

type Raw<T> = { -readonly [K in keyof T]?: T[K] extends object | null ? Raw<T[K]> | null : T[K] };

/** A request body as structs.PreparedQuery (Go's zero values for what is absent); throws GoError. */
export function preparedQueryOf(body: string): PreparedQueryWrite {
  const raw = body.trim() === "" ? {} : decodeGoStruct<Raw<PreparedQuery>>(parseGoJson(body), QUERY_STRUCT);
  const t = raw.Template ?? {}, s = raw.Service ?? {}, f = s.Failover ?? {};
  return {
    ID: raw.ID ?? "",
    Name: raw.Name ?? "",
    Session: raw.Session ?? "",
    Token: raw.Token ?? "",
    Template: { Type: t.Type ?? "", Regexp: t.Regexp ?? "", RemoveEmptyTags: t.RemoveEmptyTags ?? false },
    Service: {
      Service: s.Service ?? "",
      Failover: { NearestN: f.NearestN ?? 0, Datacenters: (f.Datacenters as string[] | null | undefined) ?? null },
      OnlyPassing: s.OnlyPassing ?? false,
      IgnoreCheckIDs: (s.IgnoreCheckIDs as string[] | null | undefined) ?? null,
      Near: s.Near ?? "",
      Tags: (s.Tags as string[] | null | undefined) ?? null,
      NodeMeta: (s.NodeMeta as Record<string, string> | null | undefined) ?? null,
      ServiceMeta: (s.ServiceMeta as Record<string, string> | null | undefined) ?? null,
      Connect: s.Connect ?? false,
    },
    DNS: { TTL: raw.DNS?.TTL ?? "" },
  };
}

/** Consul's Apply checks for a create or update: parseQuery, then the template compilation of the state store. */
export function preparedQueryError(q: PreparedQueryWrite): string | undefined {
  const invalid = parseQueryError({ ...q, CreateIndex: 0, ModifyIndex: 0 });
  if (invalid) return PREPARED_QUERY_INVALID_PREFIX + invalid;
  if (!isTemplate(q)) return undefined;
  try {
    compileTemplate({ ...q, CreateIndex: 0, ModifyIndex: 0 });
    return undefined;
  } catch (err) {
    if (err instanceof TemplateError) return `failed compiling template: ${err.message}`;
    throw err;
  }
}

/** Reads and checks a create/update body; a Response for a bad one. */
async function bodyQuery(c: Context): Promise<PreparedQueryWrite | Response> {
  try {
    return preparedQueryOf(await readBodyText(c));
  } catch (err) {
    if (err instanceof GoError) return textError(c, 400, `Request decode failed: ${decodeMessage(err)}`);
    return errorResponse(c, err);
  }
}

/** The client's address as Consul's sourceAddrFromRequest sees it: X-Forwarded-For's first IP, else the peer's. */
function sourceIp(c: Context): string {
  const canonical = (s: string) => {
    try {
      return formatIp(parseIp(s.trim()));
    } catch {
      return "";
    }
  };
  const forwarded = canonical((c.req.header("X-Forwarded-For") ?? "").split(",")[0] ?? "");
  if (forwarded) return forwarded;
  const env = c.env as { remoteAddress?: unknown } | undefined;
  return typeof env?.remoteAddress === "string" ? canonical(env.remoteAddress) : "";
}

/** The ID or name of `/v1/query/<id>[/execute|/explain]`, or a Response for a bad path. */
function idOf(c: Context, suffix = ""): string | Response {
  const tail = pathTail(c, "/v1/query/");
  if (tail === undefined) return badPath(c);
  return suffix && tail.endsWith(suffix) ? tail.slice(0, -suffix.length) : tail;
}

/** QueryMeta as Consul's execute/explain bodies embed it (LastContact in ns, ConsistencyLevel). */
function queryMetaBody(meta: QueryMeta, options: ReadOptions): Record<string, unknown> {
  return {
    Index: 0,
    LastContact: Math.round(meta.lastContactMs * 1e6),
    KnownLeader: meta.knownLeader,
    ConsistencyLevel: options.consistency === "default" ? "leader" : options.consistency,
  };
}

/** `?limit=` (Go's strconv.Atoi); Consul answers 500 "Bad limit: ..." for a bad one, we 400. */
function limitOf(c: Context): number | Response {
  const raw = query(c, "limit");
  if (raw === undefined || raw === "") return 0;
  if (!/^[+-]?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) return textError(c, 400, `Bad limit: strconv.Atoi: parsing ${JSON.stringify(raw)}: invalid syntax`);
  return Number(raw);
}

/** The agent's QuerySource and the client's (`?near=`, `_agent` resolved here as Consul's parseSource does). */
function sources(c: Context, deps: HttpApiDeps): { agent: QuerySource; source: QuerySource } {
  const near = query(c, "near") ?? "";
  const agent = { Datacenter: deps.agent.datacenter, Segment: "", Node: deps.agent.nodeName, Ip: "" };
  const source = { Datacenter: query(c, "dc") ?? "", Segment: "", Node: near === "_agent" ? deps.agent.nodeName : near, Ip: sourceIp(c) };
  return { agent, source };
}

/** Answers a resolution that did not find (404) or failed (400). */
function unresolved(c: Context, outcome: Exclude<PreparedQueryOutcome<unknown>, { type: "found" }>): Response {
  return outcome.type === "not-found" ? textError(c, 404, QUERY_NOT_FOUND) : textError(c, 400, outcome.error);
}

export function mountQuery(app: Hono, deps: HttpApiDeps): void {
  app.post("/v1/query", async (c) => {
    const q = await bodyQuery(c);
    if (q instanceof Response) return q;
    if (q.ID !== "") return textError(c, 400, "ID must be empty when creating a new prepared query");
    if (!deps.newId) return textError(c, 500, "Prepared query IDs cannot be generated on this agent");
    const created = { ...q, ID: deps.newId() };
    const bad = preparedQueryError(created);
    if (bad) return textError(c, 400, bad);
    return serveWrite(c, deps, { type: "prepared-query", op: "create", query: created }, () => jsonResponse(c, { ID: created.ID }));
  });
  app.get("/v1/query", (c) => serveRead(c, deps, () => ({ type: "prepared-query-list" }), (queries) => jsonResponse(c, [...queries])));
  app.all("/v1/query", (c) => textError(c, 405, `method ${c.req.method} not allowed`));

  app.get("/v1/query/*", (c) => {
    const path = new URL(c.req.url).pathname;
    if (path.endsWith("/execute")) return execute(c, deps);
    if (path.endsWith("/explain")) return explain(c, deps);
    return serveRead(c, deps, () => {
      const id = idOf(c);
      return id instanceof Response ? id : { type: "prepared-query-get", id };
    }, (q) => (q ? jsonResponse(c, [q]) : textError(c, 404, QUERY_NOT_FOUND)));
  });

  app.put("/v1/query/*", async (c) => {
    const id = idOf(c);
    if (id instanceof Response) return id;
    if (/\/(execute|explain)$/.test(new URL(c.req.url).pathname)) return textError(c, 405, `method ${c.req.method} not allowed`);
    const q = await bodyQuery(c);
    if (q instanceof Response) return q;
    const updated = { ...q, ID: id };
    const bad = preparedQueryError(updated);
    if (bad) return textError(c, 400, bad);
    return serveWrite(c, deps, { type: "prepared-query", op: "update", query: updated }, () => c.body(null, 200));
  });

  app.delete("/v1/query/*", (c) => {
    const id = idOf(c);
    if (id instanceof Response) return id;
    if (/\/(execute|explain)$/.test(new URL(c.req.url).pathname)) return textError(c, 405, `method ${c.req.method} not allowed`);
    return serveWrite(c, deps, { type: "prepared-query", op: "delete", id }, () => c.body(null, 200));
  });
  app.all("/v1/query/*", (c) => textError(c, 405, `method ${c.req.method} not allowed`));
}

/** Reads the options of a non-blocking query endpoint (execute, explain); a Response for bad ones. */
function nonBlockingOptions(c: Context, deps: HttpApiDeps): ReadOptions | Response {
  try {
    return { ...parseReadOptions(c, deps.random ?? (() => 0.5)), minIndex: 0, maxWaitMs: 0 };
  } catch (err) {
    return errorResponse(c, err);
  }
}

/** What execute and explain share: the state, non-blocking options, the ID or name and `?limit`; or a Response. */
function executionRequest(c: Context, deps: HttpApiDeps, suffix: string) {
  const state = deps.state;
  if (!state) return textError(c, 500, STATE_UNAVAILABLE);
  const options = nonBlockingOptions(c, deps);
  if (options instanceof Response) return options;
  const id = idOf(c, suffix);
  if (id instanceof Response) return id;
  const limit = limitOf(c);
  if (limit instanceof Response) return limit;
  return { state, options, id, limit };
}

async function explain(c: Context, deps: HttpApiDeps): Promise<Response> {
  const req = executionRequest(c, deps, "/explain");
  if (req instanceof Response) return req;
  const { state, options, id } = req;
  try {
    const { value, meta } = await state.read({ type: "prepared-query-explain", idOrName: id, agent: sources(c, deps).agent }, options);
    setQueryMeta(c, meta);
    if (value.type !== "found") return unresolved(c, value);
    return jsonResponse(c, { Query: value.query, ...queryMetaBody(meta, options) });
  } catch (err) {
    return errorResponse(c, err);
  }
}

async function execute(c: Context, deps: HttpApiDeps): Promise<Response> {
  const req = executionRequest(c, deps, "/execute");
  if (req instanceof Response) return req;
  const { state, options, id, limit } = req;
  const connect = query(c, "connect") !== undefined && query(c, "connect") !== "false";
  const { agent, source } = sources(c, deps);
  let meta: QueryMeta | undefined;
  let outcome: PreparedQueryOutcome<PreparedQueryExecuteResult>;
  try {
    outcome = await executePreparedQuery({
      local: async () => {
        const r = await state.read({ type: "prepared-query-execute", idOrName: id, agent, source, limit, connect }, options);
        meta = r.meta;
        return r.value;
      },
      datacenters: async () => {
        if (!deps.catalog) throw new Error("The datacenters are not known on this agent");
        return deps.catalog.datacenters();
      },
      remote: async (dc, resolved) =>
        (await state.read({ type: "prepared-query-execute-remote", query: resolved, limit, connect }, { ...options, datacenter: dc })).value,
    });
  } catch (err) {
    return errorResponse(c, err);
  }
  if (meta) setQueryMeta(c, meta);
  if (outcome.type !== "found") return unresolved(c, outcome);
  const r = outcome.value;
  return jsonResponse(c, {
    Service: r.Service, Nodes: [...r.Nodes], DNS: r.DNS, Datacenter: r.Datacenter, Failovers: r.Failovers,
    ...(meta ? queryMetaBody(meta, options) : {}),
  });
}
