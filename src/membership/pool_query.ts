/**
 * The pool's side of serf queries: turns the Serf's query events into promises for the originator,
 * hands incoming user queries to subscribers, and runs the key manager (serf KeyManager: install, use,
 * remove, list) on top. Key operations on one pool run one at a time, in call order (serf holds a
 * lock around each).
 */
import { createEventChannel } from "./event_channel.ts";
import type { Cancel, Logger } from "../platform/index.ts";
import { KeyResponseCollector, encodeKeyResponse, keyQuery, type KeyOperation, type KeyResponse } from "./key_query.ts";
import type { IncomingQuery, QueryEvent, QueryParams } from "./query.ts";
import type { Serf } from "./serf.ts";

/** One member's answer to a query. */
export interface NodeResponse { readonly from: string; readonly payload: Uint8Array }

/** Everything a query collected by the time it closed. */
export interface QueryResult { readonly acks: readonly string[]; readonly responses: readonly NodeResponse[] }

export interface PoolQueryOptions extends QueryParams {
  readonly onAck?: (from: string) => void;
  /** Called for each response as it arrives; returning true closes the query early (all expected answers are in). */
  readonly onResponse?: (r: NodeResponse) => boolean | void;
}

export interface PoolQueries {
  /** Routes the Serf's query events (call from the pool's drain, in order). */
  route(events: readonly QueryEvent[]): void;
  query(name: string, payload: Uint8Array, options?: PoolQueryOptions): Promise<QueryResult>;
  subscribe(fn: (q: IncomingQuery) => void): Cancel;
  respond(q: IncomingQuery, payload: Uint8Array): void;
  keyOperation(op: KeyOperation, key?: string): Promise<KeyResponse>;
  /** Resolves every open query with what it has (the pool stopped). */
  stop(): void;
}

interface Open { readonly options: PoolQueryOptions; readonly acks: string[]; readonly responses: NodeResponse[]; readonly resolve: (r: QueryResult) => void }

/**
 * `drain` must drain the Serf's outbox (and route its query events back here); `encrypted` tells
 * whether this pool has a keyring: without one a key-changing operation is answered locally and never
 * gossips the key in clear text.
 */
export function createPoolQueries(o: {
  serf: Serf; now: () => number; drain: () => void; log: Logger; encrypted: boolean; stopped: () => boolean;
}): PoolQueries {
  const { serf, now, drain } = o;
  const open = new Map<number, Open>();
  const incoming = createEventChannel<{ type: "query"; query: IncomingQuery }>(o.log, "gossip query", 64);
  let keyLock: Promise<unknown> = Promise.resolve();

  const settle = (ltime: number) => {
    const q = open.get(ltime);
    if (q === undefined) return;
    open.delete(ltime);
    q.resolve({ acks: q.acks, responses: q.responses });
  };

  const query = (name: string, payload: Uint8Array, options: PoolQueryOptions = {}): Promise<QueryResult> => {
    if (o.stopped()) return Promise.reject(new Error("gossip pool stopped"));
    let resolve!: (r: QueryResult) => void;
    const done = new Promise<QueryResult>((r) => (resolve = r));
    // Our own answer (local processing inside serf.query) waits in the Serf's outbox until `drain`.
    const entry: Open = { options, acks: [], responses: [], resolve };
    const started = serf.query(name, payload, options, now());
    open.set(started.ltime, entry);
    drain();
    return done;
  };

  const keyOperation = async (op: KeyOperation, key?: string): Promise<KeyResponse> => {
    const { name, payload } = keyQuery(op, key);
    const collector = new KeyResponseCollector(serf.liveMembers());
    if (!o.encrypted && op !== "list") {
      collector.add(serf.config.name, encodeKeyResponse({ result: false, message: "No keyring to modify (encryption not enabled)", keys: [], primaryKey: "" }));
      return collector.finish();
    }
    await query(name, payload, { onResponse: (r) => collector.add(r.from, r.payload) });
    return collector.finish();
  };

  return {
    route(events) {
      for (const e of events) {
        if (e.type === "query") {
          incoming.publish([e]);
          continue;
        }
        const q = open.get(e.ltime);
        if (e.type === "query-closed") {
          settle(e.ltime);
        } else if (q !== undefined && e.type === "query-ack") {
          q.acks.push(e.from);
          q.options.onAck?.(e.from);
        } else if (q !== undefined && e.type === "query-response") {
          const r = { from: e.from, payload: e.payload };
          q.responses.push(r);
          let enough = false;
          try {
            enough = q.options.onResponse?.(r) === true;
          } catch (err) {
            o.log.error("query response handler threw", { error: err });
          }
          if (enough) {
            serf.closeQuery(e.ltime); // its query-closed event finds nothing open
            settle(e.ltime);
          }
        }
      }
    },
    // Queries started before the Serf's first events (the core's join of the local member) have no
    // address to be answered at: serf.query throws, and so does this.
    query: (name, payload, options) => {
      try {
        return query(name, payload, options);
      } catch (err) {
        return Promise.reject(err);
      }
    },
    subscribe: (fn) => incoming.subscribe((e) => fn(e.query)),
    respond(q, payload) {
      serf.respond(q, payload, now());
      drain();
    },
    keyOperation(op, key) {
      const run = keyLock.then(() => keyOperation(op, key));
      keyLock = run.catch(() => {});
      return run;
    },
    stop() {
      for (const ltime of [...open.keys()]) settle(ltime);
    },
  };
}
