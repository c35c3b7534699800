import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import type { RegisterRequest } from "../model/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { LocalState, type LocalCheck, type LocalService } from "./local_state.ts";
import { createMemoryCatalog } from "./memory_catalog.ts";
import { syncChanges, syncFull } from "./sync.ts";

const logger = silentLogger();

function setup() {
  const clock = simClock();
  const state = new LocalState({
    nodeName: "n1", datacenter: "dc1", clock, rng: seededRng(1), checkUpdateIntervalMs: 0,
    node: { nodeId: "id-1", address: "10.0.0.1", taggedAddresses: {}, meta: {} },
  });
  return { clock, state, catalog: createMemoryCatalog() };
}

const service = (id: string, extra: Partial<LocalService> = {}): LocalService => ({
  ID: id, Service: id, Tags: null, Address: "", Meta: null, Port: 0, Weights: { Passing: 1, Warning: 1 },
  EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, ...extra,
});
const check = (id: string, serviceId = "", extra: Partial<LocalCheck> = {}): LocalCheck => ({
  Node: "n1", CheckID: id, Name: id, Status: "critical", Notes: "", Output: "", ServiceID: serviceId,
  ServiceName: serviceId, ServiceTags: null, Type: "ttl", Definition: {}, ...extra,
});

describe("sync passes", () => {
  test("an in-sync state writes nothing on the next full sync, even if the catalog returns [] for null", async () => {
    const { state, catalog } = setup();
    state.addService(service("web"));
    state.addCheck(check("c", "web"));
    await syncFull(state, catalog, logger);
    const services = catalog.servicesOf("n1");
    services.set("web", { ...services.get("web")!, Tags: [], Meta: {} });
    const before = catalog.calls.length;
    await syncFull(state, catalog, logger);
    expect(catalog.calls.slice(before).map((c) => c.op)).toEqual(["nodeServices", "nodeChecks"]);
  });

  test("re-adding an identical service does not write again", async () => {
    const { state, catalog } = setup();
    state.addService(service("web", { Port: 1 }));
    await syncChanges(state, catalog, logger);
    state.addService(service("web", { Port: 1 }));
    const before = catalog.calls.length;
    await syncChanges(state, catalog, logger);
    expect(catalog.calls.length).toBe(before);
  });

  test("a change that lands while its write is in flight stays out of sync and goes out next time", async () => {
    const { state, catalog } = setup();
    state.addService(service("web"));
    state.addCheck(check("c", "web"));
    await syncChanges(state, catalog, logger);
    let release: () => void = () => {};
    const register = catalog.register.bind(catalog);
    catalog.register = async (req: RegisterRequest) => {
      await new Promise<void>((resolve) => (release = resolve));
      return register(req);
    };
    state.updateCheck("c", "passing", "first");
    const inFlight = syncChanges(state, catalog, logger);
    await Promise.resolve();
    state.updateCheck("c", "warning", "second");
    release();
    await inFlight;
    expect(catalog.checksOf("n1").get("c")!.Status).toBe("passing");
    expect(state.checkEntries.get("c")!.inSync).toBe(false);
    catalog.register = register;
    await syncChanges(state, catalog, logger);
    expect(catalog.checksOf("n1").get("c")).toMatchObject({ Status: "warning", Output: "second" });
  });

  test("ACL denials mark entries in sync (no retry storm); 'Unknown service' on deregister counts as done", async () => {
    const { state, catalog } = setup();
    state.addService(service("web"));
    catalog.register = async () => {
      throw new Error("Permission denied");
    };
    await syncChanges(state, catalog, logger);
    expect(state.serviceEntries.get("web")!.inSync).toBe(true);
    state.removeService("web");
    catalog.deregister = async () => {
      throw new Error(`Unknown service "web"`);
    };
    await syncChanges(state, catalog, logger);
    expect(state.serviceEntries.has("web")).toBe(false);
  });

  test("other errors reject the pass", async () => {
    const { state, catalog } = setup();
    state.addService(service("web"));
    catalog.failWith = "rpc error: No cluster leader";
    await expect(syncChanges(state, catalog, logger)).rejects.toThrow("No cluster leader");
    expect(state.serviceEntries.get("web")!.inSync).toBe(false);
  });
});

describe("sync with ACL tokens", () => {
  test("node info syncs first with the agent's token (undefined); services and checks with their registration tokens; deletes with the entry's", async () => {
    const { state, catalog } = setup();
    const seen: string[] = [];
    const register = catalog.register.bind(catalog);
    const deregister = catalog.deregister.bind(catalog);
    catalog.register = async (req: RegisterRequest, token?: string) => {
      seen.push(`register ${req.Service?.ID ?? (req.Check ? `check ${req.Check.CheckID}` : "node")} ${token ?? "agent"}`);
      return register(req);
    };
    catalog.deregister = async (req, token?: string) => {
      seen.push(`deregister ${req.ServiceID ?? req.CheckID} ${token ?? "agent"}`);
      return deregister(req);
    };
    state.setNodeInfo({ address: "10.0.0.2" });
    state.addService(service("web"), undefined, "web-secret");
    state.addCheck(check("mem"), "check-secret");
    state.addService(service("db"));
    await syncFull(state, catalog, logger);
    // Node info first, with the agent token, so that services need no node:write (their tokens rarely have it).
    expect(seen).toEqual(["register node agent", "register db ", "register web web-secret", "register check mem check-secret"]);
    expect([state.serviceToken("web"), state.checkToken("mem"), state.serviceToken("db")]).toEqual(["web-secret", "check-secret", ""]);
    seen.length = 0;
    state.addService(service("web", { Port: 81 })); // a re-registration without a token keeps the one it had
    state.removeService("db");
    await syncChanges(state, catalog, logger);
    expect(seen).toEqual(["deregister db ", "register web web-secret"]);
  });

  test("node info alone syncs with the agent's token", async () => {
    const { state, catalog } = setup();
    const tokens: (string | undefined)[] = [];
    const register = catalog.register.bind(catalog);
    catalog.register = async (req: RegisterRequest, token?: string) => {
      tokens.push(token);
      return register(req);
    };
    await syncFull(state, catalog, logger);
    expect(tokens).toEqual([undefined]);
  });
});
