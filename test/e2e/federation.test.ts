/**
 * WAN federation through mesh gateways with datacenters in network namespaces (see
 * test/e2e/federation/lab.ts for the topology): servers of different datacenters have no route to
 * each other, only to the gateways' WAN addresses, and reach one another through the built-in mesh
 * gateways (`causeway gateway mesh -register -expose-servers`), with TLS certificates made by
 * `causeway tls`.
 *
 * Two profiles:
 * - "ci" (default): dc1 (primary) and dc2 with one server each; federation, gateway rotation after
 *   replication (#15032) and packet loss.
 * - "full" (`npm run e2e:federation`, FEDERATION_PROFILE=full): dc1 with 3 servers, dc2 with 1, dc3
 *   with 3, and every fault of the issue, each with its convergence bound.
 *
 * Needs root (namespaces, nftables); CI runs as root. Every process and namespace is removed in
 * afterAll, by PID and by name; E2E_AGENT_OUTPUT=1 prints every process's output at the end.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { connect as tlsConnect } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { adsClient, CDS, EDS, followUntil } from "../harness/ads_client.ts";
import { poll } from "../harness/agent_process.ts";
import { endpointsOf, sniOf } from "./federation/xds_view.ts";
import { causeway, FederationLab, GATEWAY_PORT, gatewayWan, nodeName, serverAddr, type DcSpec } from "./federation/lab.ts";

const FULL = process.env.FEDERATION_PROFILE === "full";
const DCS: DcSpec[] = FULL
  ? [{ name: "dc1", k: 1, servers: 3 }, { name: "dc2", k: 2, servers: 1 }, { name: "dc3", k: 3, servers: 3 }]
  : [{ name: "dc1", k: 1, servers: 1 }, { name: "dc2", k: 2, servers: 1 }];
const NAMES = DCS.map((d) => d.name);
const work = mkdtempSync(join(tmpdir(), "causeway-federation-"));
const lab = new FederationLab(work, DCS);
let failed = false;

/** Polls `f` until `ok`, failing with `what` and the bound it was given. */
const within = <T>(ms: number, what: string, f: () => Promise<T>, ok: (v: T) => boolean) => poll(f, ok, ms, `${what} (bound ${ms / 1000} s)`);

const states = async (dc: string) => (await lab.json<{ Datacenter: string }[]>(dc, "/v1/internal/federation-states")).map((s) => s.Datacenter).sort();
const putVia = (from: string, to: string, key: string, value: string, i = 0) =>
  lab.http(from, `/v1/kv/${key}?dc=${to}`, { method: "PUT", body: value }, i).then((r) => r.text());

beforeAll(() => lab.start(), 240_000);

afterAll(() => lab.close(failed), 60_000);

/** Marks the run failed (so afterAll prints the processes' output) when `body` throws. */
const step = (name: string, body: () => Promise<void>, ms: number) =>
  test(name, async () => {
    try {
      await body();
    } catch (err) {
      failed = true;
      throw err;
    }
  }, ms);

step("the datacenters federate through their gateways only", async () => {
  const all = lab.allWanNames();
  for (const dc of NAMES) await within(90_000, `every server alive in ${dc}'s WAN pool`, () => lab.wanAlive(dc), (v) => v.join() === all.join());
  for (const dc of NAMES) await within(60_000, `every federation state in ${dc}`, () => states(dc), (v) => v.join() === NAMES.join());
  // The operator's view: `causeway members -wan` against a secondary lists every server alive.
  const last = DCS.at(-1)!;
  const table = causeway(["members", "-wan", "-http-addr", `http://${serverAddr(last.k, 0)}:8500`], work);
  for (const name of all) expect(table).toMatch(new RegExp(`^${name.replace(".", "\\.")}\\s+\\S+\\s+alive\\s`, "m"));
  // Sorted by round trip time from the asking datacenter (Consul), so compare as sets.
  for (const dc of NAMES) expect((await lab.json<string[]>(dc, "/v1/catalog/datacenters")).sort()).toEqual(NAMES);
  // RPC across the gateways: from the last datacenter to the primary and back, and between secondaries.
  await within(30_000, `a PUT from ${last.name} to dc1`, () => putVia(last.name, "dc1", "x", `from-${last.name}`), (t) => t === "true");
  expect(await (await lab.http("dc1", "/v1/kv/x?raw")).text()).toBe(`from-${last.name}`);
  await within(30_000, `a PUT from dc1 to ${last.name}`, () => putVia("dc1", last.name, "x", "from-dc1"), (t) => t === "true");
  if (FULL) {
    await within(30_000, "a PUT from dc2 to dc3", () => putVia("dc2", "dc3", "x", "from-dc2"), (t) => t === "true");
    expect(await (await lab.http("dc3", "/v1/kv/x?raw")).text()).toBe("from-dc2");
  }
  // One Connect CA: every secondary adopted the primary's trust domain and roots (its own intermediate).
  const roots = (dc: string) => lab.json<{ TrustDomain: string; ActiveRootID: string }>(dc, "/v1/connect/ca/roots");
  const primaryRoots = await roots("dc1");
  for (const dc of NAMES.slice(1)) {
    await within(60_000, `${dc} on the primary's CA`, () => roots(dc), (r) => r.TrustDomain === primaryRoots.TrustDomain && r.ActiveRootID === primaryRoots.ActiveRootID);
  }
  // Every datacenter's federation state lists its gateway, with UpdatedAt.
  const fs = await lab.json<{ Datacenter: string; MeshGateways: { Service: { Service: string } }[]; UpdatedAt: string }[]>(NAMES.at(-1)!, "/v1/internal/federation-states");
  for (const s of fs) {
    expect([s.Datacenter, s.MeshGateways.map((g) => g.Service.Service)]).toEqual([s.Datacenter, ["mesh-gateway"]]);
    expect(Date.parse(s.UpdatedAt)).toBeGreaterThan(0);
  }
}, 240_000);


