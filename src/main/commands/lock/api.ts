/**
 * The KV and session calls of Consul's Go `api` package that api/lock.go and api/semaphore.go make,
 * over the agent client: the same paths, query parameters (`index`, `wait`, `consistent`, `recurse`,
 * `acquire`, `release`, `cas`, `flags`) and answers (404 is "no such key", `true`/`false` bodies).
 * KV flags and indexes are bigints, since the lock flags exceed 2^53.
 */
import { fromBase64, parseExact } from "../../../lib/index.ts";
import { AgentHttpError, escapeKeyPath, type AgentHttpClient, type AgentResponse } from "../support/http_client.ts";
import { durToMsec } from "./core.ts";

/** The fields of a KV entry (api.KVPair) the lock code reads. */
export interface KvPair {
  readonly Key: string;
  readonly Flags: bigint;
  /** null when the API sends none. */
  readonly Value: Uint8Array | null;
  /** "" when the key is not held. */
  readonly Session: string;
  readonly ModifyIndex: bigint;
}

/** A read and its `X-Consul-Index` (QueryMeta.LastIndex), the index to block on next. */
export interface KvRead<T> {
  readonly value: T;
  readonly index: bigint;
}

/** api.QueryOptions as these reads use them. */
export interface ReadOptions {
  /** WaitIndex: sent as `?index=` when not 0. */
  readonly index?: bigint;
  /** WaitTime: sent as `?wait=<ms>ms` when given. */
  readonly waitMs?: number;
  /** RequireConsistent: `?consistent=`. */
  readonly consistent?: boolean;
}

/** An answer that is not the JSON the API promises (the Go client's decodeBody failing). */
export class DecodeError extends Error {}

/**
 * api.IsRetryableError: a 500 from the agent or a failure to reach it; not another status, not a bad
 * body.
 */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof AgentHttpError) return err.statusCode === 500;
  return !(err instanceof DecodeError);
}

export interface LockApi {
  /** Agent().NodeName(): GET /v1/agent/self, Config.NodeName. */
  nodeName(): Promise<string>;
  /** Session().Create: PUT /v1/session/create with `entry` as JSON; resolves to the new ID. */
  createSession(entry: Readonly<Record<string, string>>): Promise<string>;
  /** Session().Renew: the renewed TTL, or undefined when the session is gone (404 or an empty answer). */
  renewSession(id: string): Promise<{ readonly TTL: string } | undefined>;
  /** Session().Destroy. */
  destroySession(id: string): Promise<void>;
  /** KV().Get: the pair or undefined (404). */
  get(key: string, options?: ReadOptions): Promise<KvRead<KvPair | undefined>>;
  /** KV().List: every pair under the prefix (`?recurse=`), [] on 404. */
  list(prefix: string, options?: ReadOptions): Promise<KvRead<KvPair[]>>;
  /** KV().Acquire / Release / CAS: PUT with the flags; resolves to the agent's true or false. */
  acquire(key: string, session: string, flags: bigint): Promise<boolean>;
  release(key: string, session: string, flags: bigint): Promise<boolean>;
  cas(key: string, value: string, flags: bigint, index: bigint): Promise<boolean>;
  /** KV().Delete and DeleteCAS (`?cas=`): DELETE; DeleteCAS resolves to the agent's true or false. */
  delete(key: string): Promise<void>;
  deleteCas(key: string, index: bigint): Promise<boolean>;
}

const kvPath = (key: string) => `/v1/kv/${escapeKeyPath(key)}`;

function json(res: AgentResponse): unknown {
  try {
    return parseExact(res.text());
  } catch (err) {
    throw new DecodeError(`Failed to decode response: ${(err as Error).message}`);
  }
}

