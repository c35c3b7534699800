/**
 * Serf queries (hashicorp/serf serf/query.go, Serf.Query, handleQuery, handleQueryResponse), as a pure
 * engine the Serf layer drives. No I/O and no timers: time comes in as `now`, ids from the injected Rng,
 * and everything to do goes out through the `QueryHost`.
 *
 * A query is processed by the originator itself first, then gossiped (re-broadcast once by every member
 * on first sight, so the core's retransmits carry it past packet loss). Each member processes a
 * `(ltime, id)` once: a ring of `queryBuffer` Lamport slots remembers the ids seen, and queries older
 * than the ring are dropped. A member that passes the filters acks (when asked) and answers directly to
 * the originator's address; the originator collects acks and responses, one of each per member, until
 * the deadline (or until the caller closes it early) and then reports it closed.
 */
import type { Rng } from "../platform/index.ts";
import { encodeQuery, encodeQueryResponse } from "./codec.ts";
import { Lamport } from "./lamport.ts";
import type { Tags } from "./tags.ts";
import type { QueryFilter, QueryMsg, QueryResponseMsg } from "./types.ts";

/** serf QueryParam. `timeoutMs` 0 or absent means the default timeout. */
export interface QueryParams {
  readonly timeoutMs?: number;
  readonly requestAck?: boolean;
  /** Only these members process the query. */
  readonly filterNodes?: readonly string[];
  /** Tag name -> regular expression its value must match. */
  readonly filterTags?: Readonly<Record<string, string>>;
}

/** A query this member received and may answer (with `Serf.respond`) until `deadline`. */
export interface IncomingQuery {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly ltime: number;
  readonly id: number;
  /** The originator's node name and gossip address. */
  readonly from: string;
  readonly addr: string;
  readonly deadline: number;
}

/** A query this member started. Responses are matched to it by `ltime` and `id`. */
export interface StartedQuery { readonly ltime: number; readonly id: number; readonly deadline: number }

/** What the engine reports: user queries to answer, and acks, responses and closing of our own queries. */
export type QueryEvent =
  | { readonly type: "query"; readonly query: IncomingQuery }
  | { readonly type: "query-ack"; readonly ltime: number; readonly id: number; readonly from: string }
  | { readonly type: "query-response"; readonly ltime: number; readonly id: number; readonly from: string; readonly payload: Uint8Array }
  | { readonly type: "query-closed"; readonly ltime: number; readonly id: number };

/** serf Config fields for queries; durations in ms. */
export interface QueryOptions {
  /** Lamport slots remembered for de-duplication (serf QueryBuffer). */
  readonly queryBuffer: number;
  /** Default timeout = gossipIntervalMs * queryTimeoutMult * ceil(log10(n + 1)) (serf DefaultQueryTimeout). */
  readonly queryTimeoutMult: number;
  readonly gossipIntervalMs: number;
  /** Largest encoded query / response (serf QuerySizeLimit / QueryResponseSizeLimit). */
  readonly querySizeLimit: number;
  readonly queryResponseSizeLimit: number;
}

/** serf DefaultConfig: buffer 512, timeout multiplier 16, 1024-byte limits; LAN gossip interval. */
export const QUERY_DEFAULTS: QueryOptions = Object.freeze({
  queryBuffer: 512, queryTimeoutMult: 16, gossipIntervalMs: 200, querySizeLimit: 1024, queryResponseSizeLimit: 1024,
});

/** Prefix of serf's internal queries: handled by the engine's host, never reported as `query` events. */
export const INTERNAL_QUERY_PREFIX = "_serf_";

/** Where the engine's effects go (the Serf layer). */
export interface QueryHost {
  readonly name: string;
  /** The local gossip address, once the core reported it. */
  localAddr(): string | undefined;
  tags(): Tags;
  /** Members alive or suspect, self included (memberlist NumMembers). */
  liveMembers(): number;
  /** Gossip an encoded query; `key` is unique per query. */
  broadcast(key: string, payload: Uint8Array): void;
  /** Send an encoded response straight to member `name` at `addr` (serf SendToAddress with Address.Name). */
  send(addr: string, payload: Uint8Array, name: string): void;
  emit(e: QueryEvent): void;
  /** Answers an internal query: the response payload, or undefined for no response. */
  internal(name: string, payload: Uint8Array, maxPayload: number): Uint8Array | undefined;
}

