/**
 * The State service: replicated writes and reads over internal RPC, with Consul's routing (writes
 * proposed where they arrive, carried to the leader by Raft; default reads on the leader, stale reads anywhere, consistent reads on any server after a ReadIndex
 * round, other datacenters forwarded) and blocking queries. Commands, queries and results are opaque bytes: the backend (the state store's
 * codec, wired in by src/main) gives them meaning.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type ConnectRouter, type HandlerContext, type Transport } from "@connectrpc/connect";
import {
  ApplyResponseSchema, Consistency as WireConsistency, QueryResponseSchema, RenewSessionResponseSchema, SetCAConfigurationResponseSchema,
  SignIntermediateResponseSchema, SignLeafResponseSchema, State,
} from "../gen/causeway/state/v1/state_pb.ts";
import { AbortError, abortable, throwIfAborted } from "./abort.ts";
import { route, type RpcContext } from "./forward.ts";

/**
 * The metadata carrying the ACL token of the request a call serves (Consul's `x-consul-token`); "" is
 * the serving server's default token.
 */
export const TOKEN_HEADER = "x-consul-token";

/**
 * The token a call is made with: over the network, its TOKEN_HEADER ("" when it has none: nobody is
 * trusted for leaving it out); in process, the caller's `given` token, where undefined marks this
 * server's own duties, which ACLs do not restrict.
 */
const tokenOf = (call: HandlerContext | undefined, given: string | undefined) => (call ? call.requestHeader.get(TOKEN_HEADER) ?? "" : given);

const withToken = (headers: Headers, token: string | undefined) => {
  if (token !== undefined) headers.set(TOKEN_HEADER, token);
  return headers;
};

/** Consul's read consistency modes. */
export type Consistency = "default" | "stale" | "consistent";

/** What the State service runs on the server that serves a request. */
export interface StateBackend {
  /**
   * Replicates `command` through Raft (from any server) and resolves with the encoded result once applied
   * here. Refusals of the request itself, before anything is proposed, are ConnectErrors the client maps
   * to HTTP statuses: ResourceExhausted when its Raft entry would exceed the entry limit (413),
   * InvalidArgument when a restore's snapshot fails its checks (400); Unavailable when no leader took it.
   */
  apply(command: Uint8Array, token?: string): Promise<Uint8Array>;
  /**
   * Runs `query` against local state: returns at once when its index exceeds `minIndex` (or minIndex is
   * 0), otherwise when what it read changes or after `maxWaitMs`, with the result as of then. When
   * `signal` aborts it stops waiting and releases its watch and timer (resolving or rejecting: the State
   * service rejects its own caller with an AbortError at the abort either way).
   */
  query(query: Uint8Array, options: { readonly minIndex: number; readonly maxWaitMs: number; readonly signal?: AbortSignal; readonly token?: string }): Promise<{ result: Uint8Array; index: number }>;
  /** Resolves once everything committed before the call is applied locally (ReadIndex). */
  linearizableRead(): Promise<void>;
  /**
   * On the leader: restarts session `id`'s TTL timer; the encoded session, or an empty array when unknown.
   * `token` as for `apply` (here and below: undefined is this server's own duty).
   */
  renewSession(id: string, token?: string): Promise<Uint8Array>;
  /**
   * Signs a leaf for `service` with this server's copy of the active CA root; the encoded IssuedCert.
   * Rejects (message for the client) when the CA is not initialised yet.
   */
  /** Signs `csrPem` (a CSR for `service`'s SPIFFE ID) with the active root; the encoded IssuedCert. */
  signLeaf(service: string, csrPem: string, token?: string): Promise<Uint8Array>;
  /** On the leader: applies an encoded CAConfiguration (rotating the root when asked); an empty result. */
  setCAConfiguration(config: Uint8Array, token?: string): Promise<Uint8Array>;
  /** In a primary datacenter: signs a secondary's intermediate CSR with the active root; the certificate PEM. */
  signIntermediate(csrPem: string, token?: string): Promise<string>;
  /**
   * Where an encoded command must be applied: "leader" for commands only the leader may check before
   * proposing (lock acquisitions, against lock-delays), "local" for the rest (any server proposes; Raft
   * carries a follower's proposal to the leader). Absent: "local".
   */
  applyPolicy?(command: Uint8Array): "local" | "leader";
}

export interface QueryOptions {
  readonly datacenter?: string;
  readonly consistency?: Consistency;
  readonly minIndex?: number;
  readonly maxWaitMs?: number;
  /**
   * Cancels the read: the query rejects with an AbortError (name "AbortError") as soon as it aborts
   * (at once when it already has). A local blocking wait stops and releases its watch and timer; a
   * forwarded or cross-datacenter call is cancelled on the wire (RST_STREAM CANCEL: the pooled
   * connection stays open for other calls), which also ends the serving server's wait.
   */
  readonly signal?: AbortSignal;
  /** The ACL token the read is made with (see TOKEN_HEADER). */
  readonly token?: string;
}

