/**
 * The prepared-query reads a server answers (Consul 1.8 agent/consul/prepared_query_endpoint.go Explain,
 * Execute without its failover, and ExecuteRemote): resolve the ID or name in the state store, render a
 * template (src/connect), run the service lookup and the query's filters, order and cut the result. The
 * failover to other datacenters is the caller's: it reads `prepared-query-execute-remote` there.
 */
import {
  compileTemplate, executeQuery, isTemplate, nearSource, orderLocalResult, orderRemoteResult, renderTemplate, TemplateError,
} from "../connect/index.ts";
import type { PreparedQuery, PreparedQueryExecuteResult, PreparedQueryOutcome, QuerySource, Reads } from "../model/index.ts";
import { healthServiceNodes, preparedQueryResolve, type QueryResult, type StateStore, type WatchSet } from "../state/index.ts";

/** What the execution reads need from the serving server. */
export interface PreparedQueryContext {
  /** The serving server's datacenter: results are stamped with it. */
  readonly datacenter: string;
  /** A number in [0, 1) for the shuffle; without it the order is the store's. */
  readonly random?: () => number;
  /**
   * Round-trip times from `node` to other nodes in ms, or undefined when `node` has no coordinate (then no
   * distance sort is done, as in Consul). run_read passes the state store's coordinates.
   */
  readonly rttFrom?: (node: string) => ((other: string) => number | undefined) | undefined;
}

/** Consul's PreparedQueryResolve plus rendering: the query an ID or name stands for, as `agent` asks it. */
export function resolvePreparedQuery(store: StateStore, ws: WatchSet, idOrName: string, agent: QuerySource): QueryResult<PreparedQueryOutcome<null>> {
  const { index, value } = preparedQueryResolve(store, ws, idOrName);
  if (value.type !== "found") return { index, value };
  if (!isTemplate(value.query)) return { index, value: { type: "found", query: value.query, value: null } };
  try {
    return { index, value: { type: "found", query: renderTemplate(compileTemplate(value.query), idOrName, agent), value: null } };
  } catch (err) {
    if (err instanceof TemplateError) return { index, value: { type: "error", error: err.message } };
    throw err;
  }
}

/** Consul's execute(): the query's filtered instances in this datacenter, Connect-capable ones when asked. */
function runQuery(store: StateStore, ws: WatchSet, query: PreparedQuery, connect: boolean, ctx: PreparedQueryContext): PreparedQueryExecuteResult {
  const instances = healthServiceNodes(store, ws, query.Service.Service, { passingOnly: false, connect: query.Service.Connect || connect }).value;
  return executeQuery(query, instances, ctx.datacenter);
}

/** The node registered at `ip` (Consul's `_ip` lookup over every node, in name order). */
function nodeByAddress(store: StateStore, ip: string): string | undefined {
  for (const key of store.db.nodeKeys()) {
    const n = store.db.nodes.get(key)!;
    if (n.Address === ip) return n.Node;
  }
  return undefined;
}

/** The `prepared-query-execute` read. */
export function executePreparedQueryRead(
  store: StateStore,
  ws: WatchSet,
  args: Reads["prepared-query-execute"]["args"],
  ctx: PreparedQueryContext,
): QueryResult<PreparedQueryOutcome<PreparedQueryExecuteResult>> {
  const { index, value } = resolvePreparedQuery(store, ws, args.idOrName, args.agent);
  if (value.type !== "found") return { index, value };
  const result = runQuery(store, ws, value.query, args.connect, ctx);
  const source = nearSource(value.query, args.source, args.agent, (ip) => nodeByAddress(store, ip));
  const ordered = orderLocalResult(result, { source, limit: args.limit, random: ctx.random, rttFrom: ctx.rttFrom });
  return { index, value: { type: "found", query: value.query, value: ordered } };
}

/** The `prepared-query-execute-remote` read (Consul's ExecuteRemote). */
export function executeRemoteRead(
  store: StateStore,
  ws: WatchSet,
  args: Reads["prepared-query-execute-remote"]["args"],
  ctx: PreparedQueryContext,
): QueryResult<PreparedQueryExecuteResult> {
  const result = runQuery(store, ws, args.query, args.connect, ctx);
  return { index: store.lastIndex(), value: orderRemoteResult(result, { limit: args.limit, random: ctx.random }) };
}
