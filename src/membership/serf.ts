/**
 * The serf-like member layer (after hashicorp/serf serf/serf.go), on top of the SWIM core's events.
 * Pure and deterministic like the core: no I/O, no timers; time comes in as `now` (ms, never going
 * backwards) and randomness from the injected Rng. It never calls the core or the server.
 *
 * Driver contract:
 *  - build the Serf first and start the Memberlist with `meta: serf.localMeta` and `serf.stateDelegate`;
 *  - feed every core event, in order, to `handle(event, now)` (the core's own join of the local node too);
 *  - call `tick(now)` at or after `nextDeadline()`;
 *  - after every call drain `outbox()`: deliver `events` to subscribers in order, and execute `requests`
 *    in order: `join` -> `memberlist.join(addresses)`, `update-meta` -> `memberlist.updateMeta(meta)`,
 *    `broadcast` -> `memberlist.broadcastUser(key, payload)`, `leave` -> `memberlist.leave()`.
 *
 * Statuses: alive; leaving (a leave intent was seen: the member announced it is going); left (the core
 * reported a graceful leave, a leaving member then failed, or force-leave); failed (the core declared
 * it dead). Failed members are reaped after `reconnectTimeoutMs`, left ones after `tombstoneTimeoutMs`
 * (`member-reap`); until then every `reconnectIntervalMs` one random failed member may be re-joined,
 * with serf's throttle probability failed/alive, so a healed partition reconverges.
 *
 * Leave/join intents and user events travel as core user messages (Lamport-stamped, deduplicated by
 * key, re-broadcast once on first sight). No event coalescing. Gossip alone may miss a member (each
 * broadcast is sent only retransmit-limit times, to random members), so, as in serf, every push-pull also
 * carries the member, event and query clocks, each member's status Lamport time with the members that left
 * (serf_intents.ts), and the user events of the last `eventWindow` Lamport times (serf delegate LocalState /
 * MergeRemoteState): a member gossip missed learns of the leave or gets the event at its next push-pull,
 * without re-broadcasting it. A join started with `ignoreOldEvents` does not replay the events the
 * cluster had before it (serf Join's ignoreOld).
 *
 * Queries (query.ts) travel the same way; responses go straight to the originator as a `send` request
 * (`memberlist.sendUser(to, key, payload)`). Their events come out separately, in `outbox().queries`.
 * Internal `_serf_*` queries are answered here: the key queries (key_query.ts) change the Keyring given
 * to the constructor (the one the driver encrypts with) and persist it through the injected hook.
 *
 * Network coordinates (serf_coordinates.ts), unless `disableCoordinates`: start the Memberlist with
 * `serf.pingDelegate` as its ping delegate; acks then carry this member's Vivaldi coordinate and
 * direct probes update it. A member's cached coordinate is forgotten when it is reaped.
 */
import type { Rng } from "../platform/index.ts";
import { MAX_META_BYTES } from "./config.ts";
import {
  SERF_QUERY_KIND, SERF_QUERY_RESPONSE_KIND, SerfKind as Kind, decodeQuery, decodeQueryResponse, decodeSerfMsg, decodeSerfPushPull, encodeSerfMsg,
  encodeSerfPushPull, type SerfMsg,
} from "./codec.ts";
import { handleInternalQuery, type KeyringHooks } from "./key_query.ts";
import { Lamport } from "./lamport.ts";
import { QUERY_DEFAULTS, QueryEngine, type IncomingQuery, type QueryEvent, type QueryOptions, type QueryParams, type StartedQuery } from "./query.ts";
import type { Coordinate } from "./coordinate.ts";
import type { PingDelegate, StateDelegate } from "./memberlist.ts";
import { SerfCoordinates } from "./serf_coordinates.ts";
import { SerfEventLog } from "./serf_events.ts";
import { RecentIntents, memberIntents, memberRecords } from "./serf_intents.ts";
import { encodeTags, tryDecodeTags, type Tags } from "./tags.ts";
import type { Member, MemberEvent, QueryMsg, QueryResponseMsg } from "./types.ts";
import { tryDecode } from "./wire.ts";

export type MemberStatus = "alive" | "leaving" | "left" | "failed";