export interface QueryOutcome {
  readonly result: Uint8Array;
  /** The result's index, at least 1 (X-Consul-Index). */
  readonly index: number;
  /** Whether the serving server knew a leader (X-Consul-KnownLeader). */
  readonly knownLeader: boolean;
  /** Milliseconds since the serving server heard from the leader; 0 on the leader (X-Consul-LastContact). */
  readonly lastContactMs: number;
}

/** Reads and writes of the replicated state, from wherever the caller is. */
export interface StateCaller {
  /** Applies `command` as the holder of `token` (see TOKEN_HEADER). */
  apply(command: Uint8Array, datacenter?: string, token?: string): Promise<Uint8Array>;
  /** Reads (blocking when `minIndex` is given); `options.signal` cancels it with an AbortError. */
  query(query: Uint8Array, options?: QueryOptions): Promise<QueryOutcome>;
  /** The calls below, like `apply`, are made as the holder of `token`. */
  renewSession(id: string, datacenter?: string, token?: string): Promise<Uint8Array>;
  signLeaf(service: string, csrPem: string, datacenter?: string, token?: string): Promise<Uint8Array>;
  /** Has `datacenter`'s CA (the primary's) sign a secondary's intermediate CSR; resolves the certificate PEM. */
  signIntermediate(csrPem: string, datacenter?: string, token?: string): Promise<string>;
  setCAConfiguration(config: Uint8Array, datacenter?: string, token?: string): Promise<Uint8Array>;
}

/** Extra time a forwarded blocking call is given beyond its wait, so the server answers before the caller gives up. */
const FORWARD_SLACK_MS = 30_000;

const toWire = (c: Consistency | undefined) =>
  c === "stale" ? WireConsistency.STALE : c === "consistent" ? WireConsistency.CONSISTENT : WireConsistency.DEFAULT;
const fromWire = (c: WireConsistency): Consistency =>
  c === WireConsistency.STALE ? "stale" : c === WireConsistency.CONSISTENT ? "consistent" : "default";

/**
 * The State service's logic on a server, usable in-process (call undefined: the local HTTP API) and
 * behind the RPC handler. Forwarding uses the context's pool.
 */