function pairOf(raw: unknown): KvPair {
  const e = (raw ?? {}) as { Key?: unknown; Flags?: unknown; Value?: unknown; Session?: unknown; ModifyIndex?: unknown };
  const big = (v: unknown) => (typeof v === "bigint" ? v : typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : 0n);
  let value: Uint8Array | null = null;
  if (typeof e.Value === "string") {
    try {
      value = fromBase64(e.Value);
    } catch (err) {
      throw new DecodeError(`Failed to decode response: ${(err as Error).message}`);
    }
  }
  return { Key: typeof e.Key === "string" ? e.Key : "", Flags: big(e.Flags), Value: value, Session: typeof e.Session === "string" ? e.Session : "", ModifyIndex: big(e.ModifyIndex) };
}

function readQuery(options: ReadOptions): Record<string, string> {
  const query: Record<string, string> = {};
  if (options.index !== undefined && options.index !== 0n) query.index = String(options.index);
  if (options.waitMs !== undefined) query.wait = durToMsec(options.waitMs);
  if (options.consistent) query.consistent = "";
  return query;
}

/** X-Consul-Index as a bigint (0 when absent or not a number). */
function lastIndex(res: AgentResponse): bigint {
  const h = res.headers.get("X-Consul-Index") ?? "";
  return /^\d+$/.test(h) ? BigInt(h) : 0n;
}

/** The calls over `client` (which adds `?dc=` and the token). */
export function createLockApi(client: AgentHttpClient): LockApi {
  const put = async (key: string, query: Record<string, string>, body?: string) =>
    (await client.request("PUT", kvPath(key), { query, ...(body === undefined ? {} : { body }) })).text().includes("true");
  return {
    async nodeName() {
      const self = json(await client.request("GET", "/v1/agent/self")) as { Config?: { NodeName?: unknown } } | null;
      return typeof self?.Config?.NodeName === "string" ? self.Config.NodeName : "";
    },
    async createSession(entry) {
      const out = json(await client.request("PUT", "/v1/session/create", { body: JSON.stringify(entry) })) as { ID?: unknown } | null;
      return typeof out?.ID === "string" ? out.ID : "";
    },
    async renewSession(id) {
      const res = await client.request("PUT", `/v1/session/renew/${encodeURIComponent(id)}`, { accept: [404] });
      if (res.status === 404) return undefined;
      const entries = json(res) as Array<{ TTL?: unknown }> | null;
      const first = entries?.[0];
      return first ? { TTL: typeof first.TTL === "string" ? first.TTL : "" } : undefined;
    },
    async destroySession(id) {
      await client.request("PUT", `/v1/session/destroy/${encodeURIComponent(id)}`);
    },
    async get(key, options = {}) {
      const res = await client.request("GET", kvPath(key), { query: readQuery(options), accept: [404] });
      if (res.status === 404) return { value: undefined, index: lastIndex(res) };
      const entries = json(res) as unknown[] | null;
      return { value: entries && entries.length > 0 ? pairOf(entries[0]) : undefined, index: lastIndex(res) };
    },
    async list(prefix, options = {}) {
      const res = await client.request("GET", kvPath(prefix), { query: { ...readQuery(options), recurse: "" }, accept: [404] });
      if (res.status === 404) return { value: [], index: lastIndex(res) };
      return { value: ((json(res) as unknown[] | null) ?? []).map(pairOf), index: lastIndex(res) };
    },
    acquire: (key, session, flags) => put(key, { acquire: session, ...flagsQuery(flags) }),
    release: (key, session, flags) => put(key, { release: session, ...flagsQuery(flags) }),
    cas: (key, value, flags, index) => put(key, { cas: String(index), ...flagsQuery(flags) }, value),
    async delete(key) {
      await client.request("DELETE", kvPath(key));
    },
    async deleteCas(key, index) {
      return (await client.request("DELETE", kvPath(key), { query: { cas: String(index) } })).text().includes("true");
    },
  };
}

/** `?flags=` as the Go client sends it: only when not 0. */
function flagsQuery(flags: bigint): Record<string, string> {
  return flags === 0n ? {} : { flags: String(flags) };
}