interface Pending { readonly id: number; readonly deadline: number; readonly acks: Set<string>; readonly responses: Set<string> }

export class QueryEngine {
  private readonly clock = new Lamport();
  /** The query Lamport clock now (serf's query_time). */
  get time(): number {
    return this.clock.time;
  }
  /** Observes a query time heard outside a query (a peer's push-pull state). */
  witness(ltime: number): void {
    this.clock.witness(ltime);
  }
  private readonly seen: ({ ltime: number; ids: number[] } | undefined)[];
  private readonly pending = new Map<number, Pending>();
  /** Queries answered (or still answerable) here: `ltime:id` -> deadline. */
  private readonly answerable = new Map<string, { deadline: number; answered: boolean }>();
  readonly counters = { queries: 0, duplicateQueries: 0, oldQueries: 0, acks: 0, responses: 0, duplicateResponses: 0, strayResponses: 0 };

  constructor(private readonly host: QueryHost, private readonly opts: QueryOptions, private readonly rng: Rng) {
    this.seen = new Array(opts.queryBuffer).fill(undefined);
  }

  /** serf DefaultQueryTimeout for the current number of live members. */
  defaultTimeoutMs(): number {
    return this.opts.gossipIntervalMs * this.opts.queryTimeoutMult * Math.ceil(Math.log10(this.host.liveMembers() + 1));
  }