export function createServerStateCaller(ctx: RpcContext, backend: StateBackend): StateCaller & {
  handleApply(command: Uint8Array, datacenter: string | undefined, call: HandlerContext | undefined, token?: string): Promise<Uint8Array>;
  handleQuery(query: Uint8Array, options: QueryOptions, call: HandlerContext | undefined): Promise<QueryOutcome>;
  handleRenew(id: string, datacenter: string | undefined, call: HandlerContext | undefined, token?: string): Promise<Uint8Array>;
  handleSignLeaf(service: string, csrPem: string, datacenter: string | undefined, call: HandlerContext | undefined, token?: string): Promise<Uint8Array>;
  handleSetCAConfiguration(config: Uint8Array, datacenter: string | undefined, call: HandlerContext | undefined, token?: string): Promise<Uint8Array>;
  handleSignIntermediate(csrPem: string, datacenter: string | undefined, call: HandlerContext | undefined, token?: string): Promise<string>;
} {
  // Writes are proposed where they arrive: Raft itself carries a follower's proposal to the leader.
  const handleApply = (command: Uint8Array, datacenter: string | undefined, call: HandlerContext | undefined, given?: string) => {
    const token = tokenOf(call, given);
    return route(ctx, datacenter, backend.applyPolicy?.(command) ?? "local", call, () => backend.apply(command, token), (t, headers) => remoteApply(t, command, datacenter, withToken(headers, token)));
  };
  // Consul sends ?consistent reads to the leader, which confirms its leadership with a quorum first.
  // A follower's own ReadIndex round (through the leader) gives the same linearizable read point
  // without moving the query and its result across the network, so any server serves them here.
  const policyOf = (c: Consistency | undefined) => (c === "stale" || c === "consistent" ? "local" : "leader");
  const handleQuery = async (query: Uint8Array, options: QueryOptions, call: HandlerContext | undefined) => {
    const { signal } = options;
    const token = tokenOf(call, options.token);
    throwIfAborted(signal);
    return route(ctx, options.datacenter, policyOf(options.consistency), call, async () => {
      if (options.consistency === "consistent") {
        if (!ctx.raft.status().leader && ctx.holdForLeader) await abortable(ctx.holdForLeader(), signal);
        if (!ctx.raft.status().leader) throw new ConnectError("No cluster leader", Code.Unavailable);
        await abortable(backend.linearizableRead(), signal);
      }
      // The backend releases its wait on abort; abortable answers the abort even if it resolves instead.
      const minIndex = options.minIndex ?? 0;
      ctx.metrics?.query.add();
      if (minIndex > 0) ctx.metrics?.blockingQueries(1);
      const read = backend.query(query, { minIndex, maxWaitMs: options.maxWaitMs ?? 0, signal, ...(token !== undefined ? { token } : {}) });
      let answer: Awaited<typeof read>;
      try {
        answer = await abortable(read, signal);
      } finally {
        if (minIndex > 0) ctx.metrics?.blockingQueries(-1);
      }
      const { result, index } = answer;
      const status = ctx.raft.status();
      return {
        result,
        index: Math.max(1, index),
        knownLeader: status.leader !== "",
        lastContactMs: status.lastLeaderContactMs ?? 0,
      };
    }, (t, headers) => remoteQuery(t, query, options, withToken(headers, token)), signal);
  };
  const handleRenew = (id: string, datacenter: string | undefined, call: HandlerContext | undefined, given?: string) => {
    const token = tokenOf(call, given);
    return route(ctx, datacenter, "leader", call, () => backend.renewSession(id, token), (t, headers) => remoteRenew(t, id, datacenter, withToken(headers, token)));
  };
  // Every server holds the roots and the signing key in its replicated state, so any one signs.
  const handleSignLeaf = (service: string, csrPem: string, datacenter: string | undefined, call: HandlerContext | undefined, given?: string) => {
    const token = tokenOf(call, given);
    return route(ctx, datacenter, "local", call, () => backend.signLeaf(service, csrPem, token), (t, headers) => remoteSignLeaf(t, service, csrPem, datacenter, withToken(headers, token)));
  };
  const handleSetCAConfiguration = (config: Uint8Array, datacenter: string | undefined, call: HandlerContext | undefined, given?: string) => {
    const token = tokenOf(call, given);
    return route(ctx, datacenter, "leader", call, () => backend.setCAConfiguration(config, token), (t, headers) => remoteSetCAConfiguration(t, config, datacenter, withToken(headers, token)));
  };
  // Like leaves: every server of the primary holds the root key, so any one signs.
  const handleSignIntermediate = (csrPem: string, datacenter: string | undefined, call: HandlerContext | undefined, given?: string) => {
    const token = tokenOf(call, given);
    return route(ctx, datacenter, "local", call, () => backend.signIntermediate(csrPem, token), (t, headers) => remoteSignIntermediate(t, csrPem, datacenter, withToken(headers, token)));
  };
  return {
    handleApply,
    handleQuery,
    handleRenew,
    handleSignLeaf,
    handleSetCAConfiguration,
    handleSignIntermediate,
    signIntermediate: (csrPem, datacenter, token) => handleSignIntermediate(csrPem, datacenter, undefined, token),
    signLeaf: (service, csrPem, datacenter, token) => handleSignLeaf(service, csrPem, datacenter, undefined, token),
    setCAConfiguration: (config, datacenter, token) => handleSetCAConfiguration(config, datacenter, undefined, token),
    apply: (command, datacenter, token) => handleApply(command, datacenter, undefined, token),
    query: (query, options = {}) => handleQuery(query, options, undefined),
    renewSession: (id, datacenter, token) => handleRenew(id, datacenter, undefined, token),
  };
}

/** Registers the State service on a server's RPC router. */
export function registerStateService(router: ConnectRouter, server: ReturnType<typeof createServerStateCaller>): void {
  router.service(State, {
    apply: async (req, call) =>
      create(ApplyResponseSchema, { result: await server.handleApply(req.command, req.routing?.datacenter, call) }),
    query: async (req, call) => {
      const out = await server.handleQuery(req.query, {
        datacenter: req.routing?.datacenter,
        consistency: fromWire(req.consistency),
        minIndex: Number(req.minIndex),
        maxWaitMs: Number(req.maxWaitMs),
        // The caller cancelling (or going away) ends the wait here, and any call this one forwarded.
        signal: call.signal,
      }, call);
      return create(QueryResponseSchema, {
        result: out.result,
        index: BigInt(out.index),
        knownLeader: out.knownLeader,
        lastContactMs: BigInt(Math.max(0, Math.round(out.lastContactMs))),
      });
    },
    renewSession: async (req, call) =>
      create(RenewSessionResponseSchema, { result: await server.handleRenew(req.sessionId, req.routing?.datacenter, call) }),
    signLeaf: async (req, call) =>
      create(SignLeafResponseSchema, { result: await server.handleSignLeaf(req.service, req.csr, req.routing?.datacenter, call) }),
    setCAConfiguration: async (req, call) =>
      create(SetCAConfigurationResponseSchema, { result: await server.handleSetCAConfiguration(req.config, req.routing?.datacenter, call) }),
    signIntermediate: async (req, call) =>
      create(SignIntermediateResponseSchema, { certificate: await server.handleSignIntermediate(req.csr, req.routing?.datacenter, call) }),
  });
}

