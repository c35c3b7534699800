/**
 * Failover of a prepared query to other datacenters (Consul 1.8 queryFailover in
 * agent/consul/prepared_query_endpoint.go): when the local execution found no instance, try the nearest
 * `NearestN` other datacenters, then the listed `Datacenters` (unknown ones skipped, none twice), in order,
 * until one answers with instances.
 */
import type { PreparedQuery, PreparedQueryExecuteResult, PreparedQueryOutcome, QueryDatacenterOptions } from "../../model/index.ts";

/**
 * The datacenters to try, in order: the first `NearestN` of `others` (the other datacenters, nearest
 * first), then each of `Datacenters` that is in `others` and not yet chosen.
 */
export function failoverDatacenters(f: QueryDatacenterOptions, others: readonly string[]): string[] {
  const known = new Set(others);
  const out = f.NearestN > 0 ? others.slice(0, f.NearestN) : [];
  const chosen = new Set(out);
  for (const dc of f.Datacenters ?? []) {
    if (!known.has(dc) || chosen.has(dc)) continue;
    out.push(dc);
    chosen.add(dc);
  }
  return out;
}

/** What executePreparedQuery runs on. */
export interface PreparedQueryExecution {
  /** Resolves and runs the query in the datacenter asked (ordered and limited there). */
  local(): Promise<PreparedQueryOutcome<PreparedQueryExecuteResult>>;
  /** Every known datacenter, nearest first (the local one is skipped here). */
  datacenters(): Promise<readonly string[]>;
  /** Runs the resolved `query` in datacenter `dc` (Consul's ExecuteRemote: shuffled and limited there). */
  remote(dc: string, query: PreparedQuery): Promise<PreparedQueryExecuteResult>;
  /** Hears a datacenter that could not be asked; the failover goes on with the next one. */
  onRemoteError?(dc: string, err: unknown): void;
}

/**
 * Consul's Execute: the local result when it has instances; otherwise each failover datacenter in turn
 * until one has instances. `Failovers` counts the datacenters asked (failed ones too); `Datacenter`,
 * `Nodes`, `Service` and `DNS` are those of the last answer (the local one when none answered). A query
 * that is not found or does not render is returned as it is; a failure to list the datacenters rejects.
 */
export async function executePreparedQuery(x: PreparedQueryExecution): Promise<PreparedQueryOutcome<PreparedQueryExecuteResult>> {
  const local = await x.local();
  if (local.type !== "found" || local.value.Nodes.length > 0) return local;
  const others = (await x.datacenters()).filter((dc) => dc !== local.value.Datacenter);
  const dcs = failoverDatacenters(local.query.Service.Failover, others);
  let reply: PreparedQueryExecuteResult = local.value;
  let failovers = 0;
  for (const dc of dcs) {
    failovers++;
    reply = { ...reply, Nodes: [] };
    try {
      reply = await x.remote(dc, local.query);
    } catch (err) {
      x.onRemoteError?.(dc, err);
      continue;
    }
    if (reply.Nodes.length > 0) break;
  }
  return { ...local, value: { ...reply, Failovers: failovers } };
}