/** A member as the serf layer reports it. Readonly snapshot. */
export interface SerfMember {
  readonly name: string;
  /** Gossip address as the core reports it ("host:port"). */
  readonly addr: string;
  readonly tags: Tags;
  readonly status: MemberStatus;
  /** Time (ms) of the last status change; reaping counts from here. */
  readonly statusChange: number;
}

export type SerfMemberEventType = "member-join" | "member-leave" | "member-failed" | "member-update" | "member-reap";
/** Events for subscribers, in the order they happened. */
export type SerfEvent =
  | { readonly type: SerfMemberEventType; readonly member: SerfMember }
  | { readonly type: "user"; readonly name: string; readonly payload: Uint8Array; readonly ltime: number };

/** Work for the driver to do on the core (see the module contract). */
export type SerfRequest =
  /** A reconnect to failed member `node`: `addresses` in memberlist's `name/addr` form (serf reconnect). */
  | { readonly type: "join"; readonly addresses: readonly string[]; readonly reason: "reconnect"; readonly node: string }
  | { readonly type: "update-meta"; readonly meta: Uint8Array }
  | { readonly type: "broadcast"; readonly key: string; readonly payload: Uint8Array }
  /** Send a user message straight to member `toName` at `to` (query responses): `memberlist.sendUser`. */
  | { readonly type: "send"; readonly to: string; readonly toName: string; readonly key: string; readonly payload: Uint8Array }
  | { readonly type: "leave" };

/** `queries`: query events (query.ts), apart from member and user events so member subscribers never see them. */
export interface SerfOutbox { readonly events: readonly SerfEvent[]; readonly requests: readonly SerfRequest[]; readonly queries: readonly QueryEvent[] }

/**
 * Durations in ms. `reconnectTimeoutMs`: failed members are reaped (and no longer reconnected) after it;
 * `tombstoneTimeoutMs`: left members are reaped after it; `eventWindow`: Lamport window of user events
 * remembered for deduplication (serf EventBuffer); `userEventSizeLimit`: largest name + payload (serf
 * UserEventSizeLimit); `metaLimit`: limit for the encoded tags; `disableCoordinates`: no network
 * coordinates (serf DisableCoordinates; Consul `disable_coordinates`). Query fields: see query.ts.
 */
export interface SerfOptions extends QueryOptions {
  readonly reconnectIntervalMs: number;
  readonly reconnectTimeoutMs: number;
  readonly tombstoneTimeoutMs: number;
  readonly eventWindow: number;
  readonly userEventSizeLimit: number;
  readonly metaLimit: number;
  readonly disableCoordinates: boolean;
}

const HOUR = 3_600_000;
/** serf DefaultConfig: reconnect every 30 s, reconnect timeout 24 h, tombstone 24 h. */
export const SERF_DEFAULTS: SerfOptions = Object.freeze({
  ...QUERY_DEFAULTS,
  reconnectIntervalMs: 30_000, reconnectTimeoutMs: 24 * HOUR, tombstoneTimeoutMs: 24 * HOUR,
  eventWindow: 512, userEventSizeLimit: 512, metaLimit: MAX_META_BYTES, disableCoordinates: false,
});
/** Consul's pools: `reconnect_timeout` and `reconnect_timeout_wan` default to 72 h. */
export const CONSUL_SERF: SerfOptions = Object.freeze({ ...SERF_DEFAULTS, reconnectTimeoutMs: 72 * HOUR });

export interface SerfConfig extends SerfOptions {
  /** Local node name; must equal the Memberlist's name (WAN pool: `<node>.<dc>`). */
  readonly name: string;
  readonly tags: Tags;
}

interface Entry { name: string; addr: string; tags: Tags; status: MemberStatus; statusChange: number; statusLTime: number }

