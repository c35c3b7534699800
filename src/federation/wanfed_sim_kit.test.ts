/**
 * A deterministic WAN-federation world for wanfed_sim.test.ts (no tests here): real WAN gossip pools
 * (WAN profile, Consul's serf settings) wrapped by createWanfedTransport, one simulated mesh gateway
 * per datacenter, in-memory connections, one simulated clock and seeded randomness.
 *
 * Topology. Servers of one datacenter reach each other over an in-memory network (the ordinary WAN
 * transport); every cross-datacenter pair is blocked on it, so the only path between datacenters is
 * the gateways. With `sharedAddresses`, every datacenter uses the same private range instead
 * (10.0.0.<i>:8302, each datacenter on a network of its own), so only member names tell servers of
 * different datacenters apart. A server dials its own datacenter's gateway (`resolveGateway`
 * answers `gw.<its dc>`), which hands the connection to the far datacenter's gateway, which picks the server by SNI
 * (`<node>.server.<dc>.consul`, or any server for `server.<dc>.consul`), as gateways with
 * `-expose-servers` do. A connection is two in-memory pipes (server <-> gateway, 1 ms each way) joined
 * by a relay that crosses the inter-gateway hop (a fixed one-way latency per datacenter pair).
 *
 * Faults, per gateway:
 * - `loss`: the probability that what leaves through this gateway's WAN link is lost, as `tc netem
 *   loss` on the gateway's interface (egress): each direction of a crossing is drawn once, against the
 *   sending side's gateway. Packet connections (ALPN causeway/wan-gossip/packet) lose whole gossip
 *   packets: the relay decodes the frames and drops each lost one, as UDP would (harsher than the
 *   real tunnel, which is TCP and would only delay them). Streams and dial handshakes stay reliable
 *   and ordered, but a lost chunk is delivered after TCP-like retransmissions (200 ms, doubling while
 *   lost again), holding up what follows it.
 * - `up = false` (`setGateway`): the gateway restarts/dies: every connection through it is reset at
 *   both ends and every dial through it fails ("connection refused" from the local gateway, "upstream
 *   connect error" from a far one) until it is up again.
 */
import {
  CONSUL_SERF, createGossipPool, createMemoryNetwork, joinHostPort, type GossipPool, type MemberStatus,
} from "../membership/index.ts";
import { seededRng, silentLogger, type Rng } from "../platform/index.ts";
import { runSimTimers, simClock, type SimClock } from "../../test/harness/sim_clock.ts";
import { WAN_GOSSIP_PACKET_ALPN } from "./names.ts";
import { encodeWanGossipPacket, WanGossipPacketDecoder } from "./packet_framing.ts";
import type { WanfedConnection, WanfedDial } from "./wanfed_connection.ts";
import { pipe, type PipeEnd } from "./wanfed_fixtures.test.ts";
import { createWanfedTransport, type WanfedTransport } from "./wanfed_transport.ts";

/** One-way latency between a server and its gateway. */
const LINK_MS = 1;
/** First TCP retransmission timeout of the loss model (Linux's minimum RTO). */
const RTO_MS = 200;
/** One-way latency of the inter-gateway hop per datacenter pair (sorted names joined by "-"); default 50 ms. */
const WAN_MS: Readonly<Record<string, number>> = { "dc1-dc2": 20, "dc1-dc3": 40, "dc2-dc3": 60 };
const wanMs = (a: string, b: string) => WAN_MS[[a, b].sort().join("-")] ?? 50;

export interface MemberEventRecord {
  readonly at: number;
  readonly type: string;
  readonly member: string;
}

/** `viewer`'s pool reported `member` failed at simulated time `at`. */
export interface FailedEvent {
  readonly viewer: string;
  readonly member: string;
  readonly at: number;
}

export interface SimServer {
  readonly node: string;
  readonly dc: string;
  /** WAN member name `<node>.<dc>`. */
  readonly name: string;
  readonly addr: string;
  readonly transport: WanfedTransport;
  readonly pool: GossipPool;
  /** The pool's member events (join, failed, leave, update, reap) with simulated time. */
  readonly events: MemberEventRecord[];
}

