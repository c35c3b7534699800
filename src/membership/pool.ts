/**
 * One gossip pool (Consul's LAN or WAN serf): a transport, the SWIM core, its driver and the
 * serf-like member layer, wired together and ready for the agent.
 *
 * Wiring (serf.ts "Driver contract"): the Serf is built first and the Memberlist starts with
 * `meta: serf.localMeta` and the Serf's ping and push-pull state delegates; every core event from the
 * driver goes, in order, to `serf.handle`; `serf.tick` runs at `serf.nextDeadline()` on the injected
 * Clock; after every call into the Serf its outbox is drained: events go to subscribers in order,
 * requests run in order on the driver (`join` -> a reconnect push-pull, `update-meta`, `broadcast`, `leave`).
 *
 * No runtime globals: time comes from the Clock, randomness from the Rng (it also draws encryption
 * nonces, so it must be a CSPRNG such as `cryptoRng()` in production).
 */
import { createEventChannel } from "./event_channel.ts";
import type { Cancel, Clock, Logger, Rng } from "../platform/index.ts";
import { PROFILES, memberlistConfig, type ProfileName, type Timing } from "./config.ts";
import { hostOf } from "./consul_tags.ts";
import { createGossipDriver, type GossipDriver, type GossipDriverStats } from "./driver.ts";
import type { KeyResponse } from "./key_query.ts";
import type { Keyring } from "./keyring.ts";
import { Memberlist } from "./memberlist.ts";
import { createPoolQueries, type PoolQueryOptions, type QueryResult } from "./pool_query.ts";
import type { IncomingQuery } from "./query.ts";
import { SERF_DEFAULTS, Serf, type MemberStatus, type SerfEvent, type SerfOptions, type SerfRequest } from "./serf.ts";
import type { Coordinate } from "./coordinate.ts";
import type { Tags } from "./tags.ts";
import type { GossipTransport } from "./transport.ts";
import { createUdpTransport, parseHostPort, withDefaultPort } from "./transport_udp.ts";

export interface GossipPoolOptions {
  /** Node name in this pool (WAN: `<node>.<dc>`); unique in the pool. */
  readonly name: string;
  /** Timing profile: Consul `gossip_lan`, `gossip_wan`, or the loopback/test profile. */
  readonly profile: ProfileName;
  /** Address and port to bind UDP and TCP to (port 0 picks a free one). Ignored when `transport` is given. */
  readonly bindHost: string;
  readonly bindPort: number;
  /** Host others reach this node at (`-advertise`); default `bindHost`. Ignored when `transport` is given. */
  readonly advertiseHost?: string;
  /** Initial serf tags (Consul: `serverTags` / `clientTags`). Must encode within the meta limit. */
  readonly tags: Tags;
  /**
   * Enables gossip encryption: the primary key encrypts, every installed key decrypts. The key
   * operations (`installKey`, ...) change it in place, cluster-wide.
   */
  readonly keyring?: Keyring;
  /** serf KeyringFile: called after each change of `keyring` by a key operation; a throw is reported as this member's error. */
  readonly persistKeyring?: (keyring: Keyring) => void;
  /** memberlist Label: authenticated, unencrypted; pools with different labels do not talk. */
  readonly label?: string;
  readonly clock: Clock;
  readonly rng: Rng;
  readonly logger: Logger;
  /**
   * Serf options over `SERF_DEFAULTS` (Consul passes `CONSUL_SERF`); `disableCoordinates: true` turns
   * network coordinates off (acks carry none, `coordinate()` is undefined).
   */
  readonly serf?: Partial<SerfOptions>;
  /**
   * serf LeavePropagateDelay: after the leave was transmitted, keep running this long (answering
   * probes, relaying) before stopping, so the leave reaches everyone; default 1000 ms (serf's default).
   */
  readonly leavePropagateDelayMs?: number;
  /** Timing overrides over the profile. */
  readonly timing?: Partial<Timing>;
  /** Bound transport to use instead of UDP/TCP (tests: the in-memory network). The pool owns and closes it. */
  readonly transport?: GossipTransport;
}

/** A member as the pool reports it. `addr` is the host only; `port` 0 when the address has none. */
export interface PoolMember {
  readonly name: string;
  readonly addr: string;
  readonly port: number;
  readonly tags: Tags;
  readonly status: MemberStatus;
  /** Smoothed round-trip time of direct probes from this agent, ms; undefined for itself or before the first probe. */
  readonly rttMs?: number;
}

