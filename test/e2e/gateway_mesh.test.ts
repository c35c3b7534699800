/**
 * The built-in mesh gateway data plane (`causeway gateway mesh`) against a real agent: a server agent
 * with Connect on and a data dir (so it can be restarted), two services `web` and `api` whose
 * "sidecars" are TLS servers in this test, and the gateway registered with -register. The gateway
 * routes TLS by SNI to the right backend without terminating it; follows an EDS change while an
 * established connection keeps going; ejects a dead endpoint (connections still succeed, retried on
 * the live one); NACKs a listener it cannot bind (a host name) with a reason and keeps its old
 * listeners; and keeps serving while the agent is down, reconnecting when it is back. Every process
 * is killed by PID in afterAll.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import type { AddressInfo } from "node:net";
import { freePort, poll, startAgentProcess, type AgentProcess } from "../harness/agent_process.ts";
import { testPki } from "../harness/tls_fixtures.ts";

const cli = join(import.meta.dir, "..", "..", "src", "main", "cli.ts");
const work = mkdtempSync(join(tmpdir(), "causeway-gwmesh-"));
const pki = testPki();
const ports = { http: 0, grpc: 0, gateway: 0, admin: 0 };
let agent: AgentProcess | undefined;
let gateway: ChildProcess | undefined;
let gatewayOut = "";
const backends: tls.Server[] = [];

async function startAgent(): Promise<AgentProcess> {
  return startAgentProcess(process.execPath, [
    cli, "agent", "-server", "-bootstrap-expect", "1", "-node", "gw-node", "-data-dir", join(work, "data"), "-config-file", join(work, "connect.json"),
    "-bind", "127.0.0.1", "-http-port", String(ports.http), "-dns-port", "-1", "-grpc-port", String(ports.grpc), "-server-port", "0", "-serf-lan-port", "0", "-serf-wan-port", "0",
  ]);
}

/** A TLS backend that greets with its name, then echoes. */
async function backend(name: string): Promise<number> {
  const server = tls.createServer({ cert: pki.server.cert, key: pki.server.key }, (s) => {
    s.on("error", () => {});
    s.write(`${name}\n`);
    s.pipe(s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  backends.push(server);
  return (server.address() as AddressInfo).port;
}

const api = (path: string, body?: unknown, method = "PUT") =>
  fetch(`http://127.0.0.1:${ports.http}${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }).then(async (r) => {
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r;
  });

/** A sidecar registration for `service` at the TLS backend on `port`. */
const sidecar = (service: string, id: string, port: number) => ({
  Kind: "connect-proxy", ID: id, Name: `${service}-sidecar-proxy`, Address: "127.0.0.1", Port: port, Proxy: { DestinationServiceName: service },
});

/** A TLS connection through the gateway for `sni`: resolves with the backend's greeting line and the socket. */
function through(sni: string): Promise<{ greeting: string; socket: tls.TLSSocket }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port: ports.gateway, servername: sni, rejectUnauthorized: false });
    let buf = "";
    const onData = (d: Buffer) => {
      buf += String(d);
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      socket.off("data", onData);
      resolve({ greeting: buf.slice(0, nl), socket });
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.once("close", () => reject(new Error(`closed before a greeting (${sni})`)));
  });
}

async function greeting(sni: string): Promise<string> {
  const { greeting: g, socket } = await through(sni);
  socket.destroy();
  return g;
}

const admin = (path: string) => fetch(`http://127.0.0.1:${ports.admin}${path}`).then((r) => r.text());

beforeAll(async () => {
  for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
  mkdirSync(join(work, "data"), { recursive: true });
  writeFileSync(join(work, "connect.json"), JSON.stringify({ connect: { enabled: true } }));
  agent = await startAgent();
  await poll(() => fetch(`http://127.0.0.1:${ports.http}/v1/connect/ca/roots`).then((r) => r.json()).catch(() => undefined), (r) => typeof r?.TrustDomain === "string" && r.TrustDomain !== "", 30_000, "the CA");
}, 60_000);

afterAll(async () => {
  if (process.env.E2E_AGENT_OUTPUT) console.log(agent?.output(), gatewayOut);
  gateway?.kill("SIGKILL");
  await agent?.stop("SIGKILL").catch(() => {});
  for (const b of backends) b.close();
  rmSync(work, { recursive: true, force: true });
});

test("routes TLS by SNI, follows EDS, ejects a dead endpoint, NACKs what it cannot bind, survives an agent restart", async () => {
  const td = ((await (await api("/v1/connect/ca/roots", undefined, "GET")).json()) as { TrustDomain: string }).TrustDomain;
  const sni = (service: string) => `${service}.default.dc1.internal.${td}`;
  const [web1, web2, apiPort] = [await backend("web-1"), await backend("web-2"), await backend("api-1")];
  // The services themselves (the gateway watches the catalog's services, then their Connect instances).
  await api("/v1/agent/service/register", { Name: "web", Port: 8080 });
  await api("/v1/agent/service/register", { Name: "api", Port: 8081 });
  await api("/v1/agent/service/register", sidecar("web", "web-1", web1));
  await api("/v1/agent/service/register", sidecar("api", "api-1", apiPort));

  gateway = spawn(process.execPath, [
    cli, "gateway", "mesh", "-register", "-address", `127.0.0.1:${ports.gateway}`, "-http-addr", `127.0.0.1:${ports.http}`,
    "-grpc-addr", `127.0.0.1:${ports.grpc}`, "-admin-bind", `127.0.0.1:${ports.admin}`,
  ], { stdio: ["ignore", "pipe", "pipe"] });
  gateway.stdout!.on("data", (d) => (gatewayOut += String(d)));
  gateway.stderr!.on("data", (d) => (gatewayOut += String(d)));
  await poll(() => admin("/ready").catch(() => ""), (r) => r === "LIVE\n", 30_000, "the gateway's /ready");

  // SNI routing to two services.
  await poll(() => greeting(sni("web")).catch(() => ""), (g) => g === "web-1", 15_000, "web through the gateway");
  expect(await greeting(sni("api"))).toBe("api-1");

  // An established connection to web-1 survives an EDS change that moves web to web-2.
  const held = await through(sni("web"));
  expect(held.greeting).toBe("web-1");
  await api("/v1/agent/service/register", sidecar("web", "web-2", web2));
  await api("/v1/agent/service/deregister/web-1");
  await poll(() => greeting(sni("web")).catch(() => ""), (g) => g === "web-2", 15_000, "web moved to web-2");
  const echoed = new Promise<string>((r) => held.socket.once("data", (d) => r(String(d))));
  held.socket.write("still here");
  expect(await echoed).toBe("still here");
  held.socket.destroy();

  // A dead endpoint beside the live one: every connection still succeeds, and the dead one is ejected.
  const dead = await freePort();
  await api("/v1/agent/service/register", sidecar("web", "web-dead", dead));
  await poll(() => admin("/clusters"), (c) => c.includes(`127.0.0.1:${dead}`), 15_000, "the dead endpoint in EDS");
  for (let i = 0; i < 12; i++) expect(await greeting(sni("web"))).toBe("web-2");
  expect(await admin("/clusters")).toContain(`${sni("web")}::127.0.0.1:${dead}::health_flags::/failed_outlier_check`);
  expect(await admin("/stats")).toMatch(/outlier_detection\.ejections_enforced_total: [1-9]/);

  // A listener the gateway cannot bind (a host name): NACKed with the reason; the old listener serves on.
  await api("/v1/agent/service/register", {
    Kind: "mesh-gateway", ID: "mesh-gateway", Name: "mesh-gateway", Address: "127.0.0.1", Port: ports.gateway,
    Proxy: { Config: { envoy_gateway_bind_addresses: { bad: { Address: "gw.example.com", Port: 8443 } } } },
  });
  const dump = await poll(async () => JSON.parse(await admin("/config_dump")), (d) => d.xds.types.some((t: { lastNack?: unknown }) => t.lastNack), 15_000, "a NACK");
  const nack = dump.xds.types.find((t: { lastNack?: unknown }) => t.lastNack).lastNack as { reason: string };
  expect(nack.reason).toContain("gw.example.com");
  expect(await greeting(sni("api"))).toBe("api-1");

  // The agent goes away: the gateway keeps routing on its last good configuration, and reconnects.
  await agent!.stop("SIGKILL");
  expect(await greeting(sni("api"))).toBe("api-1");
  agent = await startAgent();
  await poll(async () => JSON.parse(await admin("/config_dump")).xds, (x) => x.connected === true && x.reconnects >= 1, 60_000, "the gateway reconnected");
  expect(await greeting(sni("web"))).toBe("web-2");
}, 180_000);
