/**
 * The gateway's xDS client against the REAL server side (src/xds cache + ADS service + serveAds on
 * loopback, port 0), delta and state of the world: initial configuration in warming order, updates,
 * a NACK that keeps the last good set, removals, the EDS subscription following the clusters, and a
 * reconnect to a restarted server on the same port. Every wait is on a client event, bounded.
 */
import { describe, expect, test } from "bun:test";
import { startXdsClient } from "../../src/gateway/xds_client.ts";
import type { XdsClientOptions } from "../../src/gateway/xds_client.ts";
import { seededRng, silentLogger, systemClock } from "../../src/platform/index.ts";
import { createXdsCache } from "../../src/xds/index.ts";
import {
  CDS,
  cla,
  cluster,
  EDS,
  EventLog,
  GATEWAY_ID,
  GATEWAY_SERVICE,
  LDS,
  listener,
  RecordingSink,
  type Running,
  setGateway,
  short,
  startAgent,
  withGateway,
} from "./xds_fixture.ts";

const BASE = {
  clusters: [cluster("a"), cluster("b"), cluster("dns", { dns: true })],
  endpoints: [cla("a"), cla("b")],
  listeners: [listener("default:127.0.0.1:8443")],
};

function withClient(protocol: "delta" | "sotw", body: (r: Running) => Promise<void>, extra: Partial<XdsClientOptions> = {}): Promise<void> {
  return withGateway({ resources: BASE, client: { protocol, ...extra } }, body);
}