/**
 * A client agent's view: every call goes to a server of its own datacenter (`transport`, any server),
 * which serves or forwards it. Consul's clients never talk to other datacenters directly.
 */
export function createRemoteStateCaller(transport: () => Transport): StateCaller {
  return {
    apply: (command, datacenter, token) => remoteApply(transport(), command, datacenter, withToken(new Headers(), token)),
    query: (query, options = {}) => remoteQuery(transport(), query, options, withToken(new Headers(), options.token)),
    renewSession: (id, datacenter, token) => remoteRenew(transport(), id, datacenter, withToken(new Headers(), token)),
    signLeaf: (service, csrPem, datacenter, token) => remoteSignLeaf(transport(), service, csrPem, datacenter, withToken(new Headers(), token)),
    setCAConfiguration: (config, datacenter, token) => remoteSetCAConfiguration(transport(), config, datacenter, withToken(new Headers(), token)),
    signIntermediate: (csrPem, datacenter, token) => remoteSignIntermediate(transport(), csrPem, datacenter, withToken(new Headers(), token)),
  };
}

async function remoteSignIntermediate(t: Transport, csr: string, datacenter: string | undefined, headers: Headers): Promise<string> {
  const res = await createClient(State, t).signIntermediate({ routing: { datacenter: datacenter ?? "" }, csr }, { headers, timeoutMs: FORWARD_SLACK_MS });
  return res.certificate;
}

async function remoteApply(t: Transport, command: Uint8Array, datacenter: string | undefined, headers: Headers): Promise<Uint8Array> {
  const res = await createClient(State, t).apply({ routing: { datacenter: datacenter ?? "" }, command }, { headers, timeoutMs: FORWARD_SLACK_MS });
  return res.result;
}

async function remoteRenew(t: Transport, sessionId: string, datacenter: string | undefined, headers: Headers): Promise<Uint8Array> {
  const res = await createClient(State, t).renewSession({ routing: { datacenter: datacenter ?? "" }, sessionId }, { headers, timeoutMs: FORWARD_SLACK_MS });
  return res.result;
}

async function remoteSignLeaf(t: Transport, service: string, csr: string, datacenter: string | undefined, headers: Headers): Promise<Uint8Array> {
  const res = await createClient(State, t).signLeaf({ routing: { datacenter: datacenter ?? "" }, service, csr }, { headers, timeoutMs: FORWARD_SLACK_MS });
  return res.result;
}

async function remoteSetCAConfiguration(t: Transport, config: Uint8Array, datacenter: string | undefined, headers: Headers): Promise<Uint8Array> {
  const res = await createClient(State, t).setCAConfiguration({ routing: { datacenter: datacenter ?? "" }, config }, { headers, timeoutMs: FORWARD_SLACK_MS });
  return res.result;
}

/**
 * The query on another server. ConnectRPC cancels the call when `options.signal` aborts (RST_STREAM
 * with CANCEL, whether the stream is open yet or still waiting for the pool's connection), which leaves
 * the HTTP/2 session to the pool; its Canceled error becomes an AbortError here.
 */
async function remoteQuery(t: Transport, query: Uint8Array, options: QueryOptions, headers: Headers): Promise<QueryOutcome> {
  const maxWaitMs = options.maxWaitMs ?? 0;
  const { signal } = options;
  try {
    const res = await createClient(State, t).query({
      routing: { datacenter: options.datacenter ?? "" },
      query,
      minIndex: BigInt(options.minIndex ?? 0),
      maxWaitMs: BigInt(maxWaitMs),
      consistency: toWire(options.consistency),
    }, { headers, timeoutMs: maxWaitMs + FORWARD_SLACK_MS, signal });
    return { result: res.result, index: Number(res.index), knownLeader: res.knownLeader, lastContactMs: Number(res.lastContactMs) };
  } catch (err) {
    if (signal?.aborted) throw new AbortError();
    throw err;
  }
}

/** Whether an error from the State service means no leader could serve it (Consul answers 500 "No cluster leader"). */
export function isNoLeaderError(err: unknown): boolean {
  return err instanceof ConnectError && err.code === Code.Unavailable;
}
