import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { kit, run } from "./agent_test_kit.test.ts";
import { aeScaleFactor, createAntiEntropy } from "./anti_entropy.ts";
import { LocalState } from "./local_state.ts";
import { createMemoryCatalog } from "./memory_catalog.ts";
import { parseCheckRegistration, parseServiceRegistration } from "./registration.ts";

const svc = (body: Record<string, unknown>) => parseServiceRegistration(body);
const chk = (body: Record<string, unknown>) => parseCheckRegistration(body);
const writes = (calls: readonly { op: string }[]) => calls.filter((c) => c.op === "register" || c.op === "deregister").length;

describe("anti-entropy", () => {
  test("the first full sync registers node info, services and checks", async () => {
    const k = kit();
    k.agent.registerService(svc({ Name: "web", Port: 80, Tags: ["v1"], Check: { TTL: "10s" } }));
    k.agent.registerCheck(chk({ Name: "mem", TTL: "10s" }));
    k.agent.start();
    await run(k.clock, 0);
    expect(k.catalog.nodeOf("node-1")).toMatchObject({
      ID: "11111111-2222-3333-4444-555555555555", Address: "10.0.0.1", TaggedAddresses: { lan: "10.0.0.1" }, Meta: { rack: "a" }, Datacenter: "dc1",
    });
    expect([...k.catalog.servicesOf("node-1").keys()]).toEqual(["web"]);
    expect(k.catalog.servicesOf("node-1").get("web")).toMatchObject({ Service: "web", Port: 80, Tags: ["v1"] });
    expect([...k.catalog.checksOf("node-1").keys()].sort()).toEqual(["mem", "service:web"]);
    // The service's check rode along with the service registration.
    const reg = k.catalog.calls.find((c) => c.op === "register" && (c.req as { Service?: unknown }).Service);
    expect((reg!.req as { Check?: { CheckID: string } }).Check?.CheckID).toBe("service:web");
    expect(k.agent.antiEntropy.stats()).toMatchObject({ fullSyncs: 1, failures: 0 });
    k.agent.stop();
  });

  test("a local change is pushed promptly by a partial sync; changes in one tick coalesce", async () => {
    const k = kit();
    k.agent.start();
    await run(k.clock, 0);
    const before = k.catalog.calls.length;
    k.agent.registerService(svc({ Name: "a", Check: { TTL: "10s" } }));
    k.agent.registerService(svc({ Name: "b" }));
    k.agent.registerCheck(chk({ Name: "c", TTL: "10s" }));
    await run(k.clock, 0);
    const calls = k.catalog.calls.slice(before);
    expect(calls.map((c) => c.op)).toEqual(["register", "register", "register"]);
    expect(k.agent.antiEntropy.stats().partialSyncs).toBe(1);
    expect([...k.catalog.servicesOf("node-1").keys()].sort()).toEqual(["a", "b"]);
    k.agent.deregisterService("a");
    await run(k.clock, 0);
    expect([...k.catalog.servicesOf("node-1").keys()]).toEqual(["b"]);
    expect([...k.catalog.checksOf("node-1").keys()]).toEqual(["c"]);
    k.agent.updateTTL("c", "passing", "ok");
    await run(k.clock, 0);
    expect(k.catalog.checksOf("node-1").get("c")).toMatchObject({ Status: "passing", Output: "ok" });
    k.agent.stop();
  });

  test("syncChanges() resolves once the change is in the catalog", async () => {
    const k = kit();
    k.agent.start();
    await run(k.clock, 0);
    k.agent.registerService(svc({ Name: "web" }));
    let done = false;
    const p = k.agent.syncChanges().then(() => (done = true));
    await p;
    expect(done).toBe(true);
    expect(k.catalog.servicesOf("node-1").has("web")).toBe(true);
    k.agent.stop();
  });

  test("full syncs every interval + stagger repair catalog drift; the consul service and serfHealth are left alone", async () => {
    const k = kit({ aeIntervalMs: 60_000 });
    k.agent.registerService(svc({ Name: "web", Port: 80, Check: { TTL: "1h", Status: "passing" } }));
    k.agent.start();
    await run(k.clock, 0);
    const services = k.catalog.servicesOf("node-1");
    const checks = k.catalog.checksOf("node-1");
    // Drift: someone edits our registration, adds foreign entries, and the servers add theirs.
    services.set("web", { ...services.get("web")!, Port: 9999 });
    services.set("stray", { ...services.get("web")!, ID: "stray", Service: "stray" });
    services.set("consul", { ...services.get("web")!, ID: "consul", Service: "consul", Port: 8300 });
    checks.set("serfHealth", { ...checks.get("service:web")!, CheckID: "serfHealth", Name: "Serf Health Status", ServiceID: "", ServiceName: "", ServiceTags: null });
    checks.set("service:web", { ...checks.get("service:web")!, Status: "critical" });
    checks.set("stray-check", { ...checks.get("service:web")!, CheckID: "stray-check", ServiceID: "" });
    // The next full sync is due within [60 s, 120 s).
    await run(k.clock, 59_999);
    expect(services.get("web")!.Port).toBe(9999);
    await run(k.clock, 60_001);
    expect(k.agent.antiEntropy.stats().fullSyncs).toBe(2);
    expect(services.get("web")!.Port).toBe(80);
    expect([...services.keys()].sort()).toEqual(["consul", "web"]);
    expect([...checks.keys()].sort()).toEqual(["serfHealth", "service:web"]);
    expect(checks.get("service:web")!.Status).toBe("passing");
    k.agent.stop();
  });

  test("a failing catalog is retried with back-off, not in a hot loop; recovery resumes normal syncs", async () => {
    const k = kit({ aeIntervalMs: 60_000, aeRetryFailMs: 15_000 });
    k.catalog.failWith = "rpc error: No cluster leader";
    k.agent.registerService(svc({ Name: "web", Check: { TTL: "1s" } }));
    k.agent.start();
    // The TTL check flaps every second; while backing off none of that reaches the catalog.
    const tick = k.clock.setInterval(1_000, () => k.agent.updateTTL("service:web", "passing", String(k.clock.monotonic())));
    await run(k.clock, 10 * 60_000);
    const attempts = k.catalog.calls.filter((c) => c.op === "nodeServices").length;
    // 15, 30, 60, 60, ... s (+ up to 15 s stagger each) over 10 minutes: about a dozen full-sync attempts.
    expect(attempts).toBeGreaterThanOrEqual(8);
    expect(attempts).toBeLessThanOrEqual(14);
    expect(writes(k.catalog.calls)).toBe(0);
    expect(k.agent.antiEntropy.stats().consecutiveFailures).toBe(attempts);
    expect(k.logs.some((l) => l.includes("failed to sync remote state") && l.includes("No cluster leader"))).toBe(true);
    k.catalog.failWith = undefined;
    await run(k.clock, 2 * 60_000);
    expect(k.agent.antiEntropy.stats().consecutiveFailures).toBe(0);
    expect(k.catalog.servicesOf("node-1").has("web")).toBe(true);
    tick();
    k.agent.stop();
  });

  test("a failing partial sync backs off too", async () => {
    const k = kit();
    k.agent.start();
    await run(k.clock, 0);
    k.catalog.failWith = "connection reset";
    const before = k.catalog.calls.length;
    for (let i = 0; i < 50; i++) {
      k.agent.registerCheck(chk({ Name: `c${i}`, TTL: "1h" }));
      await run(k.clock, 100);
    }
    // One failed write, then silence until the back-off's full sync (15 s + stagger away).
    expect(k.catalog.calls.slice(before).map((c) => c.op)).toEqual(["register"]);
    k.catalog.failWith = undefined;
    await run(k.clock, 60_000);
    expect(k.catalog.checksOf("node-1").size).toBe(50);
    k.agent.stop();
  });

  test("EnableTagOverride: the catalog's tags win and are adopted locally; without it local tags are restored", async () => {
    const k = kit();
    k.agent.registerService(svc({ Name: "web", Tags: ["local"], EnableTagOverride: true }));
    k.agent.registerService(svc({ Name: "db", Tags: ["local"] }));
    k.agent.start();
    await run(k.clock, 0);
    const services = k.catalog.servicesOf("node-1");
    services.set("web", { ...services.get("web")!, Tags: ["external"] });
    services.set("db", { ...services.get("db")!, Tags: ["external"] });
    k.agent.antiEntropy.triggerFullSync();
    await run(k.clock, 3_000);
    expect(services.get("web")!.Tags).toEqual(["external"]);
    expect(k.agent.service("web")!.Tags).toEqual(["external"]);
    expect(services.get("db")!.Tags).toEqual(["local"]);
    k.agent.stop();
  });

  test("output-only changes are deferred to check_update_interval; status changes sync at once", async () => {
    const k = kit({ checkUpdateIntervalMs: 5 * 60_000 }, 9);
    k.agent.registerCheck(chk({ Name: "c", TTL: "1h" }));
    k.agent.updateTTL("c", "passing", "v1");
    k.agent.start();
    await run(k.clock, 0);
    const remote = () => k.catalog.checksOf("node-1").get("c")!;
    expect(remote()).toMatchObject({ Status: "passing", Output: "v1" });
    k.agent.updateTTL("c", "passing", "v2");
    await run(k.clock, 1_000);
    expect(remote().Output).toBe("v1");
    expect(k.agent.check("c")!.Output).toBe("v2");
    // The deferred write lands between interval/2 and interval * 1.5.
    await run(k.clock, 149_000 - 1_000);
    expect(remote().Output).toBe("v1");
    await run(k.clock, 300_000);
    expect(remote().Output).toBe("v2");
    k.agent.updateTTL("c", "warning", "v3");
    await run(k.clock, 0);
    expect(remote()).toMatchObject({ Status: "warning", Output: "v3" });
    k.agent.stop();
  });

  test("node info changes are synced", async () => {
    const k = kit();
    k.agent.start();
    await run(k.clock, 0);
    k.agent.setNodeInfo({ meta: { rack: "b" } });
    await run(k.clock, 0);
    expect(k.catalog.nodeOf("node-1")!.Meta).toEqual({ rack: "b" });
    k.agent.stop();
  });

  test("pause holds syncs; resume triggers a partial sync", async () => {
    const k = kit();
    k.agent.start();
    await run(k.clock, 0);
    k.agent.antiEntropy.pause();
    k.agent.registerService(svc({ Name: "web" }));
    await run(k.clock, 1_000);
    expect(k.catalog.servicesOf("node-1").has("web")).toBe(false);
    k.agent.antiEntropy.resume();
    await run(k.clock, 0);
    expect(k.catalog.servicesOf("node-1").has("web")).toBe(true);
    k.agent.stop();
  });

  test("periods stretch with cluster size like Consul's aeScale", () => {
    expect([1, 128, 129, 256, 257, 512, 8192].map(aeScaleFactor)).toEqual([1, 1, 2, 2, 3, 3, 7]);
    const clock = simClock();
    const state = new LocalState({ nodeName: "n", datacenter: "dc1", node: { nodeId: "", address: "", taggedAddresses: {}, meta: {} }, clock, rng: seededRng(1) });
    const ae = createAntiEntropy({ state, catalog: createMemoryCatalog(), clock, rng: seededRng(5), logger: silentLogger(), clusterSize: () => 1000 });
    ae.start();
    return run(clock, 0).then(() => {
      // 1 minute + stagger of up to 4 x 1 minute for 1000 nodes.
      const next = clock.nextAt()!;
      expect(next).toBeGreaterThanOrEqual(60_000);
      expect(next).toBeLessThan(60_000 + 4 * 60_000);
      expect(next - 60_000).toBeCloseTo(seededRng(5).next() * 4 * 60_000, 6);
      ae.stop();
    });
  });
});

describe("anti-entropy: a full sync asked for while one is in flight", () => {
  test("is not postponed by the in-flight run's failure retry (the ACL master token written meanwhile)", async () => {
    const k = kit();
    k.catalog.failWith = "ACL not found";
    k.agent.start(); // the first full sync starts and fails; its retry is about 15 s away
    k.agent.antiEntropy.triggerFullSync(); // asked for while it is in flight: due within the 3 s stagger
    k.catalog.failWith = undefined;
    await run(k.clock, 3_000);
    expect(k.agent.antiEntropy.stats()).toMatchObject({ failures: 1, fullSyncs: 1 });
    expect(k.catalog.nodeOf("node-1")).toBeDefined();
    k.agent.stop();
  });
});