for (const protocol of ["delta", "sotw"] as const) {
  describe(`xds client (${protocol}) against the real ADS server`, () => {
    test("initial configuration arrives in warming order: clusters, endpoints, listeners", async () => {
      await withClient(protocol, async ({ sink, log, client }) => {
        await log.applied(LDS);
        expect(sink.calls.map((c) => `${short(c.typeUrl)} ${c.names.join(",")}`)).toEqual([
          "Cluster a,b,dns",
          "ClusterLoadAssignment a,b",
          "Listener default:127.0.0.1:8443",
        ]);
        const st = client.state();
        expect(st.connected).toBe(true);
        expect(st.protocol).toBe(protocol);
        expect(st.endpointSubscription).toEqual(["a", "b"]);
        expect(st.types.map((t) => [short(t.typeUrl), t.count, t.applied, t.rejected])).toEqual([
          ["Cluster", 3, 1, 0],
          ["ClusterLoadAssignment", 2, 1, 0],
          ["Listener", 1, 1, 0],
        ]);
        expect(st.types.every((t) => t.version !== "" && t.nonce !== "")).toBe(true);
        expect(st.updatesApplied).toBe(3);
        expect(client.resources(CDS).size).toBe(3);
      });
    });

    test("an update is applied and ACKed (the next one flows), with the changed cluster's endpoints sent again", async () => {
      await withClient(protocol, async ({ agent, sink, log, client }) => {
        await log.applied(LDS);
        const m = log.mark();
        setGateway(agent.cache, { ...BASE, clusters: [cluster("a"), cluster("b", { timeoutSec: 9 }), cluster("dns", { dns: true })] });
        expect((await log.applied(CDS, m)).received).toEqual(["b"]);
        expect(sink.cluster("b")!.connectTimeout!.seconds).toBe(9n);
        // Warming: after the CDS ACK the server sends b's endpoints again (unchanged bytes: nothing "received" in SotW).
        expect((await log.applied(EDS, m)).received).toEqual(protocol === "delta" ? ["b"] : []);
        const m2 = log.mark();
        setGateway(agent.cache, { ...BASE, listeners: [listener("default:127.0.0.1:8443", "changed")] });
        expect((await log.applied(LDS, m2)).received).toEqual(["default:127.0.0.1:8443"]);
        expect(client.state().types.map((t) => t.applied)).toEqual([3, 3, 2]);
      });
    });

    test("a rejected update is NACKed with the reason; the last good set stays and later updates apply on top of it", async () => {
      await withClient(protocol, async ({ agent, sink, log, client }) => {
        sink.rejectIf = (t, set) => (t === CDS && set.has("bad") ? 'cluster "bad": unsupported cluster type' : undefined);
        await log.applied(LDS);
        const goodVersion = client.state().types[0]!.version;
        const m = log.mark();
        const withBad = { ...BASE, clusters: [...BASE.clusters, cluster("bad")] };
        setGateway(agent.cache, withBad);
        const r = await log.rejected(CDS, m);
        expect(r.reason).toBe('cluster "bad": unsupported cluster type');
        expect(sink.names(CDS)).toEqual(["a", "b", "dns"]);
        expect([...client.resources(CDS).keys()].sort()).toEqual(["a", "b", "dns"]);
        let st = client.state();
        expect(st.types[0]!.version).toBe(goodVersion);
        expect(st.types[0]!.lastNack?.reason).toBe('cluster "bad": unsupported cluster type');
        expect(st.types[0]!.lastNack?.version).toBe(r.version);
        expect([st.updatesRejected, st.connected]).toEqual([1, true]);

        // "bad" is still there and "a" changes.
        const m2 = log.mark();
        setGateway(agent.cache, { ...withBad, clusters: [cluster("a", { timeoutSec: 7 }), ...withBad.clusters.slice(1)] });
        if (protocol === "delta") {
          // The server does not send the NACKed version again: only "a", applied on the last good set.
          expect((await log.applied(CDS, m2)).received).toEqual(["a"]);
        } else {
          // SotW responses carry every cluster, "bad" included: rejected again.
          await log.rejected(CDS, m2);
          expect(sink.cluster("a")!.connectTimeout!.seconds).toBe(5n);
          const m3 = log.mark();
          setGateway(agent.cache, { ...BASE, clusters: [cluster("a", { timeoutSec: 7 }), ...BASE.clusters.slice(1)] });
          await log.applied(CDS, m3);
        }
        expect(sink.names(CDS)).toEqual(["a", "b", "dns"]);
        expect(sink.cluster("a")!.connectTimeout!.seconds).toBe(7n);
        st = client.state();
        expect(st.types[0]!.version).not.toBe(goodVersion);
        expect(st.updatesRejected).toBe(protocol === "delta" ? 1 : 2);
      });
    });

    test("removing resources removes them from the sets; the EDS subscription drops the removed cluster", async () => {
      await withClient(protocol, async ({ agent, sink, log, client }) => {
        await log.applied(LDS);
        const m = log.mark();
        setGateway(agent.cache, { clusters: [cluster("a"), cluster("dns", { dns: true })], endpoints: [cla("a")], listeners: [] });
        expect((await log.applied(CDS, m)).removed).toEqual(["b"]);
        expect((await log.applied(LDS, m)).removed).toEqual(["default:127.0.0.1:8443"]);
        expect(sink.names(CDS)).toEqual(["a", "dns"]);
        expect(sink.names(LDS)).toEqual([]);
        const st = client.state();
        expect(st.endpointSubscription).toEqual(["a"]);
        expect([...client.resources(EDS).keys()]).toEqual(["a"]);
        expect(st.types.map((t) => t.count)).toEqual([2, 1, 0]);
      });
    });

    test("the EDS subscription follows the clusters, also to a load assignment that appears later", async () => {
      await withClient(protocol, async ({ agent, sink, log, client }) => {
        await log.applied(LDS);
        const m = log.mark();
        const more = { ...BASE, clusters: [...BASE.clusters, cluster("c"), cluster("d")], endpoints: [...BASE.endpoints, cla("c")] };
        setGateway(agent.cache, more);
        await log.applied(CDS, m);
        await log.waitFor((e) => e.kind === "applied" && e.typeUrl === EDS && e.received.includes("c"), m);
        expect(client.state().endpointSubscription).toEqual(["a", "b", "c", "d"]);
        expect(sink.names(EDS)).toEqual(["a", "b", "c"]);
        const m2 = log.mark();
        setGateway(agent.cache, { ...more, endpoints: [...more.endpoints, cla("d", 9090)] });
        expect((await log.applied(EDS, m2)).received).toEqual(["d"]);
        expect(sink.names(EDS)).toEqual(["a", "b", "c", "d"]);
        expect(sink.endpoints("d")!.endpoints[0]!.lbEndpoints.length).toBe(1);
        expect(log.updatesSince(m2)).toEqual(["applied ClusterLoadAssignment [d] -[]"]);
      });
    });

    test("reconnects to the restarted server on the same port and keeps the configuration meanwhile", async () => {
      await withClient(protocol, async ({ agent, sink, log, client }) => {
        await log.applied(LDS);
        const calls = sink.calls.length;
        const m = log.mark();
        await agent.close();
        await log.waitFor((e) => e.kind === "disconnected", m);
        expect(client.state().connected).toBe(false);
        expect(client.state().lastError).toBeDefined();
        const cache = createXdsCache();
        setGateway(cache, BASE); // the restarted agent rebuilds the same configuration
        expect(sink.calls.length).toBe(calls); // nothing cleared or re-applied while away
        expect(sink.names(CDS)).toEqual(["a", "b", "dns"]);
        const m2 = log.mark();
        const again = await startAgent({ port: agent.port, cache });
        try {
          await log.waitFor((e) => e.kind === "connected", m2);
          setGateway(cache, { ...BASE, clusters: [cluster("a", { timeoutSec: 3 }), ...BASE.clusters.slice(1)] });
          await log.waitFor((e) => e.kind === "applied" && e.typeUrl === CDS && e.received.includes("a"), m2);
          if (protocol === "delta") {
            // Warming sends a's endpoints again after the CDS ACK.
            await log.waitFor((e) => e.kind === "applied" && e.typeUrl === EDS && e.received.includes("a"), m2);
            // initial_resource_versions: the server sends only what changed since the client last had it.
            expect(log.updatesSince(m2)).toEqual(["applied Cluster [a] -[]", "applied ClusterLoadAssignment [a] -[]"]);
          }
          expect(sink.cluster("a")!.connectTimeout!.seconds).toBe(3n);
          const st = client.state();
          expect(st.connected).toBe(true);
          expect(st.reconnects).toBeGreaterThanOrEqual(1);
          expect(st.types.map((t) => t.count)).toEqual([3, 2, 1]);
        } finally {
          await again.close();
        }
      });
    });
  });
}

