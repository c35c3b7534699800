/**
 * Deno smoke suite: the built-in mesh gateway data plane (src/gateway startMeshGatewayDataPlane) run from
 * source on Deno against the real xDS server side in the same process (src/xds createXdsCache,
 * createAdsService, serveAds on port 0 over h2c). The cache holds what src/xds meshGatewayResources makes
 * of a mesh gateway snapshot (the resource kit's, with services alpha and beta in dc1 and dc2's gateway
 * all pointed at TLS backends on loopback). Once per protocol (delta, then state of the world):
 *
 * - the admin endpoint answers /ready with 503 PRE_INITIALIZING while the gateway has clusters but no
 *   listener, and LIVE once the listener arrives through the stream and is bound;
 * - a TLS connection (verified against the test CA) with alpha's SNI reaches backend alpha, beta's SNI
 *   reaches beta, an SNI under `*.dc2.internal.<td>` reaches dc2's gateway; the backend sees the client's
 *   SNI (the gateway does not terminate TLS) and bytes flow both ways;
 * - an SNI that names no cluster is closed without reaching any backend;
 * - /stats counts the listener's connections, the SNI hits, each cluster's upstream connection and the
 *   unrouted one.
 *
 * Waits are event-driven (log lines, socket events) and bounded; nothing sleeps. Ports: the ADS server,
 * the admin endpoint and the backends bind port 0; the gateway's listener port comes from the xDS config,
 * so a free port is picked first.
 * Run: npx deno test -A test/runtime/deno/gateway_smoke.test.ts
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import * as tls from "node:tls";
import { freePort } from "../../harness/agent_process.ts";
import { watchedLogger } from "../../harness/net_helpers.ts";
import { testPki } from "../../harness/tls_fixtures.ts";
import { startMeshGatewayDataPlane, type MeshGatewayDataPlane } from "../../../src/gateway/index.ts";
import { seededRng, silentLogger, systemClock } from "../../../src/platform/index.ts";
import {
  createAdsService, createXdsCache, meshGatewayResources, resolveByProxyId, serveAds, toResourceMap,
  type AdsServer, type MeshGatewayResources,
} from "../../../src/xds/index.ts";
import { meshGatewaySnapshot } from "../../../src/xds/resources/mesh_gateway_kit.test.ts";
import { instance, TRUST_DOMAIN } from "../../../src/xds/resources/sidecar_kit.test.ts";

const HOST = "127.0.0.1";
const GATEWAY = "mesh-gateway";
const WAIT_MS = 20_000;
const opts = { sanitizeOps: false, sanitizeResources: false };
const pki = testPki();
const sni = (service: string, dc = "dc1") => `${service}.default.${dc}.internal.${TRUST_DOMAIN}`;

/** `p`, or a rejection naming `what` after `ms`; the timer is cleared either way. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

interface Backend {
  readonly port: number;
  close(): Promise<void>;
}

/** A TLS server on loopback (the test PKI's server certificate) that greets with `<name> <sni it saw>`, then echoes. */
async function startBackend(name: string): Promise<Backend> {
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({ cert: pki.server.cert, key: pki.server.key }, (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
    s.write(`${name} ${s.servername || "-"}\n`);
    s.pipe(s);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

/**
 * A TLS connection through the gateway with `servername`, verifying the backend's certificate against the
 * test CA (its names are not the SNI's, so only the chain is checked). Resolves with the greeting and the
 * echo of a line sent after it; rejects if the connection closes or fails first.
 */
function exchange(port: number, servername: string): Promise<{ greeting: string; echo: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: HOST, port, servername, ca: pki.ca.cert, checkServerIdentity: () => undefined });
    let buf = "";
    let greeting: string | undefined;
    const done = (err?: Error, v?: { greeting: string; echo: string }) => {
      socket.destroy();
      if (err) reject(err);
      else resolve(v!);
    };
    socket.on("data", (d: Uint8Array) => {
      buf += new TextDecoder().decode(d);
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (greeting === undefined) {
        greeting = line;
        socket.write("ping\n");
      } else {
        done(undefined, { greeting, echo: line });
      }
    });
    socket.once("error", (err) => done(err));
    socket.once("close", () => done(new Error(`connection for ${servername} closed (greeting: ${greeting ?? "none"})`)));
  });
}

/** Resolves once the gateway closes a connection with `servername` (no backend may answer). */
function refused(port: number, servername: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: HOST, port, servername, ca: pki.ca.cert, checkServerIdentity: () => undefined });
    socket.on("secureConnect", () => {
      socket.destroy();
      reject(new Error(`${servername}: a backend completed the handshake`));
    });
    socket.on("error", () => {});
    socket.once("close", () => resolve());
  });
}

/** The resource kit's mesh gateway on 127.0.0.1:`listenPort`: alpha and beta in dc1, one gateway in dc2, each a backend. */
function gatewayResources(listenPort: number, ports: { readonly alpha: number; readonly beta: number; readonly dc2: number }): MeshGatewayResources {
  const local = (service: string, port: number) => [instance({ node: `node-${service}`, address: HOST, service, port })];
  const dc2 = instance({ node: "dc2-gw1", address: HOST, datacenter: "dc2", kind: "mesh-gateway", port: ports.dc2, wan: { Address: HOST, Port: ports.dc2 } });
  const snap = meshGatewaySnapshot({
    WatchedServices: ["alpha", "beta"],
    ServiceGroups: { alpha: local("alpha", ports.alpha), beta: local("beta", ports.beta) },
    GatewayGroups: { dc2: [dc2] },
  });
  const bind = { Address: HOST, Port: listenPort };
  return meshGatewayResources({ ...snap, Address: HOST, Port: listenPort, TaggedAddresses: { lan: bind, wan: bind } });
}