/** A datacenter's mesh gateway, as the relay sees it. */
export class SimGateway {
  readonly address: string;
  up = true;
  /** Loss probability on this gateway's WAN link, outbound (see the module comment). */
  loss = 0;
  readonly relays = new Set<Relay>();
  readonly counters = { dials: 0, refusedDials: 0, framesRelayed: 0, framesLost: 0, chunksDelayed: 0, resets: 0 };
  constructor(readonly dc: string) {
    this.address = `gw.${dc}:8443`;
  }
}

interface Relay {
  dead: boolean;
  readonly ends: readonly [PipeEnd, PipeEnd];
}

export interface WanfedSimOptions {
  readonly seed: number;
  /** Servers per datacenter; the first datacenter is the primary. Default dc1: 3, dc2: 1, dc3: 3. */
  readonly layout?: Readonly<Record<string, number>>;
  /** Sees every gossip packet crossing the gateways (for tracing a replayed seed): datacenters, payload, lost or not. */
  readonly onPacket?: (fromDc: string, toDc: string, payload: Uint8Array, lost: boolean) => void;
  /** Server `i` of every datacenter is at 10.0.0.<i>:8302 (see the module comment). */
  readonly sharedAddresses?: boolean;
  /**
   * Control for `sharedAddresses`: the pools' sends reach the wanfed transport without the member's
   * name, so it routes by the pool's view of the address alone (the first member there, by name).
   * The join placeholder's `*.<primary>` is kept: it names no member, and without it nobody joins.
   */
  readonly dropNames?: boolean;
}

/** The world: build with `startWanfedSim`, drive with `run`, break with `setGateway` and `setLoss`. */
export interface WanfedSim {
  readonly clock: SimClock;
  readonly primary: string;
  readonly servers: readonly SimServer[];
  readonly gateways: ReadonlyMap<string, SimGateway>;
  /** Dials that named another datacenter's gateway or an SNI of the caller's own datacenter (must stay empty). */
  readonly misroutes: string[];
  /** Runs the clock for up to `ms`; resolves early (true) once `until` holds. */
  run(ms: number, until?: () => boolean): Promise<boolean>;
  setGateway(dc: string, up: boolean): void;
  /** Sets the WAN-link loss of every gateway. */
  setLoss(p: number): void;
  /** Status of `member` in `viewer`'s pool, or undefined when it does not know it. */
  statusIn(viewer: SimServer, member: string): MemberStatus | undefined;
  /** Every server knows every server and sees it alive. */
  allAlive(): boolean;
  /** Member-failed events seen by any server at or after `since`, in server order. */
  failures(since?: number): FailedEvent[];
  stop(): Promise<void>;
}

/** `name` if it is the join placeholder's `*.<dc>`, else nothing (the `dropNames` control). */
const placeholderOnly = (name: string | undefined) => (name?.startsWith("*.") ? name : undefined);

/** `sni` as `{node, dc}` (node "" for any server); undefined when it is not a server name under `consul`. */
function parseSni(sni: string): { node: string; dc: string } | undefined {
  const m = /^(?:([^.]+)\.)?server\.([^.]+)\.consul$/.exec(sni);
  return m ? { node: m[1] ?? "", dc: m[2]! } : undefined;
}

/**
 * Builds the servers and gateways (nothing joined yet: `joinAll`). Randomness: the network, relays and
 * gateways draw from `seed`, each pool from its own stream derived from it.
 */
