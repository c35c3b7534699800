/**
 * The gateway's TCP proxy over real loopback sockets, with a stand-in ClientHello parser (the first line
 * is the "SNI") so these tests are about routing, splicing, retries, half-close and configuration swaps;
 * the real parser has its own tests (./client_hello.test.ts). Every server and socket is closed in finally.
 */
import { describe, expect, test } from "bun:test";
import type * as net from "node:net";
import { dialTcp, listenTcp, silentLogger, systemClock, type TcpListener } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import type { ClusterConfig, EndpointConfig, FilterChainConfig, GatewayConfig, ListenerConfig } from "./config_types.ts";
import { createGatewayProxy, type EndpointPicker, type GatewayProxy, type HelloProgress } from "./proxy.ts";
import { GatewayStats } from "./stats.ts";

/** "sni\n" is a complete hello naming sni; "\n" one without SNI; "!" fails it. */
function lineParser() {
  let seen = "";
  return {
    feed(chunk: Uint8Array): HelloProgress {
      seen += new TextDecoder().decode(chunk);
      if (seen.startsWith("!")) return { state: "failed", reason: "not_tls" };
      const nl = seen.indexOf("\n");
      if (nl < 0) return { state: "more" };
      return { state: "done", serverName: nl === 0 ? undefined : seen.slice(0, nl) };
    },
  };
}

/** Exact names, `*.suffix`, then the catch-all (enough for these tests). */
function matcher(l: ListenerConfig) {
  return (sni: string | undefined) =>
    l.chains.find((c) => sni !== undefined && c.serverNames.includes(sni)) ??
    l.chains.find((c) => sni !== undefined && c.serverNames.some((n) => n.startsWith("*.") && sni.endsWith(n.slice(1)))) ??
    l.chains.find((c) => c.serverNames.length === 0);
}

/** Round robin over the cluster's healthy endpoints; records failures. */
function roundRobin(failed: string[]) {
  return (c: ClusterConfig): EndpointPicker => {
    let i = 0;
    return {
      pick(exclude = new Set()) {
        const eps = c.endpoints.map((e) => ({ ...e, key: `${e.address}:${e.port}` })).filter((e) => e.healthy && !exclude.has(e.key));
        return eps.length ? eps[i++ % eps.length] : undefined;
      },
      reportSuccess() {},
      reportFailure: (key) => void failed.push(key),
    };
  };
}

/** A backend that answers every connection with `<name>:` + everything it received, once the peer half-closes. */
async function backend(name: string): Promise<TcpListener> {
  return listenTcp({
    host: "127.0.0.1", port: 0, allowHalfOpen: true,
    onConnection: (s) => {
      let got = "";
      s.on("data", (d) => (got += String(d)));
      s.on("end", () => s.end(`${name}:${got}`));
    },
  });
}

const ep = (port: number, healthy = true): EndpointConfig => ({ address: "127.0.0.1", port, healthy, weight: 1 });
const cluster = (name: string, endpoints: EndpointConfig[]): ClusterConfig => ({ name, type: "EDS", connectTimeoutMs: 1000, endpoints });
const chain = (serverNames: string[], route: FilterChainConfig["route"]): FilterChainConfig => ({ serverNames, route, statPrefix: `p_${serverNames[0] ?? "any"}` });

function config(listenerPort: number, chains: FilterChainConfig[], clusters: ClusterConfig[]): GatewayConfig {
  const l: ListenerConfig = { name: `default:127.0.0.1:${listenerPort}`, address: "127.0.0.1", port: listenerPort, chains, tlsInspector: true };
  return { listeners: new Map([[l.name, l]]), clusters: new Map(clusters.map((c) => [c.name, c])) };
}

/** Sends `hello` + `body`, half-closes, and resolves with everything read until the proxy closes. */
async function exchange(port: number, hello: string, body = ""): Promise<string> {
  const c = await dialTcp({ host: "127.0.0.1", port, allowHalfOpen: true });
  return new Promise<string>((resolve) => {
    let got = "";
    c.on("data", (d) => (got += String(d)));
    c.on("error", () => {});
    c.on("close", () => resolve(got));
    c.end(hello + body);
  });
}

function setup(clock = systemClock()) {
  const stats = new GatewayStats();
  const failed: string[] = [];
  const proxy: GatewayProxy = createGatewayProxy({
    clock, logger: silentLogger(), stats, listen: listenTcp, dial: dialTcp, helloParser: lineParser, chainMatcher: matcher, picker: roundRobin(failed),
  });
  return { proxy, stats, failed };
}