export class Serf {
  readonly config: SerfConfig;
  private readonly table = new Map<string, Entry>();
  private readonly clock = new Lamport();
  private readonly eventLog: SerfEventLog;
  /** Intents about members not (yet) known (serf recentIntents). */
  private readonly recentIntents = new RecentIntents();
  private localTags: Tags;
  private meta: Uint8Array;
  private leaveState: "alive" | "leaving" | "left" = "alive";
  private reconnectAt: number;
  private events: SerfEvent[] = [];
  private requests: SerfRequest[] = [];
  private queryEvents: QueryEvent[] = [];
  private readonly queries: QueryEngine;
  private readonly coords: SerfCoordinates | undefined;
  /** `badRemoteStates`: push-pull states (or events in them) that did not decode, dropped. */
  private readonly counters = { badTags: 0, badUserMessages: 0, badRemoteStates: 0, reconnectAttempts: 0 };
  /** serf delegate LocalState: the member clock and records, the event clock and recent events, the query clock. */
  private readonly pushPull: StateDelegate = {
    localState: () => encodeSerfPushPull({
      memberLTime: this.clock.time, members: memberRecords(this.table.values()), ...this.eventLog.localState(), queryLTime: this.queries.time,
    }),
  };

  /**
   * Throws RangeError for a non-positive duration, TagsTooLargeError/TypeError for tags that do not encode.
   * `keyring` holds the keyring the key queries manage (absent: encryption is off) and its persistence.
   */
  constructor(config: SerfConfig, private readonly rng: Rng, now: number, keyring: KeyringHooks = {}) {
    for (const k of ["reconnectIntervalMs", "reconnectTimeoutMs", "tombstoneTimeoutMs", "eventWindow"] as const) {
      if (!(config[k] > 0)) throw new RangeError(`serf config: ${k} must be > 0`);
    }
    this.config = config;
    this.eventLog = new SerfEventLog(config.eventWindow);
    this.localTags = config.tags;
    this.meta = encodeTags(config.tags, config.metaLimit);
    this.reconnectAt = now + config.reconnectIntervalMs;
    this.coords = config.disableCoordinates ? undefined : new SerfCoordinates(config.name, rng);
    this.queries = new QueryEngine({
      name: config.name,
      localAddr: () => this.table.get(config.name)?.addr,
      tags: () => this.localTags,
      liveMembers: () => this.liveMembers(),
      broadcast: (key, payload) => void this.requests.push({ type: "broadcast", key, payload }),
      send: (to, payload, toName) => void this.requests.push({ type: "send", to, toName, key: "query-response", payload }),
      emit: (e) => void this.queryEvents.push(e),
      internal: (name, payload, max) => handleInternalQuery(name, payload, keyring, max),
    }, config, rng);
  }

  /** Encoded local tags: the `meta` to start the Memberlist with. */
  get localMeta(): Uint8Array { return this.meta; }
  get tags(): Tags { return this.localTags; }
  /** The local instance's lifecycle (serf SerfAlive / SerfLeaving / SerfLeft). */
  get state(): "alive" | "leaving" | "left" { return this.leaveState; }
  /** Member counts (failed/left exclude self) and counters of dropped input and reconnect attempts. */
  get stats() {
    return {
      members: this.table.size, failed: this.withStatus("failed").length, left: this.withStatus("left").length, ...this.counters, queries: { ...this.queries.counters },
      /** The Lamport clocks of member changes, user events and queries, and the intents about unknown members (serf Stats). */
      memberTime: this.clock.time, eventTime: this.eventLog.time, queryTime: this.queries.time, intentQueue: this.recentIntents.size,
      /** Network coordinate counters; undefined when coordinates are disabled. */
      coordinates: this.coords?.stats(),
    };
  }

  /** The ping delegate to start the Memberlist with; undefined when coordinates are disabled. */
  get pingDelegate(): PingDelegate | undefined { return this.coords; }

  /** The push-pull state delegate to start the Memberlist with (serf delegate LocalState; see the module comment). */
  get stateDelegate(): StateDelegate { return this.pushPull; }

  /**
   * serf Join with `ignoreOld` (Consul's joins): call as a join starts, and the returned function once it is
   * over (reached or not). Meanwhile a join push-pull's state raises the floor below which user events are
   * ignored to the peer's event clock, so the events the cluster had before are not replayed here.
   */
  ignoreOldEvents(): () => void {
    return this.eventLog.ignoreOldEvents();
  }

  /** The local network coordinate (serf GetCoordinate); undefined when coordinates are disabled. */
  coordinate(): Coordinate | undefined { return this.coords?.local(); }

  /**
   * The latest coordinate heard from `node` in an ack, or the local one for our own name (serf
   * GetCachedCoordinate); undefined when unknown, reaped, or coordinates are disabled.
   */
  cachedCoordinate(node: string): Coordinate | undefined { return this.coords?.cached(node); }