export async function startWanfedSim(options: WanfedSimOptions): Promise<WanfedSim> {
  const { seed } = options;
  const layout = options.layout ?? { dc1: 3, dc2: 1, dc3: 3 };
  const clock = simClock();
  const rng = seededRng(seed);
  const net = createMemoryNetwork({ clock, rng: seededRng(seed + 1), latencyMs: [1, 3] });
  const dcs = Object.keys(layout);
  const shared = options.sharedAddresses ?? false;
  const nets = new Map(dcs.map((dc, d) => [dc, shared ? createMemoryNetwork({ clock, rng: seededRng(seed + 1 + 1000 * (d + 1)), latencyMs: [1, 3] }) : net]));
  const gateways = new Map(dcs.map((dc) => [dc, new SimGateway(dc)]));
  const servers: SimServer[] = [];
  const misroutes: string[] = [];
  const specs = dcs.flatMap((dc, d) =>
    Array.from({ length: layout[dc]! }, (_, i) => ({ node: `s${i + 1}`, dc, addr: shared ? `10.0.0.${i + 1}:8302` : `10.${d + 1}.0.${i + 1}:8302` }))
  );
  if (!shared) for (const a of specs) for (const b of specs) if (a.dc !== b.dc) net.setBlocked(a.addr, b.addr, true);

  /** TCP-like delay of one chunk sent out through `egress`: a retransmission per loss, backing off. */
  const retransmitDelay = (egress: SimGateway) => {
    let delay = 0;
    for (let rto = RTO_MS; rng.next() < egress.loss; rto *= 2) delay += rto;
    if (delay > 0) egress.counters.chunksDelayed++;
    return delay;
  };

  /**
   * Pumps `from`'s bytes to `to` across the inter-gateway hop `links` (sending gateway first), in
   * order; frames are decoded (and may be lost) when `frames`.
   */
  const forward = (r: Relay, from: PipeEnd, to: PipeEnd, links: readonly [SimGateway, SimGateway], frames: boolean, onEnd: () => void) => {
    const decoder = frames ? new WanGossipPacketDecoder() : undefined;
    const hop = wanMs(links[0].dc, links[1].dc);
    let lastAt = 0;
    const later = (extra: number, fn: () => void) => {
      const now = clock.monotonic();
      lastAt = Math.max(now + hop + extra, lastAt);
      clock.setTimer(lastAt - now, () => void (r.dead || fn()));
    };
    const write = (bytes: Uint8Array) => void to.write(bytes).catch(() => {});
    from.read({
      data(chunk) {
        if (!decoder) return later(retransmitDelay(links[0]), () => write(chunk));
        for (const frame of decoder.push(chunk)) {
          const lost = rng.next() < links[0].loss;
          options.onPacket?.(links[0].dc, links[1].dc, frame, lost);
          if (lost) {
            links[0].counters.framesLost++;
            continue;
          }
          links[0].counters.framesRelayed++;
          later(0, () => write(encodeWanGossipPacket(frame)));
        }
      },
      end(err) {
        later(0, () => (err ? to.abort() : to.close()));
        onEnd();
      },
    });
  };

  /** A connection from `src`'s datacenter to `dst`'s through both gateways: the caller's end and the server's end. */
  const relay = (src: SimGateway, dst: SimGateway, packets: boolean): { client: PipeEnd; server: PipeEnd } => {
    const [client, gwIn] = pipe(clock, rng, LINK_MS);
    const [gwOut, server] = pipe(clock, rng, LINK_MS);
    const r: Relay = { dead: false, ends: [gwIn, gwOut] };
    let open = 2;
    const onEnd = () => {
      if (--open > 0) return;
      src.relays.delete(r);
      dst.relays.delete(r);
    };
    src.relays.add(r);
    dst.relays.add(r);
    forward(r, gwIn, gwOut, [src, dst], packets, onEnd);
    forward(r, gwOut, gwIn, [dst, src], false, onEnd);
    return { client, server };
  };

  const targetsOf = (sni: { node: string; dc: string }) =>
    servers.filter((s) => s.dc === sni.dc && (sni.node === "" || s.node === sni.node));

  const dialFrom = (node: string, dc: string): WanfedDial => (gateway, sni, alpn) =>
    new Promise<WanfedConnection>((resolve, reject) => {
      const src = gateways.get(dc)!;
      const to = parseSni(sni);
      if (gateway !== src.address || !to || to.dc === dc) misroutes.push(`${node}.${dc} dialled ${gateway} for ${sni}`);
      const dst = to && gateways.get(to.dc);
      src.counters.dials++;
      if (!src.up || !dst) {
        src.counters.refusedDials++;
        return void clock.setTimer(LINK_MS, () => reject(new Error(`dial ${gateway}: connection refused`)));
      }
      // TCP to the local gateway, which connects upstream; then the TLS handshake end to end.
      const rtt = 2 * (2 * LINK_MS + wanMs(src.dc, dst.dc));
      clock.setTimer(rtt + retransmitDelay(src) + retransmitDelay(dst), () => {
        const targets = targetsOf(to!);
        const target = targets[rng.int(Math.max(1, targets.length))];
        if (!src.up || !dst.up || !target) {
          src.counters.refusedDials++;
          return reject(new Error(`${gateway}: upstream connect error for ${sni}: connection reset`));
        }
        const { client, server } = relay(src, dst, alpn === WAN_GOSSIP_PACKET_ALPN);
        if (alpn === WAN_GOSSIP_PACKET_ALPN) target.transport.acceptPacketConnection(server, dst.address);
        else target.transport.acceptStreamConnection(server, dst.address);
        resolve(client);
      });
    });

  for (const [i, spec] of specs.entries()) {
    let pool: GossipPool | undefined;
    const transport = createWanfedTransport({
      local: nets.get(spec.dc)!.transport(spec.addr), localDc: spec.dc, domain: "consul",
      nameOf: (addr) => pool?.members().find((m) => joinHostPort(m.addr, m.port) === addr)?.name,
      resolveGateway: () => ({ ok: true, address: gateways.get(spec.dc)!.address }),
      dial: dialFrom(spec.node, spec.dc), clock, logger: silentLogger(),
    });
    pool = await createGossipPool({
      name: `${spec.node}.${spec.dc}`, profile: "wan", bindHost: "unused", bindPort: 0, tags: { role: "consul", dc: spec.dc },
      serf: CONSUL_SERF, clock, rng: seededRng(seed * 1000 + i), logger: silentLogger(),
      transport: options.dropNames
        ? {
          ...transport,
          sendPacket: (to, bytes, toName) => transport.sendPacket(to, bytes, placeholderOnly(toName)),
          dialStream: (to, timeoutMs, toName) => transport.dialStream(to, timeoutMs, placeholderOnly(toName)),
        }
        : transport,
    });
    const events: MemberEventRecord[] = [];
    pool.subscribe((e) => void (e.type !== "user" && events.push({ at: clock.monotonic(), type: e.type, member: e.member.name })));
    servers.push({ ...spec, name: `${spec.node}.${spec.dc}`, transport, pool, events });
  }

  const statusIn = (viewer: SimServer, member: string) => viewer.pool.members().find((m) => m.name === member)?.status;
  return {
    clock, primary: dcs[0]!, servers, gateways, misroutes,
    run: (ms, until) => runSimTimers(clock, ms, until),
    setGateway(dc, up) {
      const gw = gateways.get(dc)!;
      gw.up = up;
      if (up) return;
      for (const r of [...gw.relays]) {
        r.dead = true;
        gw.counters.resets++;
        for (const end of r.ends) end.abort();
      }
      gw.relays.clear();
    },
    setLoss(p) {
      for (const gw of gateways.values()) gw.loss = p;
    },
    statusIn,
    allAlive: () => servers.every((v) => servers.every((s) => statusIn(v, s.name) === "alive")),
    failures: (since = 0) =>
      servers.flatMap((v) => v.events.filter((e) => e.type === "member-failed" && e.at >= since).map((e) => ({ viewer: v.name, member: e.member, at: e.at }))),
    async stop() {
      for (const s of servers) await s.pool.stop();
      await runSimTimers(clock, 1_000);
    },
  };
}

/**
 * Joins everything the way Consul servers with mesh-gateway federation do: the primary's servers join
 * each other directly, by name and address (`s1.dc1/<addr>`, as Consul's flood joins from the LAN
 * do), every secondary server joins `*.<primary>/192.0.2.2` (any primary server, through the
 * gateways); each join starts at a random time in the first second. Resolves with each join's result
 * (members reached, or the error's message) once they all settled.
 */
export function joinAll(sim: WanfedSim, rng: Rng): Promise<Array<number | string>> {
  const first = sim.servers[0]!;
  const joins = sim.servers.slice(1).map((s) =>
    new Promise<number | string>((resolve) => {
      const target = s.dc === sim.primary ? `${first.name}/${first.addr}` : `*.${sim.primary}/192.0.2.2`;
      sim.clock.setTimer(rng.int(1000), () => void s.pool.join([target]).then(resolve, (e: Error) => resolve(e.message)));
    })
  );
  return Promise.all(joins);
}