describe("xds client lifecycle", () => {
  test("an unknown gateway is retried with backoff until the agent knows it", async () => {
    await withGateway({ client: { backoff: { baseMs: 10, maxMs: 50 } } }, async ({ agent, sink, log, client }) => {
      const i = await log.waitFor((e) => e.kind === "disconnected");
      expect((log.events[i] as { error: string }).error).toContain("unknown proxy");
      expect(client.state().lastError).toContain("unknown proxy");
      setGateway(agent.cache, BASE);
      await log.applied(LDS);
      expect(sink.names(CDS)).toEqual(["a", "b", "dns"]);
    });
  });

  test("close() stops a client that is waiting to reconnect, and nothing happens after it", async () => {
    const agent = await startAgent();
    const port = agent.port;
    await agent.close(); // nothing listens: every dial is refused
    const log = new EventLog();
    const sink = new RecordingSink();
    const client = startXdsClient({
      host: "127.0.0.1", port, node: { id: GATEWAY_ID, cluster: GATEWAY_SERVICE }, version: "t", sink,
      clock: systemClock(), rng: seededRng(3), logger: silentLogger(), backoff: { baseMs: 60_000, maxMs: 60_000 }, onEvent: log.onEvent,
    });
    await log.waitFor((e) => e.kind === "disconnected");
    expect(client.state().lastError).toContain("ECONNREFUSED");
    const n = log.events.length;
    await client.close(); // resolves without waiting out the minute
    await client.close();
    expect(log.events.length).toBe(n);
    expect(client.state().connected).toBe(false);
  });

  test("close() ends an open stream; no event or sink call follows", async () => {
    await withClient("delta", async ({ agent, sink, log, client }) => {
      await log.applied(LDS);
      expect(agent.server.sessionCount()).toBe(1);
      await client.close();
      expect(client.state().connected).toBe(false);
      const n = log.events.length;
      const calls = sink.calls.length;
      setGateway(agent.cache, { ...BASE, listeners: [] });
      expect(log.events.length).toBe(n);
      expect(sink.calls.length).toBe(calls);
    });
  });
});