export interface GossipPoolStats {
  readonly members: Readonly<Record<MemberStatus, number>>;
  readonly serf: Serf["stats"];
  readonly gossip: GossipDriverStats;
  /** Lifeguard local health (memberlist's health score): 0 is healthy. */
  readonly healthScore: number;
  /** Whether gossip is encrypted. */
  readonly encrypted: boolean;
  /** Reconnect joins that reached the failed member / that failed. */
  readonly reconnectsOk: number;
  readonly reconnectsFailed: number;
}

export interface GossipPool {
  /** Name of the local node. */
  readonly name: string;
  /** `host:port` advertised to the other members. */
  readonly localAddr: string;
  /** Every known member, self included, failed/left ones until reaped; sorted by name. */
  members(): readonly PoolMember[];
  /**
   * serf Join: push-pull with each address (the local one is skipped). Resolves with the number
   * reached; rejects with an Error naming every failure when none was reached (also for an empty list
   * or after `leave`/`stop`). Like Consul's JoinLAN/JoinWAN it ignores old events: the user events the
   * cluster had before are not replayed here.
   */
  join(addresses: readonly string[]): Promise<number>;
  /**
   * Graceful leave (serf Leave): broadcasts a leave intent and the core's leave, waits until they
   * were transmitted (bounded by the profile's `leavePropagateMs`), keeps answering for
   * `leavePropagateDelayMs` so the news spreads, then stops the pool. Idempotent; later calls get the
   * same promise.
   */
  leave(): Promise<void>;
  /**
   * serf RemoveFailedNode (`consul force-leave`): a failed member becomes left (member-leave, no more
   * reconnects), and the intent is gossiped; `prune` reaps it at once. The local name means `leave()`.
   * False for an unknown member.
   */
  forceLeave(node: string, prune?: boolean): boolean;
  /** Replaces the local tags and gossips them (others see member-update). Throws if they do not encode. */
  setTags(tags: Tags): void;
  /** serf UserEvent: delivered locally and gossiped. Throws RangeError over the size limit. */
  userEvent(name: string, payload: Uint8Array): void;
  /**
   * serf Query: gossips a query and resolves, at its timeout (default: serf DefaultQueryTimeout) or
   * when `onResponse` returns true, with the acks and responses collected (one per member). Rejects
   * over the 1024-byte size limit or after `stop`.
   */
  query(name: string, payload: Uint8Array, options?: PoolQueryOptions): Promise<QueryResult>;
  /** Queries from other members (not serf's internal ones), to answer with `respond`. */
  subscribeQueries(fn: (q: IncomingQuery) => void): Cancel;
  /** serf Query.Respond. Throws when already answered, past the deadline, or over 1024 bytes. */
  respond(query: IncomingQuery, payload: Uint8Array): void;
  /**
   * serf KeyManager (InstallKey, UseKey, RemoveKey, ListKeys): runs the key query on every member and
   * aggregates the answers; `error` is set when a member refused or did not answer. Rejects with
   * InvalidKeyError for a key that is not base64 of 16, 24 or 32 bytes.
   */
  installKey(key: string): Promise<KeyResponse>;
  useKey(key: string): Promise<KeyResponse>;
  removeKey(key: string): Promise<KeyResponse>;
  listKeys(): Promise<KeyResponse>;
  /**
   * Serf events in order. Events before the first subscriber are held (bounded) for it; a throwing
   * subscriber is logged and does not disturb the others.
   */
  subscribe(fn: (e: SerfEvent) => void): Cancel;
  /**
   * This member's network coordinate (serf GetCoordinate), moved by every direct probe acked by a member
   * that sent its own; undefined when coordinates are disabled. Consul's agent sends the LAN one to the
   * catalog; servers' WAN ones serve /v1/coordinate/datacenters.
   */
  coordinate(): Coordinate | undefined;
  /**
   * The latest coordinate `node` sent in an ack, or ours for the local name (serf GetCachedCoordinate);
   * undefined when not (yet) heard, after the member was reaped, or when coordinates are disabled.
   */
  cachedCoordinate(node: string): Coordinate | undefined;
  /** Every cached coordinate, self included, by member name in name order; empty when disabled. A copy. */
  cachedCoordinates(): Map<string, Coordinate>;
  stats(): GossipPoolStats;
  /** Stops timers and closes the transport, without leaving (others will see a failure). Idempotent. */
  stop(): Promise<void>;
}

