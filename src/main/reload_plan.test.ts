import { describe, expect, test } from "bun:test";
import { buildConfig, defaultConfig, parseConfigJson, type RuntimeConfig } from "./config.ts";
import { planReload, runningAfterReload } from "./reload_plan.ts";

/** A runtime config as the agent builds it from one JSON config file. */
const configOf = (doc: Record<string, unknown>): RuntimeConfig => buildConfig(defaultConfig("h"), [parseConfigJson("c.json", { data_dir: "/d", ...doc })]);

const web = { name: "web", port: 80, check: { id: "web-ttl", ttl: "30s" } };
const api = { id: "api-1", name: "api", port: 81 };

describe("planReload", () => {
  test("the same configuration removes nothing and registers every definition again, none changed", () => {
    const c = configOf({ services: [web, api], checks: [{ id: "disk", name: "disk", ttl: "1m" }] });
    const plan = planReload(c, configOf({ services: [web, api], checks: [{ id: "disk", name: "disk", ttl: "1m" }] }));
    expect([plan.removeServices, plan.removeServiceChecks, plan.removeChecks, plan.restartNeeded]).toEqual([[], [], [], []]);
    expect(plan.registerServices.map((d) => d.id)).toEqual(["web", "api-1"]);
    expect(plan.registerChecks.map((d) => d.id)).toEqual(["disk"]);
    expect(plan.changed).toEqual({ services: 0, checks: 0 });
    expect(plan.logLevel).toBeUndefined();
  });

  test("services and checks: removed by ID, the rest registered again, the new and changed counted", () => {
    const before = configOf({ services: [web, api], checks: [{ id: "disk", name: "disk", ttl: "1m" }, { id: "mem", name: "mem", ttl: "1m" }] });
    const after = configOf({ services: [{ ...web, port: 8080 }, { name: "db", port: 5432 }], checks: [{ id: "disk", name: "disk", ttl: "1m" }, { name: "load", ttl: "2m" }] });
    const plan = planReload(before, after);
    expect(plan.removeServices).toEqual(["api-1"]);
    expect(plan.registerServices.map((d) => [d.id, d.reg.Port])).toEqual([["web", 8080], ["db", 5432]]);
    expect(plan.removeChecks).toEqual(["mem"]);
    expect(plan.registerChecks.map((d) => d.id)).toEqual(["disk", "load"]);
    expect(plan.changed).toEqual({ services: 2, checks: 1 });
    // web's embedded check is still defined: nothing of it to remove.
    expect(plan.removeServiceChecks).toEqual([]);
    expect(plan.restartNeeded).toEqual([]);
  });

  test("a changed service's dropped embedded checks are named for removal", () => {
    const two = { ...web, check: undefined, checks: [{ id: "a", name: "a", ttl: "1m" }, { name: "b", ttl: "1m" }] };
    const plan = planReload(configOf({ services: [two] }), configOf({ services: [{ ...two, checks: [{ id: "a", name: "a", ttl: "1m" }] }] }));
    expect(plan.removeServiceChecks).toEqual(["service:web:2"]);
  });

  test("a definition whose token changed is registered again with it", () => {
    const plan = planReload(configOf({ services: [web] }), configOf({ services: [{ ...web, token: "t-2" }] }));
    expect(plan.registerServices.map((d) => [d.id, d.token])).toEqual([["web", "t-2"]]);
  });

  test("log_level and acl.tokens are reloaded; other changes are named as needing a restart", () => {
    const before = configOf({ log_level: "info", ports: { http: 8500 }, acl: { tokens: { agent: "a1" } } });
    const after = configOf({ log_level: "debug", ports: { http: 8501, dns: 8601 }, datacenter: "east", node_meta: { rack: "r1" }, acl: { tokens: { agent: "a2", master: "m2" } } });
    const plan = planReload(before, after);
    expect(plan.logLevel).toBe("debug");
    expect(plan.tokens?.agent).toBe("a2");
    expect(plan.restartNeeded).toEqual(["acl.tokens.master", "datacenter", "node_meta.rack", "ports.dns", "ports.http", "primary_datacenter"]);
  });
});

describe("runningAfterReload", () => {
  test("takes the reloaded parts; a failed definition stays as it ran (or absent when new), so the next reload counts it changed again", () => {
    const before = configOf({ log_level: "info", ports: { http: 8500 }, services: [web, api] });
    const after = configOf({ log_level: "debug", ports: { http: 8501 }, services: [{ ...web, port: 8080 }, { ...api, port: 9 }, { name: "db", port: 1 }] });
    const running = runningAfterReload(before, after, { services: new Set(["web", "db"]), checks: new Set() });
    expect(running.logLevel).toBe("debug");
    expect(running.ports.http).toBe(8500);
    expect(running.definitions.services.map((s) => [s.ID || s.Name, s.Port])).toEqual([["web", 80], ["api-1", 9]]);
    expect(planReload(running, after).changed.services).toBe(2);
  });
});