  /** Every cached coordinate, self included, in name order (a copy); empty when coordinates are disabled. */
  cachedCoordinates(): Map<string, Coordinate> { return this.coords?.all() ?? new Map(); }

  /** Ingests one core event. Malformed tags count in `stats.badTags` and read as `{}`. */
  handle(e: MemberEvent, now: number): void {
    if (e.type === "user") { this.onUser(e.key, e.payload, now); return; }
    if (e.type === "remote-state") { this.mergeRemoteState(e.state, e.join, now); return; }
    const m = e.member;
    const cur = this.table.get(m.name);
    switch (e.type) {
      case "join": {
        const entry: Entry = cur ?? { name: m.name, addr: m.addr, tags: {}, status: "alive", statusChange: now, statusLTime: 0 };
        entry.addr = m.addr;
        entry.tags = this.decode(m);
        this.setStatus(entry, "alive", now);
        const recent = cur === undefined ? this.recentIntents.take(m.name, now) : undefined;
        if (recent !== undefined) {
          entry.statusLTime = recent.ltime;
          if (recent.kind === Kind.LeaveIntent) entry.status = "leaving";
        }
        this.table.set(m.name, entry);
        this.emit("member-join", entry);
        return;
      }
      case "update":
        if (cur === undefined) return; // serf ignores updates for unknown members
        cur.addr = m.addr;
        cur.tags = this.decode(m);
        this.emit("member-update", cur);
        return;
      case "leave":
        if (cur === undefined || cur.status === "left") return;
        this.setStatus(cur, "left", now);
        if (m.name === this.config.name) this.leaveState = "left";
        this.emit("member-leave", cur);
        return;
      case "failed":
        if (cur === undefined || m.name === this.config.name) return;
        if (cur.status === "alive") { this.setStatus(cur, "failed", now); this.emit("member-failed", cur); }
        else if (cur.status === "leaving") { this.setStatus(cur, "left", now); this.emit("member-leave", cur); }
        return;
    }
  }

  /** Reaps expired failed/left members and runs the reconnect schedule. */
  tick(now: number): void {
    this.queries.tick(now);
    this.recentIntents.prune(now);
    for (const e of [...this.table.values()]) {
      if (e.name === this.config.name) continue;
      const limit = e.status === "failed" ? this.config.reconnectTimeoutMs : e.status === "left" ? this.config.tombstoneTimeoutMs : undefined;
      if (limit !== undefined && now - e.statusChange > limit) this.reap(e);
    }
    if (now < this.reconnectAt) return;
    this.reconnectAt = Math.max(this.reconnectAt + this.config.reconnectIntervalMs, now + 1);
    if (this.leaveState !== "alive") return;
    const failed = this.withStatus("failed");
    if (failed.length === 0) return;
    const alive = Math.max(1, this.table.size - failed.length - this.withStatus("left").length);
    if (this.rng.next() > failed.length / alive) return; // serf: each failed member is tried ~once per interval cluster-wide
    const target = failed[this.rng.int(failed.length)]!;
    this.counters.reconnectAttempts++;
    // serf reconnect: `name/addr`, so the core passes the member's name to the transport.
    this.requests.push({ type: "join", addresses: [`${target.name}/${target.addr}`], reason: "reconnect", node: target.name });
  }

  /** Earliest time at which `tick` has work (a reap or a reconnect attempt). */
  nextDeadline(): number {
    let min = Math.min(this.reconnectAt, this.queries.nextDeadline() ?? Infinity);
    for (const e of this.table.values()) {
      if (e.name === this.config.name) continue;
      if (e.status === "failed") min = Math.min(min, e.statusChange + this.config.reconnectTimeoutMs + 1);
      else if (e.status === "left") min = Math.min(min, e.statusChange + this.config.tombstoneTimeoutMs + 1);
    }
    return min;
  }

  /**
   * Replaces the local tags and requests an `update-meta`; the core's resulting "update" event then
   * yields `member-update`. Throws (state unchanged) when the tags do not encode within `metaLimit`.
   */
  setTags(tags: Tags, now: number): Uint8Array {
    void now;
    const meta = encodeTags(tags, this.config.metaLimit);
    this.localTags = tags;
    this.meta = meta;
    this.requests.push({ type: "update-meta", meta });
    return meta;
  }

