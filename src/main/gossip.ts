/**
 * The agent's gossip: the LAN pool (every agent) and, on servers, the WAN pool; start_join, retry_join
 * and retry_join_wan; the encryption keyrings (loaded from and persisted to the data dir, see
 * keyring_files.ts); the membership view the HTTP API serves; and cluster-wide keyring operations.
 *
 * Keyring operations (Consul's Internal.KeyringOperation) run on this agent's pools: the WAN pool and
 * the LAN pool of the local datacenter on a server, the LAN pool on a client. Consul instead requires
 * a server and also reaches the LAN pools of the other datacenters over RPC.
 */
import {
  clientTags, CONSUL_SERF, createGossipPool, createUdpTransport, FEATURE_FEDERATION_STATES, joinHostPort, recordPoolMetrics, serverTags, wanName,
  type GossipPool, type KeyResponse, type PoolMember, type SerfEvent,
} from "../membership/index.ts";
import { createWanfedTransport, tlsGatewayDial, type GatewayResolution, type WanfedTransport } from "../federation/index.ts";
import type { TlsMaterial } from "../platform/index.ts";
import type { KeyringApi, KeyringPoolResult, MembershipApi, MemberView } from "../http/index.ts";
import { cryptoRng, type Clock, type Logger } from "../platform/index.ts";
import type { MetricsRegistry } from "../telemetry/index.ts";
import type { RuntimeConfig } from "./config.ts";
import { setupKeyrings, type PoolKeyring } from "./keyring_files.ts";
import { VERSION } from "./version.ts";
import { startWanFlood } from "./wan_flood.ts";

/**
 * WAN federation through mesh gateways: the WAN pool's traffic to other datacenters goes through the
 * gateways the locator picks, and a secondary joins the primary's pool through `*.<primary>`.
 */
export interface WanfedGossip {
  resolveGateway(dc: string): GatewayResolution;
  readonly tlsMaterial: TlsMaterial;
  /** The primary datacenter; a secondary joins `*.<primary>` through the gateways, retried. */
  readonly primaryDatacenter: string;
}

export interface RunningGossip {
  readonly lan: GossipPool;
  readonly wan?: GossipPool;
  /** With WAN federation: the WAN transport, whose ingest the server port feeds with tunnelled gossip. */
  readonly wanfed?: WanfedTransport;
  readonly membership: MembershipApi;
  /** /v1/operator/keyring over this agent's pools. */
  readonly keyring: KeyringApi;
  stop(): Promise<void>;
}

function view(m: PoolMember): MemberView {
  return { name: m.name, addr: m.addr, port: m.port, tags: { ...m.tags }, status: m.status };
}

/**
 * The WAN member name at a bare gossip address ("host:port", as the gossip core writes it): the wanfed
 * transport's `nameOf`, asked only for sends that carry no member name (joins to an address), since
 * the core passes the name with every send to a known member. An index over `members()`, built on
 * the first lookup and again after `invalidate()` (call it on every member event), so a lookup costs
 * O(1), not a scan. Members sharing an address (datacenters with the same private ranges): the first
 * in `members()` order (by name) wins. Nothing is known while `members()` is undefined (no pool yet).
 */
export function memberAddressIndex(members: () => readonly PoolMember[] | undefined): {
  nameOf(addr: string): string | undefined;
  invalidate(): void;
} {
  let index: Map<string, string> | undefined;
  return {
    nameOf(addr) {
      if (!index) {
        const list = members();
        if (!list) return undefined;
        index = new Map();
        for (const m of list) {
          const key = joinHostPort(m.addr, m.port);
          if (!index.has(key)) index.set(key, m.name);
        }
      }
      return index.get(addr);
    },
    invalidate() {
      index = undefined;
    },
  };
}

/** Joins `addresses` every `intervalMs` until one join succeeds or `max` attempts (0: forever) failed. */
function retryJoin(pool: GossipPool, addresses: readonly string[], intervalMs: number, max: number, clock: Clock, log: Logger, what: string): () => void {
  let stopped = false;
  let cancel = () => {};
  let attempt = 0;
  const tryOnce = async () => {
    if (stopped) return;
    attempt++;
    try {
      const n = await pool.join(addresses);
      log.info(`join ${what} completed`, { contacted: n, addresses: addresses.join(",") });
    } catch (err) {
      if (stopped) return;
      if (max > 0 && attempt >= max) {
        log.error(`max join ${what} retry exhausted, giving up`, { attempts: attempt, error: err });
        return;
      }
      log.warn(`join ${what} failed, retrying`, { error: err, retry_in_ms: intervalMs });
      cancel = clock.setTimer(intervalMs, () => void tryOnce());
    }
  };
  void tryOnce();
  return () => {
    stopped = true;
    cancel();
  };
}

