/**
 * The agent's gossip: the LAN pool (every agent) and, on servers, the WAN pool; start_join, retry_join
 * and retry_join_wan; the encryption keyring; and the membership view the HTTP API serves.
 */
import {
  clientTags, CONSUL_SERF, createGossipPool, InvalidKeyError, Keyring, serverTags, wanName,
  type GossipPool, type PoolMember, type SerfEvent,
} from "../membership/index.ts";
import type { MembershipApi, MemberView } from "../http/index.ts";
import { cryptoRng, type Clock, type Logger } from "../platform/index.ts";
import { ConfigError, type RuntimeConfig } from "./config.ts";
import { VERSION } from "./version.ts";

export interface RunningGossip {
  readonly lan: GossipPool;
  readonly wan?: GossipPool;
  readonly membership: MembershipApi;
  stop(): Promise<void>;
}

function keyringOf(config: RuntimeConfig): Keyring | undefined {
  if (!config.gossip.encrypt) return undefined;
  try {
    return Keyring.fromBase64List([config.gossip.encrypt]);
  } catch (err) {
    if (err instanceof InvalidKeyError) throw new ConfigError(`encrypt: ${err.message}`);
    throw err;
  }
}

function view(m: PoolMember): MemberView {
  return { name: m.name, addr: m.addr, port: m.port, tags: { ...m.tags }, status: m.status };
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
  /** The server port, on servers; clients have none. */
  serverPort?: number;
  /** Called after a leave requested through the API has completed: the agent shuts down. */
  onLeft: () => void;
}): Promise<RunningGossip> {
  const { config, logger, clock } = o;
  const keyring = keyringOf(config);
  const server = o.serverPort !== undefined;
  const tags = server
    ? serverTags({ datacenter: config.datacenter, nodeId: o.nodeId, port: o.serverPort!, build: VERSION, bootstrap: config.dev || config.bootstrapExpect === 1, bootstrapExpect: config.bootstrapExpect, wanJoinPort: config.ports.serfWan > 0 ? config.ports.serfWan : undefined })
    : clientTags({ datacenter: config.datacenter, nodeId: o.nodeId, build: VERSION });
  const stops: (() => unknown)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s();
  };
  try {
    const lan = await createGossipPool({
      name: config.nodeName, profile: "lan", bindHost: config.bindAddr, bindPort: config.ports.serfLan, advertiseHost: o.advertiseAddr,
      tags, keyring, clock, rng: cryptoRng(), logger: logger.named("serf-lan"), serf: CONSUL_SERF,
    });
    stops.push(() => lan.stop());
    let wan: GossipPool | undefined;
    if (server && config.ports.serfWan !== -1) {
      wan = await createGossipPool({
        name: wanName(config.nodeName, config.datacenter), profile: "wan", bindHost: config.bindAddr, bindPort: config.ports.serfWan,
        advertiseHost: config.gossip.advertiseAddrWan || o.advertiseAddr, tags, keyring, clock, rng: cryptoRng(), logger: logger.named("serf-wan"), serf: CONSUL_SERF,
      });
      stops.push(() => wan!.stop());
    }
    for (const [pool, name] of [[lan, "lan"], [wan, "wan"]] as const) {
      pool?.subscribe((e: SerfEvent) => {
        if (e.type !== "user") logger.named(`serf-${name}`).info(e.type.replace("-", " "), { member: e.member.name });
      });
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
    return { lan, wan, membership, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