  /** Graceful leave: status leaving, broadcast a leave intent, then ask the core to leave. Idempotent. */
  leave(now: number): void {
    if (this.leaveState !== "alive") return;
    this.leaveState = "leaving";
    this.sendIntent(Kind.LeaveIntent, this.config.name, now);
  }

  /**
   * serf RemoveFailedNode: a failed member becomes left (member-leave; no more reconnects), an alive one
   * leaving; the intent is broadcast so others agree. With `prune` the member is reaped at once.
   * Returns false for an unknown member.
   */
  forceLeave(node: string, now: number, prune = false): boolean {
    if (node === this.config.name) { this.leave(now); return true; }
    if (!this.table.has(node)) return false;
    this.sendIntent(Kind.LeaveIntent, node, now);
    const e = this.table.get(node);
    if (prune && e !== undefined && e.status === "left") this.reap(e);
    return true;
  }

  /** serf UserEvent: delivered locally as a `user` event and broadcast. Throws RangeError over the size limit. */
  userEvent(name: string, payload: Uint8Array, now: number): void {
    const size = new TextEncoder().encode(name).length + payload.length;
    if (size > this.config.userEventSizeLimit) throw new RangeError(`user event exceeds the ${this.config.userEventSizeLimit}-byte limit (${size} bytes)`);
    const ltime = this.eventLog.stamp();
    const key = `e${ltime}:${this.config.name.length}:${this.config.name}${name}`;
    this.onUser(key, encodeSerfMsg(Kind.Event, ltime, name, payload), now);
  }

  /**
   * serf Query: processes the query locally and gossips it; acks, responses and finally `query-closed`
   * come out in `outbox().queries`. Throws RangeError over the size limit (the query is not sent).
   */
  query(name: string, payload: Uint8Array, params: QueryParams, now: number): StartedQuery {
    return this.queries.start(name, payload, params, now);
  }

  /** serf Query.Respond for a `query` event. Throws when already answered, late, or too large. */
  respond(query: IncomingQuery, payload: Uint8Array, now: number): void {
    this.queries.respond(query, payload, now);
  }

  /** Stops collecting for one of our queries before its deadline (`query-closed` follows). */
  closeQuery(ltime: number): boolean {
    return this.queries.close(ltime);
  }

  /** serf DefaultQueryTimeout: gossip interval * queryTimeoutMult * ceil(log10(live members + 1)). */
  defaultQueryTimeoutMs(): number {
    return this.queries.defaultTimeoutMs();
  }

  /** Members alive or leaving, self included (what memberlist's NumMembers counts). */
  liveMembers(): number {
    return [...this.table.values()].filter((e) => e.status === "alive" || e.status === "leaving").length;
  }

