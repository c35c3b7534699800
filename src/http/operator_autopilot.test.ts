import { beforeEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { AUTOPILOT_DEFAULTS, type AutopilotConfig } from "../model/index.ts";
import type { StateCommand } from "../state/index.ts";
import type { StateAccess } from "./deps.ts";
import type { AutopilotHealthApi, AutopilotServerHealthView } from "./deps.ts";
import { mountOperatorAutopilot } from "./operator_autopilot.ts";

const PATH = "/v1/operator/autopilot/configuration";

let stored: AutopilotConfig | null;
let writes: StateCommand[];
let reads: unknown[];
let index: number;
let health: Awaited<ReturnType<AutopilotHealthApi["serverHealth"]>>;
let healthDcs: (string | undefined)[];

/** A replicated state holding one autopilot configuration, with Consul's CAS on its ModifyIndex. */
const state: StateAccess = {
  async read(q, options) {
    reads.push({ q, options });
    return { value: (q.type as string) === "autopilot-config" ? stored : null, meta: { index, knownLeader: true, lastContactMs: 0 } } as never;
  },
  async write(cmd) {
    writes.push(cmd);
    const c = cmd as unknown as { type: string; config: Omit<AutopilotConfig, "CreateIndex" | "ModifyIndex">; cas?: number };
    if (c.type !== "autopilot") return { type: "error", error: "unexpected command" } as never;
    if (c.cas !== undefined && stored?.ModifyIndex !== c.cas) return { type: "cas", ok: false } as never;
    index++;
    stored = { ...c.config, CreateIndex: stored?.CreateIndex ?? index, ModifyIndex: index };
    return (c.cas !== undefined ? { type: "cas", ok: true } : { type: "ok" }) as never;
  },
};

const autopilot: AutopilotHealthApi = {
  async serverHealth(dc) {
    healthDcs.push(dc);
    if (dc === "nowhere") throw new Error("No path to datacenter");
    return health;
  },
};

function app(deps = { state, autopilot }) {
  const a = new Hono();
  mountOperatorAutopilot(a, deps);
  return a;
}
const put = (body: string, q = "") => app().request(`${PATH}${q}`, { method: "PUT", body });

const server = (over: Partial<AutopilotServerHealthView>): AutopilotServerHealthView => ({
  id: "id-a", name: "s-a", address: "10.0.0.1:8300", serfStatus: "alive", version: "0.1.0", leader: false, voter: true, healthy: true,
  lastContactMs: 12.5, lastTerm: 3, lastIndex: 40, stableSinceMs: Date.UTC(2024, 0, 2, 3, 4, 5, 600), ...over,
});

beforeEach(() => {
  stored = { ...AUTOPILOT_DEFAULTS, CreateIndex: 4, ModifyIndex: 4 };
  writes = [];
  reads = [];
  index = 10;
  healthDcs = [];
  health = { healthy: true, failureTolerance: 1, servers: [server({ leader: true, lastContactMs: 0 }), server({ id: "id-b", name: "s-b" })] };
});

describe("GET /v1/operator/autopilot/configuration", () => {
  test("answers api.AutopilotConfiguration with Go duration strings", async () => {
    const res = await app().request(`${PATH}?dc=dc1&stale`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      CleanupDeadServers: true, LastContactThreshold: "200ms", MaxTrailingLogs: 250, MinQuorum: 0, ServerStabilizationTime: "10s",
      RedundancyZoneTag: "", DisableUpgradeMigration: false, UpgradeVersionTag: "", CreateIndex: 4, ModifyIndex: 4,
    });
    expect(reads).toEqual([{ q: { type: "autopilot-config" }, options: { datacenter: "dc1", consistency: "stale", minIndex: 0, maxWaitMs: 0 } }]);
  });

  test("?index= does not block (not a blocking query in Consul); bad read options are 400", async () => {
    await app().request(`${PATH}?index=7`);
    expect(reads).toEqual([{ q: { type: "autopilot-config" }, options: { datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0 } }]);
    const bad = await app().request(`${PATH}?stale&consistent`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe("Cannot specify ?stale with ?consistent, conflicting semantics.\n");
  });

  test("before the leader wrote one: 500 with Consul's message; without the state: 500", async () => {
    stored = null;
    const res = await app().request(PATH);
    expect([res.status, await res.text()]).toEqual([500, "autopilot config not initialized yet\n"]);
    const none = await app({ state: undefined as never, autopilot }).request(PATH);
    expect(none.status).toBe(500);
  });
});

describe("PUT /v1/operator/autopilot/configuration", () => {
  test("writes the whole configuration and answers true; fields left out are Go's zero values", async () => {
    const res = await put(JSON.stringify({ cleanupdeadservers: false, LastContactThreshold: "1s", MaxTrailingLogs: 5, ServerStabilizationTime: 2_500_000_000, Extra: 1 }));
    expect([res.status, await res.text()]).toEqual([200, "true"]);
    expect(writes).toEqual([{
      type: "autopilot", op: "set-config",
      config: {
        CleanupDeadServers: false, LastContactThresholdMs: 1000, MaxTrailingLogs: 5, MinQuorum: 0, ServerStabilizationTimeMs: 2500,
        RedundancyZoneTag: "", DisableUpgradeMigration: false, UpgradeVersionTag: "",
      },
    } as never]);
    const back = await (await app().request(PATH)).json();
    expect(back).toMatchObject({ CleanupDeadServers: false, LastContactThreshold: "1s", ServerStabilizationTime: "2.5s", ModifyIndex: 11, CreateIndex: 4 });
  });

  test("?cas= answers whether the check-and-set won; a lost one changes nothing", async () => {
    const body = JSON.stringify({ CleanupDeadServers: true, LastContactThreshold: "300ms", MaxTrailingLogs: 100, ServerStabilizationTime: "5s", MinQuorum: 3 });
    const lost = await put(body, "?cas=3");
    expect([lost.status, await lost.text()]).toEqual([200, "false"]);
    expect(stored!.ModifyIndex).toBe(4);
    expect(stored!.LastContactThresholdMs).toBe(200);
    const won = await put(body, "?cas=4");
    expect([won.status, await won.text()]).toEqual([200, "true"]);
    expect(stored).toMatchObject({ MinQuorum: 3, LastContactThresholdMs: 300, ModifyIndex: 11 });
    expect((writes as unknown as { cas?: number }[]).map((w) => w.cas)).toEqual([3, 4]);
  });

  const refusals: [string, string, string, string][] = [
    ["an empty body", "", "", "Error parsing autopilot config: EOF"],
    ["malformed JSON", "{", "", "Error parsing autopilot config: "],
    ["a bad duration", '{"LastContactThreshold":"fast"}', "", "Error parsing autopilot config: time: invalid duration fast"],
    ["a duration of the wrong JSON type", '{"ServerStabilizationTime":true}', "", 'Error parsing autopilot config: strconv.ParseFloat: parsing "true": invalid syntax'],
    ["a string where a count goes", '{"MaxTrailingLogs":"250"}', "", "Error parsing autopilot config: json: cannot unmarshal string into Go struct field AutopilotConfiguration.MaxTrailingLogs of type uint64"],
    ["a negative count", '{"MinQuorum":-1}', "", "Error parsing autopilot config: json: cannot unmarshal number -1 into Go struct field AutopilotConfiguration.MinQuorum of type uint64"],
    ["a bool of the wrong type", '{"CleanupDeadServers":"yes"}', "", "Error parsing autopilot config: json: cannot unmarshal string into Go struct field AutopilotConfiguration.CleanupDeadServers of type bool"],
    ["a negative duration", '{"LastContactThreshold":"-1s"}', "", "Error parsing autopilot config: LastContactThreshold must not be negative, got -1s"],
    ["a count past 2^53", '{"MaxTrailingLogs":18446744073709551615}', "", "Error parsing autopilot config: MaxTrailingLogs 18446744073709551615 is too large (at most 9007199254740991)"],
    ["a duration past Go's int64 of nanoseconds", '{"ServerStabilizationTime":1e300}', "", "Error parsing autopilot config: ServerStabilizationTime is out of range"],
    ["an overflowing duration", '{"LastContactThreshold":1e400}', "", "Error parsing autopilot config: "],
    ["a bad cas", "{}", "?cas=abc", 'Error parsing cas value: strconv.ParseUint: parsing "abc": invalid syntax'],
    ["an empty cas", "{}", "?cas", 'Error parsing cas value: strconv.ParseUint: parsing "": invalid syntax'],
  ];
  for (const [name, body, q, message] of refusals) {
    test(`${name}: 400, nothing written`, async () => {
      const res = await put(body, q);
      expect(res.status).toBe(400);
      expect(await res.text()).toStartWith(message);
      expect(writes).toEqual([]);
    });
  }

  test("durations in nanoseconds keep whole milliseconds, a remainder rounding up (found by the fuzzer: 1.5 ms was a 500)", async () => {
    const res = await put('{"LastContactThreshold":1500000,"ServerStabilizationTime":1}', "");
    expect(res.status).toBe(200);
    expect(writes).toMatchObject([{ config: { LastContactThresholdMs: 2, ServerStabilizationTimeMs: 1 } }]);
  });

  test("a refusal by the state store is 400 with its message", async () => {
    const refusing: StateAccess = { ...state, write: async (cmd) => (writes.push(cmd), { type: "error", error: "invalid autopilot configuration" } as never) };
    const res = await app({ state: refusing, autopilot }).request(PATH, { method: "PUT", body: "{}" });
    expect([res.status, await res.text()]).toEqual([400, "invalid autopilot configuration\n"]);
  });
});

describe("GET /v1/operator/autopilot/health", () => {
  test("answers api.OperatorHealthReply: durations as Go strings, StableSince rounded to the second in UTC", async () => {
    const res = await app().request("/v1/operator/autopilot/health?dc=dc1");
    expect(res.status).toBe(200);
    expect(healthDcs).toEqual(["dc1"]);
    const body = await res.json();
    expect(body).toEqual({
      Healthy: true,
      FailureTolerance: 1,
      Servers: [
        { ID: "id-a", Name: "s-a", Address: "10.0.0.1:8300", SerfStatus: "alive", Version: "0.1.0", Leader: true, LastContact: "0s", LastTerm: 3, LastIndex: 40, Healthy: true, Voter: true, StableSince: "2024-01-02T03:04:06Z" },
        { ID: "id-b", Name: "s-b", Address: "10.0.0.1:8300", SerfStatus: "alive", Version: "0.1.0", Leader: false, LastContact: "12.5ms", LastTerm: 3, LastIndex: 40, Healthy: true, Voter: true, StableSince: "2024-01-02T03:04:06Z" },
      ],
    });
  });

  test("unhealthy is 429 with the same body; unknown contact is -1ns, never-judged StableSince is Go's zero time", async () => {
    health = { healthy: false, failureTolerance: 0, servers: [server({ serfStatus: "none", healthy: false, lastContactMs: undefined, stableSinceMs: undefined, name: "" })] };
    const res = await app().request("/v1/operator/autopilot/health");
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ Healthy: false, Servers: [{ LastContact: "-1ns", StableSince: "0001-01-01T00:00:00Z", SerfStatus: "none" }] });
  });

  test("no servers judged yet: Servers is null (a nil slice), 429", async () => {
    health = { healthy: false, failureTolerance: 0, servers: [] };
    const res = await app().request("/v1/operator/autopilot/health");
    expect([res.status, await res.json()]).toEqual([429, { Healthy: false, FailureTolerance: 0, Servers: null }]);
  });

  test("an unknown datacenter is 400; without the health dependency, 500", async () => {
    const res = await app().request("/v1/operator/autopilot/health?dc=nowhere");
    expect([res.status, await res.text()]).toEqual([400, "No path to datacenter\n"]);
    const none = await app({ state, autopilot: undefined as never }).request("/v1/operator/autopilot/health");
    expect(none.status).toBe(500);
  });
});