export async function startGossip(o: {
  config: RuntimeConfig;
  logger: Logger;
  clock: Clock;
  nodeId: string;
  advertiseAddr: string;
  /** Where the keyring files live (`<data_dir>/serf/`). */
  dataDir: string;
  /** The server port, on servers; clients have none. */
  serverPort?: number;
  /** Called after a leave requested through the API has completed: the agent shuts down. */
  onLeft: () => void;
  /** WAN federation through mesh gateways (servers with connect.enable_mesh_gateway_wan_federation). */
  wanfed?: WanfedGossip;
  /** Where each pool's serf and memberlist metrics go (membership/pool_metrics.ts). */
  metrics?: MetricsRegistry;
}): Promise<RunningGossip> {
  const { config, logger, clock } = o;
  const server = o.serverPort !== undefined;
  const withWan = server && config.ports.serfWan !== -1;
  const keyrings = setupKeyrings({ encrypt: config.gossip.encrypt, dataDir: o.dataDir, wan: withWan, logger });
  const encryption = (k: PoolKeyring, name: string) => ({
    keyring: k.keyring,
    persistKeyring: (ring: NonNullable<PoolKeyring["keyring"]>) => {
      try {
        k.persist(ring);
      } catch (err) {
        logger.named(name).error("failed to write the keyring file", { file: k.file, error: err });
        throw err; // the member's answer to the key query carries the error (serf writeKeyringFile)
      }
      logger.named(name).info("gossip keyring changed and saved", { file: k.file, keys: ring.size });
    },
  });
  const tags = server
    ? serverTags({ datacenter: config.datacenter, nodeId: o.nodeId, port: o.serverPort!, build: VERSION, bootstrap: config.dev || config.bootstrapExpect === 1, bootstrapExpect: config.bootstrapExpect, wanJoinPort: config.ports.serfWan > 0 ? config.ports.serfWan : undefined, features: [FEATURE_FEDERATION_STATES] })
    : clientTags({ datacenter: config.datacenter, nodeId: o.nodeId, build: VERSION });
  const stops: (() => unknown)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s();
  };
  try {
    const lan = await createGossipPool({
      name: config.nodeName, profile: "lan", bindHost: config.bindAddr, bindPort: config.ports.serfLan, advertiseHost: o.advertiseAddr,
      tags, ...encryption(keyrings.lan, "serf-lan"), clock, rng: cryptoRng(), logger: logger.named("serf-lan"), serf: { ...CONSUL_SERF, disableCoordinates: config.disableCoordinates },
    });
    stops.push(() => lan.stop());
    let wan: GossipPool | undefined;
    let wanfed: WanfedTransport | undefined;
    const wanNames = memberAddressIndex(() => wan?.members());
    if (withWan) {
      const advertiseHost = config.gossip.advertiseAddrWan || o.advertiseAddr;
      if (o.wanfed) {
        const local = await createUdpTransport({ host: config.bindAddr, port: config.ports.serfWan, advertiseHost, logger: logger.named("serf-wan") });
        wanfed = createWanfedTransport({
          local, localDc: config.datacenter, domain: config.domain, nameOf: wanNames.nameOf, resolveGateway: (dc) => o.wanfed!.resolveGateway(dc),
          dial: tlsGatewayDial(o.wanfed.tlsMaterial), clock, logger: logger.named("wanfed"),
        });
      }
      wan = await createGossipPool({
        name: wanName(config.nodeName, config.datacenter), profile: "wan", bindHost: config.bindAddr, bindPort: config.ports.serfWan,
        advertiseHost, tags, ...encryption(keyrings.wan!, "serf-wan"), clock, rng: cryptoRng(),
        logger: logger.named("serf-wan"), serf: { ...CONSUL_SERF, disableCoordinates: config.disableCoordinates },
        ...(wanfed ? { transport: wanfed } : {}),
      });
      stops.push(() => wan!.stop());
      // Any member event may add, move or remove an address: the index is rebuilt on its next lookup.
      wan.subscribe((e) => void (e.type !== "user" && wanNames.invalidate()));
    }
    for (const [pool, name] of [[lan, "lan"], [wan, "wan"]] as const) {
      pool?.subscribe((e: SerfEvent) => {
        if (e.type !== "user") logger.named(`serf-${name}`).info(e.type.replace("-", " "), { member: e.member.name });
      });
      if (pool && o.metrics) stops.push(recordPoolMetrics(pool, o.metrics, name, clock));
    }
    const g = config.gossip;
    if (g.startJoin.length) {
      try {
        await lan.join(g.startJoin);
      } catch (err) {
        throw new Error(`failed to join ${g.startJoin.join(", ")}: ${(err as Error).message}`);
      }
    }
    if (g.retryJoin.length) stops.push(retryJoin(lan, g.retryJoin, g.retryIntervalMs, g.retryMax, clock, logger.named("serf-lan"), "LAN"));
    if (wan && g.retryJoinWan.length) stops.push(retryJoin(wan, g.retryJoinWan, g.retryIntervalWanMs, g.retryMax, clock, logger.named("serf-wan"), "WAN"));
    // Servers of this datacenter follow each other into the WAN pool (Consul's flood join).
    if (wan) stops.push(startWanFlood({ lan, wan, localDc: config.datacenter, clock, logger: logger.named("serf-wan") }));
    // Consul's retryJoinWAN with WAN federation: the primary joins nobody; a secondary joins any primary
    // server through the gateways (memberlist's name/addr form; the address is a placeholder).
    if (wan && o.wanfed && o.wanfed.primaryDatacenter !== config.datacenter) {
      stops.push(retryJoin(wan, [`*.${o.wanfed.primaryDatacenter}/192.0.2.2`], g.retryIntervalWanMs, 0, clock, logger.named("serf-wan"), "WAN through the primary's gateways"));
    }

    const poolOf = (wanPool: boolean) => (wanPool ? wan : lan);
    const membership: MembershipApi = {
      members: (wanPool) => (poolOf(wanPool)?.members() ?? []).map(view),
      async join(address, wanPool) {
        const pool = poolOf(wanPool);
        if (!pool) throw new Error("this agent has no WAN pool (only servers join the WAN)");
        return pool.join([address]);
      },
      async leave() {
        await Promise.all([lan.leave(), wan?.leave()]);
        o.onLeft();
      },
      async forceLeave(node, { prune, wan: wanPool }) {
        const pool = poolOf(wanPool);
        if (!pool || !pool.forceLeave(node, prune)) throw new Error(`agent: No node found with name '${node}'`);
      },
    };
    const keyring = keyringApi(lan, wan, config.datacenter, logger.named("keyring"));
    return { lan, wan, ...(wanfed ? { wanfed } : {}), membership, keyring, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One result per pool, WAN first (Consul's order); the pools are asked at the same time. */
function keyringApi(lan: GossipPool, wan: GossipPool | undefined, datacenter: string, log: Logger): KeyringApi {
  const run = async (what: string, op: (pool: GossipPool) => Promise<KeyResponse>): Promise<KeyringPoolResult[]> => {
    const pools = wan ? [{ pool: wan, isWan: true }, { pool: lan, isWan: false }] : [{ pool: lan, isWan: false }];
    const responses = await Promise.all(pools.map((p) => op(p.pool)));
    return responses.map((r, i) => {
      const isWan = pools[i]!.isWan;
      if (r.error !== undefined) log.warn(`keyring ${what} failed`, { pool: isWan ? "WAN" : "LAN", error: r.error });
      else if (what !== "list") log.info(`keyring ${what} completed`, { pool: isWan ? "WAN" : "LAN", nodes: r.numNodes });
      return { wan: isWan, datacenter, segment: "", messages: r.messages, keys: r.keys, numNodes: r.numNodes, error: r.error ?? "" };
    });
  };
  return {
    list: () => run("list", (p) => p.listKeys()),
    install: (key) => run("install", (p) => p.installKey(key)),
    use: (key) => run("use", (p) => p.useKey(key)),
    remove: (key) => run("remove", (p) => p.removeKey(key)),
  };
}
