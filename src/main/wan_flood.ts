/**
 * Flood joins (Consul's router.FloodJoins and Server.Flood): every server of this datacenter that is
 * alive in the LAN pool is joined into the WAN pool, so operators join one server per datacenter (or,
 * with WAN federation, a secondary joins `*.<primary>`) and the rest of each datacenter follows. The
 * join target is `<node>.<dc>/<LAN host>:<wan_join_port>`: the name lets the WAN transport route by
 * it (through the gateways with WAN federation), the host is the server's LAN address as Consul uses.
 *
 * Runs on every LAN member event (Consul's FloodNotify) and every minute as a safety net.
 */
import { joinHostPort, parseServer, type GossipPool, type PoolMember } from "../membership/index.ts";
import type { Cancel, Clock, Logger } from "../platform/index.ts";

/** How often the flood runs without a LAN event. */
export const FLOOD_INTERVAL_MS = 60_000;

const tagged = (m: PoolMember) => ({ name: m.name, addr: m.addr, tags: m.tags, status: m.status });

/**
 * The WAN joins that bring every alive LAN server of `localDc` into the WAN pool: one
 * `<node>.<dc>/<host>[:<wan_join_port>]` per server whose WAN name is not a WAN member yet (in any
 * state: a failed member is the WAN pool's to reconnect, as in Consul), never `self` (this node's LAN
 * name: at startup the WAN pool may not list this node yet). Sorted.
 */
export function floodJoinTargets(localDc: string, lan: readonly PoolMember[], wan: readonly PoolMember[], self?: string): string[] {
  const known = new Set<string>();
  for (const m of wan) {
    const s = parseServer(tagged(m));
    if (s && s.datacenter === localDc) known.add(s.shortName);
  }
  const out: string[] = [];
  for (const m of lan) {
    if (m.status !== "alive" || m.name === self) continue;
    const s = parseServer(tagged(m));
    if (!s || s.datacenter !== localDc || known.has(s.name)) continue;
    const target = s.wanJoinPort > 0 ? joinHostPort(m.addr, s.wanJoinPort) : m.addr.includes(":") ? `[${m.addr}]` : m.addr;
    out.push(`${s.name}.${localDc}/${target}`);
  }
  return out.sort();
}

/** Starts flood-joining `lan`'s servers into `wan`; returns the stop function. */
export function startWanFlood(o: { lan: GossipPool; wan: GossipPool; localDc: string; clock: Clock; logger: Logger }): Cancel {
  let stopped = false;
  let running = false;
  let again = false;
  let pending: Cancel | undefined;
  const flood = async () => {
    pending = undefined;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      for (const target of floodJoinTargets(o.localDc, o.lan.members(), o.wan.members(), o.lan.name)) {
        if (stopped) break;
        try {
          await o.wan.join([target]);
          o.logger.info("flood-joined a server of this datacenter into the WAN pool", { target });
        } catch (err) {
          o.logger.warn("flood join of a server into the WAN pool failed; will retry", { target, error: err });
        }
      }
    } finally {
      running = false;
      if (again && !stopped) {
        again = false;
        pending ??= o.clock.setTimer(0, () => void flood());
      }
    }
  };
  const notify = () => {
    pending ??= o.clock.setTimer(0, () => void flood());
  };
  const unsubscribe = o.lan.subscribe((e) => void (e.type === "member-join" || e.type === "member-update" ? notify() : undefined));
  const ticker = o.clock.setInterval(FLOOD_INTERVAL_MS, notify);
  notify();
  return () => {
    stopped = true;
    unsubscribe();
    ticker();
    pending?.();
  };
}