  /** All known members (self included, failed/left until reaped), sorted by name. */
  members(): SerfMember[] {
    return [...this.table.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(snap);
  }
  member(name: string): SerfMember | undefined {
    const e = this.table.get(name);
    return e === undefined ? undefined : snap(e);
  }

  /** Drains events and requests produced since the last call. */
  outbox(): SerfOutbox {
    const out: SerfOutbox = { events: this.events, requests: this.requests, queries: this.queryEvents };
    this.events = [];
    this.requests = [];
    this.queryEvents = [];
    return out;
  }

  private decode(m: Member): Tags {
    const tags = tryDecodeTags(m.meta);
    if (tags === undefined) this.counters.badTags++;
    return tags ?? {};
  }

  private emit(type: SerfMemberEventType, e: Entry): void {
    this.events.push({ type, member: snap(e) });
  }

  /** serf handleReap / eraseNode: forget the member, its latency history and cached coordinate. */
  private reap(e: Entry): void {
    this.table.delete(e.name);
    this.coords?.forget(e.name);
    this.emit("member-reap", e);
  }

  private setStatus(e: Entry, status: MemberStatus, now: number): void {
    e.status = status;
    e.statusChange = now;
  }

  private withStatus(s: MemberStatus): Entry[] {
    return [...this.table.values()].filter((e) => e.status === s && e.name !== this.config.name);
  }

  private sendIntent(kind: Kind, node: string, now: number): void {
    const ltime = this.clock.increment();
    const key = `${kind === Kind.LeaveIntent ? "l" : "j"}${ltime}:${node}`;
    this.onUser(key, encodeSerfMsg(kind, ltime, node, new Uint8Array(0)), now);
    if (kind === Kind.LeaveIntent && node === this.config.name) this.requests.push({ type: "leave" });
  }

  /** Handles a serf message (ours or received); re-broadcasts it when it was news. */
  private onUser(key: string, payload: Uint8Array, now: number): void {
    if (payload[0] === SERF_QUERY_KIND || payload[0] === SERF_QUERY_RESPONSE_KIND) return this.onQueryMessage(payload, now);
    const msg = tryDecode(decodeSerfMsg, payload);
    if (msg === undefined) { this.counters.badUserMessages++; return; }
    const news = msg.kind === Kind.Event ? this.onEvent(key, msg, payload) : this.onIntent(msg, now);
    if (news) this.requests.push({ type: "broadcast", key, payload });
  }

  /** A query (re-gossiped by the engine on first sight) or a response to one of ours. */
  private onQueryMessage(payload: Uint8Array, now: number): void {
    type Decoded = { query: QueryMsg } | { response: QueryResponseMsg };
    const decoded = tryDecode((b): Decoded => (b[0] === SERF_QUERY_KIND ? { query: decodeQuery(b) } : { response: decodeQueryResponse(b) }), payload);
    if (decoded === undefined) { this.counters.badUserMessages++; return; }
    if ("query" in decoded) this.queries.receive(decoded.query, payload, now);
    else this.queries.receiveResponse(decoded.response, now);
  }

  /** serf handleUserEvent: delivers the event when it is news (true). `raw` is its encoded serf message. */
  private onEvent(key: string, m: SerfMsg, raw: Uint8Array): boolean {
    if (!this.eventLog.accept(key, m, raw)) return false;
    this.events.push({ type: "user", name: m.name, payload: m.body, ltime: m.ltime });
    return true;
  }

  /**
   * serf delegate MergeRemoteState: witnesses the peer's member and query clocks (minus one: nothing was sent at
   * them yet), applies the intents its member records stand for (serf_intents.ts), then merges its events
   * (serf_events.ts). Intents and events that are news take effect here but are not re-broadcast.
   */
  private mergeRemoteState(state: Uint8Array, join: boolean, now: number): void {
    const pp = tryDecode(decodeSerfPushPull, state);
    if (pp === undefined) { this.counters.badRemoteStates++; return; }
    if (pp.memberLTime > 0) this.clock.witness(pp.memberLTime - 1);
    if (pp.queryLTime > 0) this.queries.witness(pp.queryLTime - 1);
    for (const intent of memberIntents(pp.members)) this.onIntent(intent, now);
    const merged = this.eventLog.merge(pp, join);
    this.counters.badRemoteStates += merged.bad;
    for (const m of merged.news) this.events.push({ type: "user", name: m.name, payload: m.body, ltime: m.ltime });
  }

  /** serf handleNodeLeaveIntent / handleNodeJoinIntent. */
  private onIntent(m: SerfMsg, now: number): boolean {
    this.clock.witness(m.ltime);
    const e = this.table.get(m.name);
    if (e === undefined) return this.recentIntents.upsert(m.name, m.kind, m.ltime, now);
    if (m.ltime <= e.statusLTime) return false;
    if (m.kind === Kind.JoinIntent) {
      e.statusLTime = m.ltime;
      if (e.status === "leaving") e.status = "alive";
      return true;
    }
    if (m.name === this.config.name && this.leaveState === "alive") { // refute a stale leave intent about us
      this.sendIntent(Kind.JoinIntent, m.name, now);
      return false;
    }
    if (e.status === "alive") { e.status = "leaving"; e.statusLTime = m.ltime; return true; }
    if (e.status === "failed") {
      e.statusLTime = m.ltime;
      this.setStatus(e, "left", now);
      this.emit("member-leave", e); // newer serf: force-leave of a failed member is a leave event
      return true;
    }
    return false;
  }
}

function snap(e: Entry): SerfMember {
  return Object.freeze({ name: e.name, addr: e.addr, tags: e.tags, status: e.status, statusChange: e.statusChange });
}