/** serf DefaultConfig LeavePropagateDelay. */
const DEFAULT_LEAVE_PROPAGATE_DELAY_MS = 1000;

/** Converts a serf member to the pool's view (host and port split). */
export function toPoolMember(m: { name: string; addr: string; tags: Tags; status: MemberStatus }): PoolMember {
  let host: string, port: number;
  try {
    ({ host, port } = parseHostPort(m.addr));
  } catch {
    host = hostOf(m.addr);
    port = 0;
  }
  return Object.freeze({ name: m.name, addr: host, port, tags: m.tags, status: m.status });
}

/**
 * Binds the transport (unless one is given) and starts the pool. Rejects if the bind fails; throws
 * (RangeError / TagsTooLargeError) for a bad configuration, closing a transport it bound.
 */
export async function createGossipPool(options: GossipPoolOptions): Promise<GossipPool> {
  const { clock, rng, logger: log } = options;
  const transport = options.transport ??
    await createUdpTransport({ host: options.bindHost, port: options.bindPort, advertiseHost: options.advertiseHost, logger: log });
  let serf: Serf;
  let driver: GossipDriver;
  let ml: Memberlist;
  try {
    const gossipIntervalMs = options.timing?.gossipIntervalMs ?? PROFILES[options.profile].gossipIntervalMs;
    serf = new Serf({ ...SERF_DEFAULTS, gossipIntervalMs, ...options.serf, name: options.name, tags: options.tags }, rng, clock.monotonic(), {
      keyring: options.keyring, persist: options.persistKeyring,
    });
    const cfg = memberlistConfig(options.profile, { name: options.name, addr: transport.localAddr, meta: serf.localMeta }, options.timing);
    ml = new Memberlist(cfg, rng, clock.monotonic(), serf.pingDelegate, serf.stateDelegate);
    driver = createGossipDriver({ memberlist: ml, transport, clock, rng, logger: log, keyring: options.keyring, label: options.label });
  } catch (err) {
    await transport.close();
    throw err;
  }
  const delay = options.leavePropagateDelayMs ?? DEFAULT_LEAVE_PROPAGATE_DELAY_MS;
  return startPool(options.name, serf, driver, clock, log, delay, (member) => ml.rttMs(member), options.keyring !== undefined);
}