/** Everything one run has started so far, for closeRig. */
interface Rig {
  readonly backends: Backend[];
  server?: AdsServer;
  gateway?: MeshGatewayDataPlane;
}

/** Stops the gateway, then the ADS server, then the backends; each step bounded; logs, never throws. */
async function closeRig(rig: Rig): Promise<void> {
  const steps: (() => Promise<void> | undefined)[] = [
    () => rig.gateway?.close(),
    () => rig.server?.close(),
    ...rig.backends.map((b) => () => b.close()),
  ];
  for (const step of steps) await within(Promise.resolve(step()), WAIT_MS, "a close").catch((err) => console.error(err));
}

const admin = async (port: number, path: string) => {
  const r = await fetch(`http://${HOST}:${port}${path}`);
  return { status: r.status, body: await r.text() };
};

/** One whole run of the gateway over `protocol` (see the file comment). */
async function gatewayRun(protocol: "delta" | "sotw"): Promise<void> {
  const rig: Rig = { backends: [] };
  try {
    const backend = async (name: string) => {
      const b = await startBackend(name);
      rig.backends.push(b);
      return b;
    };
    const [alpha, beta, dc2] = [await backend("alpha"), await backend("beta"), await backend("dc2-gw1")];
    const listenPort = await freePort();
    const full = gatewayResources(listenPort, { alpha: alpha.port, beta: beta.port, dc2: dc2.port });
    assert.deepEqual(full.listeners.map((l) => l.name), [`default:${HOST}:${listenPort}`]);

    // First the clusters and endpoints only: the gateway connects and applies them, but is not ready.
    const cache = createXdsCache();
    cache.set(GATEWAY, toResourceMap({ ...full, listeners: [] }));
    const clock = systemClock();
    const service = createAdsService({ cache, resolveNode: resolveByProxyId((id) => cache.get(id) !== undefined), clock, logger: silentLogger(), updatesPerSecond: 0 });
    rig.server = await serveAds({ service, logger: silentLogger(), host: HOST, port: 0 });
    const log = watchedLogger();
    rig.gateway = await startMeshGatewayDataPlane({
      xds: { host: HOST, port: rig.server.port, protocol },
      node: { id: GATEWAY, cluster: GATEWAY },
      version: "0.0.0-deno-smoke",
      admin: { host: HOST, port: 0 },
      clock, rng: seededRng(1), logger: log.logger,
    });
    const adminPort = rig.gateway.admin!.port;
    await within(log.waitFor(new RegExp(`xds client: connected .*protocol=${protocol} `)), WAIT_MS, `the ${protocol} xDS stream`);
    await within(log.waitFor(/xds client: applied.*endpoint/i), WAIT_MS, "the endpoints applied");
    assert.deepEqual(await admin(adminPort, "/ready"), { status: 503, body: "PRE_INITIALIZING\n" });
    assert.equal(rig.gateway.ready(), false);

    // Then the listener, through the open stream: bound, and the gateway is LIVE.
    cache.set(GATEWAY, toResourceMap(full));
    await within(log.waitFor(/listening/), WAIT_MS, "the gateway's listener");
    assert.deepEqual(await admin(adminPort, "/ready"), { status: 200, body: "LIVE\n" });
    assert.deepEqual([...rig.gateway.proxy.listeners()], [[`default:${HOST}:${listenPort}`, { host: HOST, port: listenPort }]]);

    // SNI routing: each name reaches its own backend, which sees the client's SNI; bytes flow both ways.
    const remote = `web.default.dc2.internal.${TRUST_DOMAIN}`;
    for (const [name, want] of [[sni("alpha"), "alpha"], [sni("beta"), "beta"], [remote, "dc2-gw1"]] as const) {
      assert.deepEqual(await within(exchange(listenPort, name), WAIT_MS, `a connection for ${name}`), { greeting: `${want} ${name}`, echo: "ping" });
    }
    await within(refused(listenPort, sni("gamma")), WAIT_MS, "the unrouted connection to close");

    const stats = (await admin(adminPort, "/stats")).body;
    const stat = (name: string) => new RegExp(`^${name.replaceAll(".", "\\.")}: (\\d+)$`, "m").exec(stats)?.[1];
    const listener = `listener.${HOST}_${listenPort}`;
    assert.equal(stat(`${listener}.downstream_cx_total`), "4", stats);
    assert.equal(stat(`${listener}.tls_inspector.sni_found`), "4", stats);
    for (const cluster of [sni("alpha"), sni("beta"), `dc2.internal.${TRUST_DOMAIN}`]) assert.equal(stat(`cluster.${cluster}.upstream_cx_total`), "1", stats);
    assert.equal(stat("tcp.mesh_gateway_local_default_tcp.downstream_cx_no_route"), "1", stats);
  } finally {
    await closeRig(rig);
  }
}

Deno.test("gateway: delta xDS from the in-process ADS server; TLS routed by SNI to loopback backends; /ready and /stats", opts, () => gatewayRun("delta"));

Deno.test("gateway: the same over state-of-the-world xDS", opts, () => gatewayRun("sotw"));