if (FULL) {
  step("a dc2 sidecar fails over to dc3 through dc2's and dc3's gateways; TLS with its SNI reaches web in dc3", async () => {
    // One trust domain everywhere: the secondaries' CAs are the primary's.
    const domains = await Promise.all(NAMES.map((dc) => lab.json<{ TrustDomain: string }>(dc, "/v1/connect/ca/roots").then((r) => r.TrustDomain)));
    expect(new Set(domains).size).toBe(1);
    const td = domains[0]!;
    // web's "sidecar" in dc3's namespace: a TLS server that greets (the gateways only route by SNI).
    const certDir = join(work, "dc3", "s0");
    const greeter = lab.net.spawn("dc3", process.execPath, [join(import.meta.dir, "federation", "tls_greeter.ts"), "21000", "web-in-dc3", join(certDir, "dc3-server-consul-0.pem"), join(certDir, "dc3-server-consul-0-key.pem")]);
    await new Promise<void>((resolve, reject) => {
      greeter.stdout!.once("data", () => resolve());
      greeter.once("exit", (code) => reject(new Error(`the greeter exited with ${code}`)));
    });
    const put = async (dc: string, path: string, body?: unknown) => {
      const r = await lab.http(dc, path, { method: "PUT", ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      if (!r.ok) throw new Error(`${dc} ${path}: ${r.status} ${await r.text()}`);
    };
    await put("dc3", "/v1/agent/service/register", { Name: "web", Port: 8080, Connect: { SidecarService: { Port: 21000, Checks: [{ Name: "up", TTL: "10m", Status: "passing" }] } } });
    await put("dc2", "/v1/config", { Kind: "proxy-defaults", Name: "global", MeshGateway: { Mode: "local" } });
    await put("dc2", "/v1/config", { Kind: "service-resolver", Name: "web", Failover: { "*": { Datacenters: ["dc3"] } } });
    await put("dc2", "/v1/agent/service/register", { Name: "shop", Port: 8080, Connect: { SidecarService: { Port: 21000, Proxy: { Upstreams: [{ DestinationName: "web", LocalBindPort: 9191 }] } } } });
    const webCluster = `web.default.dc2.internal.${td}`;
    const webInDc3 = `web.default.dc3.internal.${td}`;
    const ca = readFileSync(join(work, "consul-agent-ca.pem"), "utf8");
    const ads = adsClient("198.18.2.10:8502", "shop-sidecar-proxy", "shop", { caPem: ca, serverName: "localhost" });
    try {
      ads.request(CDS);
      ads.request(EDS, [webCluster]);
      const gw2 = lab.gateways.find((g) => g.dc === "dc2")!;
      // No web in dc2: the cluster names dc3 and its endpoint is dc2's own gateway (mode "local").
      await followUntil(ads, { [CDS]: [], [EDS]: [webCluster] }, (l) => !!l.get(CDS) && !!l.get(EDS) && sniOf(l.get(CDS)!, webCluster) === webInDc3 && endpointsOf(l.get(EDS)!).join() === gw2.lan, [], 60_000);
      // dc2's gateway (its admin /clusters, read in its namespace) sends dc3's traffic to dc3's gateway's WAN address.
      const gw3 = lab.gateways.find((g) => g.dc === "dc3")!;
      await within(30_000, "dc2's gateway routing dc3 to dc3's gateway", async () => lab.admin(gw2, "/clusters"), (c) => c.split("\n").some((l) => l.startsWith(`dc3.internal.${td}::${gw3.wan}::`)));
      // Be the sidecar: TLS with that SNI to dc2's gateway crosses both gateways to web in dc3.
      const [host, port] = gw2.lan.split(":");
      const greeting = () => new Promise<string>((resolve) => {
        const s = tlsConnect({ host, port: Number(port), servername: webInDc3, rejectUnauthorized: false }, () => s.once("data", (d) => (resolve(String(d)), s.destroy())));
        s.once("error", (err) => resolve(`error: ${err.message}`));
        s.once("close", () => resolve("error: closed without a greeting"));
        s.setTimeout(5_000, () => (s.destroy(), resolve("error: timeout")));
      });
      expect(await within(30_000, "a greeting from web in dc3 through both gateways", greeting, (g) => g === "web-in-dc3\n")).toBe("web-in-dc3\n");
    } finally {
      ads.close();
    }
  }, 180_000);

  step("a secondary's servers never dial the primary directly while their gateways are healthy (#9341)", async () => {
    lab.directPackets("dc3", true);
    const leader = await lab.leaderIndex("dc3");
    for (let i = 0; i < 3; i++) {
      for (let n = 0; n < 5; n++) {
        expect(await putVia("dc3", "dc1", `direct/${i}/${n}`, "x", i)).toBe("true");
        expect(await putVia("dc3", "dc2", `direct/${i}/${n}`, "x", i)).toBe("true");
      }
    }
    // Gossip and replication ran meanwhile too; nothing left dc3 except through its gateway.
    expect({ leader, direct: lab.directPackets("dc3") }).toEqual({ leader, direct: 0 });
    expect(lab.directPackets("dc1")).toBe(0);
  }, 120_000);

  step("dc1's gateways see dc3's gateway move to a new address (#10132)", async () => {
    const old = lab.gateways.find((g) => g.dc === "dc3" && g.id === "mesh-gateway")!;
    await lab.stopGateway(old, false);
    const moved = lab.startGateway("dc3", 1, { id: "mesh-gateway" });
    const dc1 = lab.gateways.find((g) => g.dc === "dc1")!;
    await within(60_000, "dc1's gateway routing dc3 to its new address", async () => lab.admin(dc1, "/clusters"), (c) => c.includes(moved.wan) && !c.includes(old.wan));
    await within(30_000, "a PUT from dc1 to dc3 after the move", () => putVia("dc1", "dc3", "moved", "1"), (t) => t === "true");
  }, 120_000);

  // The killed leader comes back at once: when it is the agent dc1's gateway registered with, that
  // gateway counts as unhealthy (its node failed) until then, so writes are checked after its return.
  step("a dc1 leader change: a new leader within 30 s, and the secondaries write to dc1 again", async () => {
    const before = await lab.leaderIndex("dc1");
    await lab.stopServer("dc1", before);
    try {
      const other = before === 0 ? 1 : 0;
      await within(30_000, "a new dc1 leader", () => lab.leaderIndex("dc1", other), (i) => i !== before);
    } finally {
      await lab.startServer("dc1", before);
    }
    await rpcEverywhere(60_000, "after-leader-change");
    await wanConverged(60_000, "after the old leader came back");
  }, 180_000);
}

/**
 * The dc1 gateways a datacenter holds in its federation state for dc1 and may use: WAN address:port of
 * those whose checks all pass (a gateway just registered is critical until its first TCP check), sorted.
 */
async function primaryGatewaysSeenBy(dc: string): Promise<string[]> {
  type Csn = { Service: { TaggedAddresses?: Record<string, { Address: string; Port: number }> }; Checks: { Status: string }[] };
  const all = await lab.json<Record<string, Csn[]>>(dc, "/v1/internal/federation-states/mesh-gateways");
  return (all.dc1 ?? []).filter((g) => g.Checks.every((c) => c.Status === "passing")).map((g) => { const w = g.Service.TaggedAddresses?.wan; return `${w?.Address}:${w?.Port}`; }).sort();
}

/** Every secondary writes to dc1 and dc1 writes to every secondary, through the gateways, within `ms`. */
async function rpcEverywhere(ms: number, tag: string): Promise<void> {
  for (const dc of NAMES.slice(1)) {
    await within(ms, `a PUT from ${dc} to dc1 (${tag})`, () => putVia(dc, "dc1", `${tag}/${dc}`, tag), (t) => t === "true");
    await within(ms, `a PUT from dc1 to ${dc} (${tag})`, () => putVia("dc1", dc, `${tag}/from-dc1`, tag), (t) => t === "true");
  }
}

/** Waits until every server of every datacenter sees every server alive in the WAN pool. */
async function wanConverged(ms: number, what: string): Promise<void> {
  const all = lab.allWanNames();
  for (const d of DCS) {
    for (let i = 0; i < d.servers; i++) await within(ms, `${what}: every server alive in ${d.name}/${i}'s WAN pool`, () => lab.wanAlive(d.name, i), (v) => v.join() === all.join());
  }
}

let dc1Gateway = 0;

step("rotating dc1's gateways after the secondaries replicated the new ones (#15032)", async () => {
  const old = lab.gateways.find((g) => g.dc === "dc1" && g.id === "mesh-gateway")!;
  const fresh = lab.startGateway("dc1", 1);
  dc1Gateway = 1;
  const both = [old.wan, fresh.wan].sort();
  // The old gateway goes only once every secondary holds the new one healthy (#15032): until then the
  // old one is their only way to the primary.
  for (const dc of NAMES.slice(1)) await within(60_000, `${dc} holding both of dc1's gateways, healthy`, () => primaryGatewaysSeenBy(dc), (v) => v.join() === both.join());
  await lab.stopGateway(old, true);
  for (const dc of NAMES.slice(1)) await within(60_000, `${dc} holding only dc1's new gateway`, () => primaryGatewaysSeenBy(dc), (v) => v.join() === fresh.wan);
  await rpcEverywhere(30_000, "after-rotation");
  await wanConverged(30_000, "after the rotation");
}, 240_000);

step("10% packet loss on every gateway's WAN link marks no server failed", async () => {
  const all = lab.allWanNames();
  for (const d of DCS) lab.loss(d.name, 10);
  try {
    /** "<member> seen by <dc>/<i>" -> when first seen not alive. */
    const seenDown = new Map<string, string>();
    const end = performance.now() + 45_000;
    while (performance.now() < end) {
      for (const d of DCS) {
        for (let i = 0; i < d.servers; i++) {
          const alive = await lab.wanAlive(d.name, i).catch(() => undefined);
          for (const n of alive ? all.filter((x) => !alive.includes(x)) : []) {
            if (!seenDown.has(`${n} seen by ${d.name}/${i}`)) seenDown.set(`${n} seen by ${d.name}/${i}`, new Date().toISOString());
          }
        }
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
    // On failure, the servers' WAN gossip lines say whether the suspicion began under the loss or before it.
    const report = [...seenDown].map(([what, at]) => `${at} ${what}`);
    expect(report, `members seen not alive under loss; WAN gossip log:\n${lab.wanLog()}`).toEqual([]);
    await rpcEverywhere(30_000, "under-loss");
  } finally {
    for (const d of DCS) lab.loss(d.name, 0);
  }
}, 180_000);

step("dc2 killed, dc1's gateways rotated meanwhile, dc2 restarted with the new primary_gateways (#7339)", async () => {
  const dc2Gateway = lab.gateways.find((g) => g.dc === "dc2" && g.id === "mesh-gateway")!;
  await lab.stopServer("dc2", 0);
  await lab.stopGateway(dc2Gateway, false);
  // WAN failure detection: probes every 5 s scaled by Lifeguard's awareness, then at least 30 s of
  // suspicion (Consul's WAN profile); 45 s seen here.
  await within(120_000, "dc1 seeing dc2's server failed", () => lab.wanAlive("dc1"), (v) => !v.includes(`${nodeName("dc2", 0)}.dc2`));
  // dc1's gateways move while dc2 is down: dc2's replicated states name only the old ones. The
  // secondaries that are up learn the new one before the old one goes (#15032).
  const old = lab.gateways.find((g) => g.dc === "dc1" && g.id === `mesh-gateway-${dc1Gateway}`)!;
  const fresh = lab.startGateway("dc1", 2);
  dc1Gateway = 2;
  for (const dc of NAMES.slice(2)) await within(60_000, `${dc} holding dc1's new gateway, healthy`, () => primaryGatewaysSeenBy(dc), (v) => v.includes(fresh.wan));
  await lab.stopGateway(old, true);
  await lab.startServer("dc2", 0, [`${gatewayWan(1, 2)}:${GATEWAY_PORT + 2}`]);
  lab.startGateway("dc2", 0);
  await within(90_000, "dc2 holding dc1's new gateway", () => primaryGatewaysSeenBy("dc2"), (v) => v.join() === fresh.wan);
  await wanConverged(90_000, "after dc2 came back");
  await rpcEverywhere(30_000, "after-restart");
}, 300_000);
