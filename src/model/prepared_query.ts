/**
 * Prepared queries in Consul 1.8's wire shape (agent/structs/prepared_query.go): the stored query, the
 * source of an execution and the execution's result. Go's nil slices and maps are `null` on the wire.
 */
import type { CheckServiceNode, RaftIndex } from "./catalog.ts";

/** Where to fail over when the local datacenter has no healthy instance (QueryDatacenterOptions). */
export interface QueryDatacenterOptions {
  /** How many of the nearest other datacenters (by RTT) to try; 0: none. */
  readonly NearestN: number;
  /** Datacenters to try after the NearestN ones, in order; each datacenter is tried once at most. */
  readonly Datacenters: readonly string[] | null;
}

/** DNS options of a query (QueryDNSOptions): TTL is a Go duration string or "". */
export interface QueryDNSOptions {
  readonly TTL: string;
}

/** The service lookup a query runs (ServiceQuery). */
export interface ServiceQuery {
  readonly Service: string;
  readonly Failover: QueryDatacenterOptions;
  /** Only instances whose every (not ignored) check passes; otherwise warning passes too. */
  readonly OnlyPassing: boolean;
  /** Checks that do not count when judging an instance's health. */
  readonly IgnoreCheckIDs: readonly string[] | null;
  /** A node to sort near ("_agent": the agent that asked; "_ip": the node with the request's source IP). */
  readonly Near: string;
  /** Tags every instance must have; "!tag": must not have (case-insensitive). */
  readonly Tags: readonly string[] | null;
  readonly NodeMeta: Readonly<Record<string, string>> | null;
  readonly ServiceMeta: Readonly<Record<string, string>> | null;
  /** Only Connect-capable instances (proxies of the service and native instances). */
  readonly Connect: boolean;
}

/** The template type Consul knows (QueryTemplateTypeNamePrefixMatch). */
export const QUERY_TEMPLATE_NAME_PREFIX_MATCH = "name_prefix_match";

/** A query's template options (QueryTemplateOptions); Type "" means not a template. */
export interface QueryTemplateOptions {
  readonly Type: string;
  /** A Go (RE2) regular expression run over the full name; its groups are `${match(N)}`. */
  readonly Regexp: string;
  /** Drop empty strings from Service.Tags after interpolation. */
  readonly RemoveEmptyTags: boolean;
}

/** A stored prepared query (PreparedQuery). */
export interface PreparedQuery extends RaftIndex {
  readonly ID: string;
  readonly Name: string;
  /** A session the query lives and dies with ("" for none). */
  readonly Session: string;
  readonly Token: string;
  readonly Template: QueryTemplateOptions;
  readonly Service: ServiceQuery;
  readonly DNS: QueryDNSOptions;
}

/** Who an execution is for (QuerySource): the agent asking, or the `?near=` node and source IP. */
export interface QuerySource {
  readonly Datacenter: string;
  readonly Segment: string;
  readonly Node: string;
  readonly Ip: string;
}

/** The result of running a query (PreparedQueryExecuteResponse without its QueryMeta). */
export interface PreparedQueryExecuteResult {
  readonly Service: string;
  readonly Nodes: readonly CheckServiceNode[];
  readonly DNS: QueryDNSOptions;
  /** The datacenter the nodes came from. */
  readonly Datacenter: string;
  /** How many other datacenters were asked. */
  readonly Failovers: number;
}

/**
 * How a prepared-query read went: the query resolved (rendered when it is a template) and, for an
 * execution, its local result; `not-found` (Consul's ErrQueryNotFound, "Query not found"); or `error`
 * with Consul's text (a template that fails to render, a template looked up by ID).
 */
export type PreparedQueryOutcome<T> =
  | { readonly type: "found"; readonly query: PreparedQuery; readonly value: T }
  | { readonly type: "not-found" }
  | { readonly type: "error"; readonly error: string };

/** Consul's ErrQueryNotFound text. */
export const QUERY_NOT_FOUND = "Query not found";