  /**
   * serf Query: registers the query, processes it locally, and gossips it. Throws RangeError when the
   * encoded query exceeds the size limit, Error before the core reported the local address.
   */
  start(name: string, payload: Uint8Array, params: QueryParams, now: number): StartedQuery {
    const sourceAddr = this.host.localAddr();
    if (sourceAddr === undefined) throw new Error("serf: cannot query before the local member is known");
    const timeoutMs = params.timeoutMs || this.defaultTimeoutMs();
    const filters: QueryFilter[] = [];
    if (params.filterNodes?.length) filters.push({ type: "nodes", nodes: params.filterNodes });
    for (const [tag, expr] of Object.entries(params.filterTags ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) filters.push({ type: "tag", tag, expr });
    const msg: QueryMsg = {
      ltime: this.clock.time, id: this.rng.int(0xffff_ffff), sourceNode: this.host.name, sourceAddr,
      requestAck: params.requestAck ?? false, noBroadcast: false, timeoutMs, filters, name, payload,
    };
    const raw = encodeQuery(msg);
    if (raw.length > this.opts.querySizeLimit) throw new RangeError(`query exceeds limit of ${this.opts.querySizeLimit} bytes`);
    const deadline = now + timeoutMs;
    this.pending.set(msg.ltime, { id: msg.id, deadline, acks: new Set(), responses: new Set() });
    this.receive(msg, raw, now);
    return { ltime: msg.ltime, id: msg.id, deadline };
  }

  /** serf handleQuery: a query gossiped to us (or our own). `raw` is its encoding, re-gossiped on first sight. */
  receive(q: QueryMsg, raw: Uint8Array, now: number): void {
    this.clock.witness(q.ltime);
    const cur = this.clock.time, size = this.seen.length;
    if (cur > size && q.ltime < cur - size) { this.counters.oldQueries++; return; }
    const idx = q.ltime % size;
    let slot = this.seen[idx];
    if (slot?.ltime === q.ltime) {
      if (slot.ids.includes(q.id)) { this.counters.duplicateQueries++; return; }
    } else {
      slot = { ltime: q.ltime, ids: [] };
      this.seen[idx] = slot;
    }
    slot.ids.push(q.id);
    this.counters.queries++;
    if (!q.noBroadcast) this.host.broadcast(`q${q.ltime}:${q.id}`, raw);
    if (!this.passes(q.filters)) return;
    if (q.requestAck) this.deliver(q, { ltime: q.ltime, id: q.id, from: this.host.name, ack: true, payload: new Uint8Array(0) }, now);
    const incoming: IncomingQuery = { name: q.name, payload: q.payload, ltime: q.ltime, id: q.id, from: q.sourceNode, addr: q.sourceAddr, deadline: now + q.timeoutMs };
    this.answerable.set(`${q.ltime}:${q.id}`, { deadline: incoming.deadline, answered: false });
    if (!q.name.startsWith(INTERNAL_QUERY_PREFIX)) {
      this.host.emit({ type: "query", query: incoming });
      return;
    }
    const overhead = encodeQueryResponse({ ltime: q.ltime, id: q.id, from: this.host.name, ack: false, payload: new Uint8Array(0) }).length;
    const answer = this.host.internal(q.name, q.payload, this.opts.queryResponseSizeLimit - overhead);
    if (answer !== undefined) this.respond(incoming, answer, now);
  }

  /**
   * serf Query.Respond: sends our one response to the originator. Throws Error when already answered
   * or past the deadline (serf's messages), RangeError over the response size limit.
   */
  respond(q: IncomingQuery, payload: Uint8Array, now: number): void {
    const key = `${q.ltime}:${q.id}`;
    const state = this.answerable.get(key);
    if (state?.answered) throw new Error("response already sent");
    if (state === undefined || now > state.deadline) throw new Error("response is past the deadline");
    const msg: QueryResponseMsg = { ltime: q.ltime, id: q.id, from: this.host.name, ack: false, payload };
    const raw = encodeQueryResponse(msg);
    if (raw.length > this.opts.queryResponseSizeLimit) throw new RangeError(`response exceeds limit of ${this.opts.queryResponseSizeLimit} bytes`);
    state.answered = true;
    this.deliver({ sourceNode: q.from, sourceAddr: q.addr }, msg, now, raw);
  }

  /** serf handleQueryResponse: an ack or response to one of our queries. Late, stray and repeated ones are dropped. */
  receiveResponse(r: QueryResponseMsg, now: number): void {
    const p = this.pending.get(r.ltime);
    if (p === undefined || p.id !== r.id || now > p.deadline) { this.counters.strayResponses++; return; }
    const seen = r.ack ? p.acks : p.responses;
    if (seen.has(r.from)) { this.counters.duplicateResponses++; return; }
    seen.add(r.from);
    if (r.ack) {
      this.counters.acks++;
      this.host.emit({ type: "query-ack", ltime: r.ltime, id: r.id, from: r.from });
    } else {
      this.counters.responses++;
      this.host.emit({ type: "query-response", ltime: r.ltime, id: r.id, from: r.from, payload: r.payload });
    }
  }

  /** Stops collecting for a query of ours before its deadline (reports `query-closed`). False if it is not open. */
  close(ltime: number): boolean {
    const p = this.pending.get(ltime);
    if (p === undefined) return false;
    this.pending.delete(ltime);
    this.host.emit({ type: "query-closed", ltime, id: p.id });
    return true;
  }

  /** Closes our queries whose deadline passed (in Lamport order) and forgets expired answerable ones. */
  tick(now: number): void {
    for (const [ltime, p] of [...this.pending].sort(([a], [b]) => a - b)) if (now >= p.deadline) this.close(ltime);
    for (const [key, s] of this.answerable) if (now > s.deadline) this.answerable.delete(key);
  }

  /** Earliest deadline of an open query of ours. */
  nextDeadline(): number | undefined {
    let min: number | undefined;
    for (const p of this.pending.values()) if (min === undefined || p.deadline < min) min = p.deadline;
    return min;
  }

  /** Number of our queries still collecting. */
  get open(): number {
    return this.pending.size;
  }

  /** A response to the originator: handled in place when that is us, else sent to its address. */
  private deliver(to: { sourceNode: string; sourceAddr: string }, msg: QueryResponseMsg, now: number, raw?: Uint8Array): void {
    if (to.sourceNode === this.host.name) this.receiveResponse(msg, now);
    else this.host.send(to.sourceAddr, raw ?? encodeQueryResponse(msg), to.sourceNode);
  }

  /** serf shouldProcessQuery: every filter must pass; a bad regular expression fails. */
  private passes(filters: readonly QueryFilter[]): boolean {
    for (const f of filters) {
      if (f.type === "nodes") {
        if (!f.nodes.includes(this.host.name)) return false;
        continue;
      }
      try {
        if (!new RegExp(f.expr).test(this.host.tags()[f.tag] ?? "")) return false;
      } catch {
        return false;
      }
    }
    return true;
  }
}
