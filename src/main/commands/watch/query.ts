/**
 * One blocking query of a watch: the request Consul's watch function sends for each type (api/watch/funcs.go
 * through the Go API client, v1.8) and the reading of its answer. The request and the reading are pure;
 * `queryWatch` sends the request through the agent client.
 */
import { goUint64Of } from "../../../lib/index.ts";
import { escapeKeyPath, type AgentHttpClient } from "../support/http_client.ts";
import { pruneEvents, watchResult } from "./results.ts";
import type { WatchSpec } from "./spec.ts";

/**
 * How long each blocking query asks the agent to wait (`?wait=`), sent with every `?index=`. Consul's
 * watch sends none, so a Consul agent waits its default of 5 minutes (plus up to 1/16 jitter); Bun's
 * fetch gives up on a response silent for 300 s (oven-sh/bun#6217, #16682), which would turn every quiet
 * period into an error and a spurious handler run. 4 minutes plus jitter stays under that.
 */
export const BLOCKING_WAIT = "4m";

/** The states Go's `Health.State` accepts; any other fails before a request is sent. */
const HEALTH_STATES = ["any", "warning", "critical", "passing"];

export interface WatchRequest {
  readonly path: string;
  readonly query: Readonly<Record<string, string | readonly string[]>>;
  /** The KV endpoints answer 404 for nothing there: an answer, not an error. */
  readonly accept404: boolean;
}

/**
 * The request for `spec` blocking on `lastIndex` (`?index=` only when it is set and not 0, as the Go
 * client sends it). Throws `Unsupported state: <state>` for a checks watch on a state Go's client refuses
 * (the watch then fails and retries, as Consul's does).
 */
export function watchRequest(spec: WatchSpec, lastIndex: bigint | null): WatchRequest {
  const query: Record<string, string | readonly string[]> = {};
  if (lastIndex !== null && lastIndex !== 0n) {
    query.index = lastIndex.toString();
    query.wait = BLOCKING_WAIT;
  }
  if (spec.type !== "event" && spec.stale) query.stale = "";
  const plain = (path: string): WatchRequest => ({ path, query, accept404: false });
  switch (spec.type) {
    case "key":
      return { path: `/v1/kv/${escapeKeyPath(spec.key.replace(/^\//, ""))}`, query, accept404: true };
    case "keyprefix":
      return { path: `/v1/kv/${escapeKeyPath(spec.prefix.replace(/^\//, ""))}`, query: { ...query, recurse: "" }, accept404: true };
    case "services":
      return plain("/v1/catalog/services");
    case "nodes":
      return plain("/v1/catalog/nodes");
    case "service":
      if (spec.tags.length > 0) query.tag = spec.tags;
      if (spec.passingOnly) query.passing = "1";
      return plain(`/v1/health/service/${encodeURIComponent(spec.service)}`);
    case "checks":
      if (spec.state === "") return plain(`/v1/health/checks/${encodeURIComponent(spec.service)}`);
      if (!HEALTH_STATES.includes(spec.state)) throw new Error(`Unsupported state: ${spec.state}`);
      return plain(`/v1/health/state/${encodeURIComponent(spec.state)}`);
    case "event":
      if (spec.name !== "") query.name = spec.name;
      return plain("/v1/event/list");
  }
}

/** One answer: the index to compare and block on, and the Go API value for the handler. */
export interface WatchAnswer {
  readonly index: bigint;
  readonly result: unknown;
}

/**
 * Reads an answer (`body` the decoded JSON, ignored for a 404): the `X-Consul-Index` header as the index
 * (0 when absent; `Failed to parse X-Consul-Index: ...` when it is not a uint64, as the Go client) and
 * the result; an event list is pruned to the events after the one `lastIndex` came from.
 */
export function readAnswer(spec: WatchSpec, lastIndex: bigint | null, status: number, indexHeader: string | null, body: unknown): WatchAnswer {
  let index = 0n;
  if (indexHeader !== null && indexHeader !== "") {
    const parsed = goUint64Of(indexHeader);
    if (parsed === undefined) throw new Error(`Failed to parse X-Consul-Index: strconv.ParseUint: parsing ${JSON.stringify(indexHeader)}: invalid syntax`);
    index = BigInt(parsed);
  }
  const result = watchResult(spec, status === 404 ? null : body);
  if (spec.type !== "event") return { index, result };
  return { index, result: pruneEvents(result as readonly { ID?: unknown }[] | null, lastIndex) };
}

/** Sends the query for `spec` blocking on `lastIndex` and reads its answer. Rejects as the agent client does. */
export async function queryWatch(client: AgentHttpClient, spec: WatchSpec, lastIndex: bigint | null): Promise<WatchAnswer> {
  const req = watchRequest(spec, lastIndex);
  const res = await client.request("GET", req.path, { query: req.query, accept: req.accept404 ? [404] : [] });
  return readAnswer(spec, lastIndex, res.status, res.headers.get("X-Consul-Index"), res.status === 404 ? null : res.json());
}
