/**
 * Two datacenters' WAN gossip pools (real membership pools, in-memory network, simulated clock) whose
 * servers cannot reach the other datacenter directly: the network blocks every cross-datacenter pair,
 * and the only path is a fake mesh-gateway relay that routes the wanfed transport's TLS-less
 * connections by SNI, as a gateway with `-expose-servers` would. The secondary joins the primary
 * through the `*.dc1/192.0.2.2` placeholder. Deterministic per seed (in the test name).
 */
import { describe, expect, test } from "bun:test";
import { createGossipPool, createMemoryNetwork, joinHostPort, type GossipPool, type SerfEvent } from "../membership/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { runSimTimers, simClock } from "../../test/harness/sim_clock.ts";
import { WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./names.ts";
import type { WanfedConnection, WanfedDial } from "./wanfed_connection.ts";
import { pipe } from "./wanfed_fixtures.test.ts";
import { createWanfedTransport, type WanfedTransport } from "./wanfed_transport.ts";

interface Server {
  readonly node: string;
  readonly dc: string;
  readonly addr: string;
  transport?: WanfedTransport;
  pool?: GossipPool;
  readonly events: SerfEvent[];
}

describe("two datacenters' WAN pools through a gateway relay only", () => {
  for (const seed of [41, 42]) {
    test(`seed ${seed}: the secondary joins through *.dc1/192.0.2.2; all four servers see each other alive and stay so`, async () => {
      const clock = simClock();
      const rng = seededRng(seed);
      const net = createMemoryNetwork({ clock, rng: seededRng(seed + 1), latencyMs: [1, 5] });
      const servers: Server[] = [
        { node: "s1", dc: "dc1", addr: "10.1.0.1:8302", events: [] },
        { node: "s2", dc: "dc1", addr: "10.1.0.2:8302", events: [] },
        { node: "s1", dc: "dc2", addr: "10.2.0.1:8302", events: [] },
        { node: "s2", dc: "dc2", addr: "10.2.0.2:8302", events: [] },
      ];
      for (const a of servers) for (const b of servers) if (a.dc !== b.dc) net.setBlocked(a.addr, b.addr, true);

      // The relay: the gateway of the caller's datacenter hands the connection to the far datacenter's
      // gateway, which picks the server by SNI (`server.<dc>.consul`: any of them).
      const routes = new Map<string, Server[]>();
      for (const s of servers) {
        routes.set(`${s.node}.server.${s.dc}.consul`, [s]);
        routes.set(`server.${s.dc}.consul`, [...(routes.get(`server.${s.dc}.consul`) ?? []), s]);
      }
      const relayed: string[] = [];
      const dialFrom = (from: Server): WanfedDial => (gateway, sni, alpn) =>
        new Promise<WanfedConnection>((resolve, reject) => {
          relayed.push(`${from.node}.${from.dc} -> ${gateway} ${sni} ${alpn}`);
          const targets = routes.get(sni) ?? [];
          clock.setTimer(3, () => {
            const target = targets[rng.int(Math.max(1, targets.length))]?.transport;
            if (!target) return reject(new Error(`gateway ${gateway}: no route for ${sni}`));
            const [client, server] = pipe(clock, rng, 4);
            const remote = `gw.${from.dc}:443`;
            if (alpn === WAN_GOSSIP_PACKET_ALPN) target.acceptPacketConnection(server, remote);
            else target.acceptStreamConnection(server, remote);
            resolve(client);
          });
        });

      for (const [i, s] of servers.entries()) {
        s.transport = createWanfedTransport({
          local: net.transport(s.addr), localDc: s.dc, domain: "consul",
          nameOf: (addr) => s.pool?.members().find((m) => joinHostPort(m.addr, m.port) === addr)?.name,
          resolveGateway: (dc) => (dc === s.dc ? { ok: false, message: "unexpected" } : { ok: true, address: `gw.${s.dc}:8443` }),
          dial: dialFrom(s), clock, logger: silentLogger(),
        });
        s.pool = await createGossipPool({
          name: `${s.node}.${s.dc}`, profile: "local", bindHost: "unused", bindPort: 0, tags: { role: "consul", dc: s.dc },
          clock, rng: seededRng(seed * 100 + i), logger: silentLogger(), transport: s.transport,
        });
        s.pool.subscribe((e) => void s.events.push(e));
      }
      const [a1, a2, b1, b2] = servers as [Server, Server, Server, Server];
      const allAlive = () => servers.every((s) => s.pool!.members().length === 4 && s.pool!.members().every((m) => m.status === "alive"));

      const joins = Promise.all([a2.pool!.join([a1.addr]), b2.pool!.join([b1.addr]), b1.pool!.join(["*.dc1/192.0.2.2"])]);
      expect(await runSimTimers(clock, 30_000, allAlive)).toBe(true);
      expect(await joins).toEqual([1, 1, 1]);
      expect(relayed[0]).toBe(`s1.dc2 -> gw.dc2:8443 server.dc1.consul ${WAN_GOSSIP_STREAM_ALPN}`);

      // A minute of gossip across the relay: no member is suspected into failure.
      await runSimTimers(clock, 60_000);
      expect(allAlive()).toBe(true);
      for (const s of servers) expect(s.events.filter((e) => e.type === "member-failed")).toEqual([]);
      for (const s of servers) {
        const st = s.transport!.stats();
        expect(st.gatewayPacketsSent).toBeGreaterThan(0);
        expect(st.inboundPackets).toBeGreaterThan(0);
        expect(st.gatewayPacketErrors).toBe(0);
      }
      // Every cross-datacenter dial named the far server (or any server of it), never a local one.
      for (const line of relayed) {
        const [, fromDc] = /^s\d\.(dc\d) /.exec(line)!;
        expect(line).not.toContain(`server.${fromDc}.consul`);
        expect(line).toContain(`gw.${fromDc}:8443`);
      }
      expect(relayed.some((l) => l.includes(`s2.server.dc1.consul ${WAN_GOSSIP_PACKET_ALPN}`))).toBe(true);
      expect(relayed.some((l) => l.includes(`s2.server.dc2.consul ${WAN_GOSSIP_PACKET_ALPN}`))).toBe(true);

      for (const s of servers) await s.pool!.stop();
      await runSimTimers(clock, 1_000);
    });
  }
});