/** Waits (bounded, 5 s) until `cond` holds: real sockets need real I/O turns. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error("condition not reached within 5 s");
}

async function freeListenerPort(): Promise<number> {
  const l = await listenTcp({ host: "127.0.0.1", port: 0, onConnection: (s) => s.destroy() });
  const port = l.port;
  await l.close();
  return port;
}

describe("gateway proxy", () => {
  test("routes by SNI: an exact chain to its cluster, others by sni_cluster; the hello bytes are replayed; half-close both ways", async () => {
    const [a, b] = [await backend("a"), await backend("b")];
    const { proxy, stats } = setup();
    try {
      const port = await freeListenerPort();
      await proxy.apply(config(port, [chain(["*.dc2.internal"], { kind: "cluster", cluster: "dc2" }), chain([], { kind: "sni-cluster" })], [
        cluster("dc2", [ep(a.port)]),
        cluster("web.default", [ep(b.port)]),
      ]));
      expect(await exchange(port, "x.dc2.internal\n", "ping")).toBe("a:x.dc2.internal\nping");
      expect(await exchange(port, "web.default\n", "pong")).toBe("b:web.default\npong");
      // An SNI naming no cluster: closed, counted.
      expect(await exchange(port, "nope\n")).toBe("");
      expect(stats.get("tcp.p_any.downstream_cx_no_route")).toBe(1);
      expect(stats.get("listener.127.0.0.1_" + port + ".downstream_cx_total")).toBe(3);
      expect(stats.get("cluster.dc2.upstream_cx_total")).toBe(1);
    } finally {
      await proxy.close();
      await a.close();
      await b.close();
    }
  });

  test("a connect failure is retried on another endpoint and reported to the picker", async () => {
    const a = await backend("a");
    const dead = await freeListenerPort();
    const { proxy, stats, failed } = setup();
    try {
      const port = await freeListenerPort();
      await proxy.apply(config(port, [chain([], { kind: "sni-cluster" })], [cluster("svc", [ep(dead), ep(a.port)])]));
      expect(await exchange(port, "svc\n", "x")).toBe("a:svc\nx");
      expect(await exchange(port, "svc\n", "y")).toBe("a:svc\ny");
      // This stand-in picker never ejects: each connection tried the dead endpoint first.
      expect(failed).toEqual([`127.0.0.1:${dead}`, `127.0.0.1:${dead}`]);
      expect(stats.get("cluster.svc.upstream_cx_connect_fail")).toBe(2);
    } finally {
      await proxy.close();
      await a.close();
    }
  });

  test("no healthy endpoint, no matching chain, a failed hello: each closes the connection with its stat", async () => {
    const { proxy, stats } = setup();
    try {
      const port = await freeListenerPort();
      await proxy.apply(config(port, [chain(["only.this"], { kind: "sni-cluster" })], [cluster("only.this", [ep(1, false)])]));
      expect(await exchange(port, "only.this\n")).toBe("");
      expect(stats.get("cluster.only.this.upstream_cx_none_healthy")).toBe(1);
      expect(await exchange(port, "other\n")).toBe("");
      expect(stats.get(`listener.127.0.0.1_${port}.no_filter_chain_match`)).toBe(1);
      expect(await exchange(port, "!garbage")).toBe("");
      expect(stats.get(`listener.127.0.0.1_${port}.tls_inspector.tls_not_found`)).toBe(1); // Envoy's name for not_tls
    } finally {
      await proxy.close();
    }
  });

  test("a new configuration: established connections keep their upstream, new ones use the new endpoints", async () => {
    const [a, b] = [await backend("a"), await backend("b")];
    const { proxy, stats } = setup();
    try {
      const port = await freeListenerPort();
      await proxy.apply(config(port, [chain([], { kind: "sni-cluster" })], [cluster("svc", [ep(a.port)])]));
      const c = await dialTcp({ host: "127.0.0.1", port, allowHalfOpen: true });
      let got = "";
      c.on("data", (d) => (got += String(d)));
      const closed = new Promise((r) => c.on("close", r));
      c.write("svc\n");
      await until(() => stats.get("cluster.svc.upstream_cx_active") === 1);
      await proxy.apply(config(port, [chain([], { kind: "sni-cluster" })], [cluster("svc", [ep(b.port)])]));
      expect(await exchange(port, "svc\n", "new")).toBe("b:svc\nnew");
      c.end("old");
      await closed;
      expect(got).toBe("a:svc\nold");
    } finally {
      await proxy.close();
      await a.close();
      await b.close();
    }
  });

  test("a removed listener stops accepting; its open connection drains", async () => {
    const a = await backend("a");
    const { proxy } = setup();
    try {
      const port = await freeListenerPort();
      await proxy.apply(config(port, [chain([], { kind: "sni-cluster" })], [cluster("svc", [ep(a.port)])]));
      const c = await dialTcp({ host: "127.0.0.1", port, allowHalfOpen: true });
      let got = "";
      c.on("data", (d) => (got += String(d)));
      const closed = new Promise((r) => c.on("close", r));
      c.write("svc\n");
      await proxy.apply({ listeners: new Map(), clusters: new Map([["svc", cluster("svc", [ep(a.port)])]]) });
      expect(proxy.listeners().size).toBe(0);
      await expect(dialTcp({ host: "127.0.0.1", port, timeoutMs: 1000 })).rejects.toThrow("ECONNREFUSED");
      c.end("drained");
      await closed;
      expect(got).toBe("a:svc\ndrained");
    } finally {
      await proxy.close();
      await a.close();
    }
  });

  test("a hello that does not complete in time is dropped", async () => {
    const clock = simClock();
    const { proxy, stats } = setup(clock);
    try {
      const port = await freeListenerPort();
      await proxy.apply(config(port, [chain([], { kind: "sni-cluster" })], []));
      const c: net.Socket = await dialTcp({ host: "127.0.0.1", port });
      const closed = new Promise((r) => c.on("close", r));
      c.on("error", () => {});
      c.write("partial");
      await until(() => proxy.activeConnections() === 1);
      clock.advance(15_000);
      await closed;
      expect(stats.get(`listener.127.0.0.1_${port}.tls_inspector.client_hello_timeout`)).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});
