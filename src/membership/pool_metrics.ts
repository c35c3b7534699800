/**
 * A gossip pool's metrics, with Consul's serf and memberlist names and a `network` label ("lan" or
 * "wan": Consul records both pools under the same names, so its gauges overwrite each other):
 * - `serf.member.join`, `serf.member.update`, `serf.member.failed`, `serf.member.left`,
 *   `serf.member.reap` (counters) per member event; `serf.events` (counter) per user event;
 * - `memberlist.gossip` (ms: a tick that ran a gossip round, sends included) and `memberlist.probeNode`
 *   (ms: a probe, to its ack or to its end without one), read each second from the driver's rings;
 * - each second, from the pool's stats: `memberlist.health.score` (gauge, Lifeguard: 0 is healthy),
 *   `memberlist.udp.received` and `memberlist.udp.sent` (packets), `memberlist.tcp.accept` and
 *   `memberlist.tcp.connect` (push-pull exchanges answered and started), `memberlist.probe.failed`
 *   (probes that got no ack), `serf.queue.Intent` (sample: intents about members not yet known), and
 *   `serf.members` (gauge per `status`).
 * Counters are fed by the change since the previous second, so interval sums are exact.
 */
import type { Cancel, Clock } from "../platform/index.ts";
import type { CounterHandle, GaugeHandle, Labels, MetricsRegistry, SampleHandle } from "../telemetry/index.ts";
import type { GossipPool } from "./pool.ts";
import type { MemberStatus, SerfMemberEventType } from "./serf.ts";

export const POOL_METRICS_INTERVAL_MS = 1_000;

const MEMBER_EVENTS: Readonly<Record<SerfMemberEventType, string>> = {
  "member-join": "serf.member.join",
  "member-update": "serf.member.update",
  "member-failed": "serf.member.failed",
  "member-leave": "serf.member.left",
  "member-reap": "serf.member.reap",
};

/** Records `pool`'s metrics into `registry` until the returned cancel is called. */
export function recordPoolMetrics(pool: GossipPool, registry: MetricsRegistry, network: "lan" | "wan", clock: Clock): Cancel {
  const labels: Labels = [["network", network]];
  const events = new Map<string, CounterHandle>(Object.entries(MEMBER_EVENTS).map(([type, name]) => [type, registry.counter(name, labels)]));
  const userEvents = registry.counter("serf.events", labels);
  const unsubscribe = pool.subscribe((e) => (e.type === "user" ? userEvents : events.get(e.type))?.add());

  const health = registry.gauge("memberlist.health.score", labels);
  const intents = registry.sample("serf.queue.Intent", labels);
  const members = new Map<MemberStatus, GaugeHandle>();
  const deltas: [CounterHandle, (s: ReturnType<GossipPool["stats"]>) => number, number][] = [
    [registry.counter("memberlist.udp.received", labels), (s) => s.gossip.packetsReceived, 0],
    [registry.counter("memberlist.udp.sent", labels), (s) => s.gossip.packetsSent, 0],
    [registry.counter("memberlist.tcp.accept", labels), (s) => s.gossip.streamsIn, 0],
    [registry.counter("memberlist.tcp.connect", labels), (s) => s.gossip.streamsOut, 0],
    [registry.counter("memberlist.probe.failed", labels), (s) => s.gossip.memberlist.failed, 0],
  ];
  const gossip = registry.sample("memberlist.gossip", labels);
  const probe = registry.sample("memberlist.probeNode", labels);
  const observeGossip = (ms: number) => gossip.observe(ms);
  const observeProbe = (ms: number) => probe.observe(ms);
  let gossipCursor = 0;
  let probeCursor = 0;
  const collect = (intentSample: SampleHandle) => {
    const s = pool.stats();
    gossipCursor = s.gossip.gossipDurations.readSince(gossipCursor, observeGossip);
    probeCursor = s.gossip.probeDurations.readSince(probeCursor, observeProbe);
    health.set(s.healthScore);
    intentSample.observe(s.serf.intentQueue);
    for (const [status, n] of Object.entries(s.members) as [MemberStatus, number][]) {
      let g = members.get(status);
      if (!g) members.set(status, (g = registry.gauge("serf.members", [...labels, ["status", status]])));
      g.set(n);
    }
    for (const d of deltas) {
      const now = d[1](s);
      if (now > d[2]) d[0].add(now - d[2]);
      d[2] = now;
    }
  };
  const stopTimer = clock.setInterval(POOL_METRICS_INTERVAL_MS, () => collect(intents));
  return () => {
    stopTimer();
    unsubscribe();
  };
}