function startPool(
  name: string, serf: Serf, driver: GossipDriver, clock: Clock, log: Logger, leaveDelayMs: number, rttMs: (member: string) => number | undefined,
  encrypted: boolean,
): GossipPool {
  const now = () => clock.monotonic();
  const events = createEventChannel<SerfEvent>(log, "gossip pool");
  let stopped = false;
  let stopping: Promise<void> | undefined;
  let leaving: Promise<void> | undefined;
  let leaveDone: Promise<void> | undefined;
  let cancelTick: Cancel | undefined;
  let endLinger: (() => void) | undefined;
  let tickAt: number | undefined;
  const counters = { reconnectsOk: 0, reconnectsFailed: 0 };

  const execute = (r: SerfRequest) => {
    if (stopped) return;
    switch (r.type) {
      case "join":
        driver.join(r.addresses).then(
          () => void counters.reconnectsOk++,
          (err: unknown) => {
            counters.reconnectsFailed++;
            log.debug("gossip reconnect failed", { node: r.node, error: err });
          },
        );
        return;
      case "update-meta":
        return driver.updateMeta(r.meta);
      case "broadcast":
        return driver.broadcastUser(r.key, r.payload);
      case "send":
        return driver.sendUser(r.to, r.key, r.payload, r.toName);
      case "leave":
        leaveDone ??= driver.leave();
        return;
    }
  };

  /** Drains the Serf: the only place its output leaves it. */
  const drain = () => {
    const out = serf.outbox();
    events.publish(out.events);
    for (const r of out.requests) execute(r);
    queries.route(out.queries);
    schedule();
  };
  const queries = createPoolQueries({ serf, now, drain, log, encrypted, stopped: () => stopped });

  const schedule = () => {
    if (stopped) return;
    const at = serf.nextDeadline();
    if (cancelTick && tickAt === at) return;
    cancelTick?.();
    tickAt = at;
    cancelTick = clock.setTimer(Math.max(1, at - now()), () => {
      cancelTick = undefined;
      tickAt = undefined;
      if (stopped) return;
      serf.tick(now());
      drain();
    });
  };

  driver.subscribe((e) => {
    if (stopped) return;
    serf.handle(e, now());
    drain();
  });
  schedule();

  const stop = (): Promise<void> => {
    if (stopping) return stopping;
    stopped = true;
    queries.stop();
    endLinger?.();
    cancelTick?.();
    cancelTick = undefined;
    stopping = driver.stop();
    return stopping;
  };

  return {
    name,
    localAddr: driver.localAddr,
    members: () => serf.members().map((m) => ({ ...toPoolMember(m), rttMs: rttMs(m.name) })),
    async join(addresses) {
      if (stopped || serf.state !== "alive") throw new Error(`gossip pool ${name}: join after leave or stop`);
      // memberlist's resolveAddr: an address without a port means this pool's own port.
      const ownPort = parseHostPort(driver.localAddr).port;
      const targets = addresses.map((a) => withDefaultPort(a, ownPort));
      // Joining oneself succeeds and counts (memberlist's push/pull with itself does).
      const self = targets.filter((a) => a === driver.localAddr).length;
      const others = targets.filter((a) => a !== driver.localAddr);
      if (others.length === 0) {
        if (self > 0) return self;
        throw new Error(`gossip pool ${name}: join: no address to join`);
      }
      const endJoin = serf.ignoreOldEvents(); // serf Join(addrs, ignoreOld = true), as Consul joins
      const n = await driver.join(others).catch((err: Error) => {
        if (self > 0) return 0;
        throw err;
      }).finally(endJoin);
      if (n + self === 0) throw new Error(`gossip pool ${name}: join: no member reached`);
      return n + self;
    },
    leave() {
      leaving ??= (async () => {
        if (stopped) return;
        serf.leave(now());
        drain();
        await leaveDone;
        if (!stopped && leaveDelayMs > 0) {
          await new Promise<void>((resolve) => {
            const cancel = clock.setTimer(leaveDelayMs, () => resolve());
            endLinger = () => { cancel(); resolve(); };
          });
        }
        await stop();
      })();
      return leaving;
    },
    forceLeave(node, prune = false) {
      if (node === name) {
        void this.leave();
        return true;
      }
      const known = serf.forceLeave(node, now(), prune);
      drain();
      return known;
    },
    setTags(tags) {
      serf.setTags(tags, now());
      drain();
    },
    userEvent(eventName, payload) {
      serf.userEvent(eventName, payload, now());
      drain();
    },
    subscribe(fn) {
      return events.subscribe(fn);
    },
    query: (queryName, payload, options) => queries.query(queryName, payload, options),
    subscribeQueries: (fn) => queries.subscribe(fn),
    respond: (query, payload) => queries.respond(query, payload),
    installKey: (key) => queries.keyOperation("install", key),
    useKey: (key) => queries.keyOperation("use", key),
    removeKey: (key) => queries.keyOperation("remove", key),
    listKeys: () => queries.keyOperation("list"),
    coordinate: () => serf.coordinate(),
    cachedCoordinate: (node) => serf.cachedCoordinate(node),
    cachedCoordinates: () => serf.cachedCoordinates(),
    stats() {
      const members: Record<MemberStatus, number> = { alive: 0, leaving: 0, left: 0, failed: 0 };
      for (const m of serf.members()) members[m.status]++;
      return { members, serf: serf.stats, gossip: driver.stats(), healthScore: driver.memberlist.healthScore(), encrypted, ...counters };
    },
    stop,
  };
}

/**
 * A pool's `serf_lan` / `serf_wan` section of `/v1/agent/self`'s Stats, as Consul's serf Stats writes it
 * (every value a string). Queues Causeway does not have (event_queue, query_queue) are left out rather
 * than invented; `coordinate_resets` appears only with coordinates enabled, as in serf.
 */
export function serfStatsOf(s: GossipPoolStats): Record<string, string> {
  return {
    ...(s.serf.coordinates === undefined ? {} : { coordinate_resets: String(s.serf.coordinates.resets) }),
    encrypted: String(s.encrypted),
    event_time: String(s.serf.eventTime),
    failed: String(s.serf.failed),
    health_score: String(s.healthScore),
    intent_queue: String(s.serf.intentQueue),
    left: String(s.serf.left),
    member_time: String(s.serf.memberTime),
    members: String(s.serf.members),
    query_time: String(s.serf.queryTime),
  };
}
