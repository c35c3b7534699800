import { describe, expect, test } from "bun:test";
import { simClock } from "../../test/harness/sim_clock.ts";
import type { HealthCheck, HealthStatus } from "../model/index.ts";
import { flush, kit, run } from "./agent_test_kit.test.ts";
import { aliasHealth, ALIAS_IDLE_RETRY_MS, ALIAS_QUERY_WAIT_MS, startRemoteAliasCheck } from "./alias_check.ts";
import type { NodeChecksResult } from "./ports.ts";
import { emptyCheckType } from "./convert.ts";

const chk = (Node: string, CheckID: string, ServiceID: string, Status: HealthStatus, Output = ""): HealthCheck => ({
  Node, CheckID, Name: CheckID, ServiceID, Status, Output, Notes: "", ServiceName: ServiceID, ServiceTags: null, Type: "", Definition: {}, CreateIndex: 1, ModifyIndex: 1,
});

describe("aliasHealth (Consul's processChecks)", () => {
  test("node checks and the aliased service's checks count; the first critical wins, else the last warning", () => {
    expect(aliasHealth([], "self", "n2", "db")).toEqual({ status: "passing", output: "No checks found." });
    const checks = [chk("n2", "serfHealth", "", "passing"), chk("n2", "db-1", "db", "passing"), chk("n2", "web", "web", "critical", "down")];
    expect(aliasHealth(checks, "self", "n2", "db")).toEqual({ status: "passing", output: "All checks passing." });
    const warn = [...checks, chk("n2", "db-2", "db", "warning", "slow"), chk("n2", "db-3", "db", "warning", "slower")];
    expect(aliasHealth(warn, "self", "n2", "db")).toEqual({ status: "warning", output: 'Aliased check "db-3" failing: slower' });
    const crit = [chk("n2", "disk", "", "critical", "full"), chk("n2", "db-2", "db", "warning", "slow")];
    expect(aliasHealth(crit, "self", "n2", "db")).toEqual({ status: "critical", output: 'Aliased check "disk" failing: full' });
    // Another node's checks do not count; with no AliasService only node checks do.
    expect(aliasHealth([chk("n3", "disk", "", "critical")], "self", "n2", "db").status).toBe("passing");
    expect(aliasHealth([chk("n2", "db-1", "db", "critical")], "self", "n2", "").output).toBe("No checks found.");
  });
});

function remoteHarness(serviceId = "db") {
  const clock = simClock();
  const calls: { node: string; minIndex: number; maxWaitMs: number; answer: (r: NodeChecksResult) => void; fail: (e: Error) => void }[] = [];
  const updates: [HealthStatus, string][] = [];
  const runner = startRemoteAliasCheck({
    checkId: "alias", node: "n2", serviceId, clock, notify: (_id, s, o) => void updates.push([s, o]),
    watch: (node, minIndex, maxWaitMs) => new Promise((answer, fail) => void calls.push({ node, minIndex, maxWaitMs, answer, fail })),
  });
  return { clock, calls, updates, runner };
}

describe("remote alias check (AliasNode)", () => {
  test("blocks on the node's checks from the last index and mirrors each answer", async () => {
    const h = remoteHarness();
    expect(h.calls.map((c) => [c.node, c.minIndex, c.maxWaitMs])).toEqual([["n2", 0, ALIAS_QUERY_WAIT_MS]]);
    h.calls[0]!.answer({ index: 7, checks: [chk("n2", "db-1", "db", "passing")] });
    await flush();
    expect(h.updates).toEqual([["passing", "All checks passing."]]);
    expect(h.calls[1]!.minIndex).toBe(7);
    h.calls[1]!.answer({ index: 9, checks: [chk("n2", "db-1", "db", "critical", "dead")] });
    await flush();
    expect(h.updates.at(-1)).toEqual(["critical", 'Aliased check "db-1" failing: dead']);
    // An answer that did not move the index is followed by a pause; an index of 0 still blocks next time
    // (Consul's MinQueryIndex floor of 1).
    h.calls[2]!.answer({ index: 0, checks: [] });
    await flush();
    expect(h.calls.length).toBe(3);
    await run(h.clock, ALIAS_IDLE_RETRY_MS);
    expect(h.calls[3]!.minIndex).toBe(1);
    h.runner.stop();
    h.calls[3]!.answer({ index: 10, checks: [chk("n2", "x", "", "critical")] });
    await flush();
    expect(h.updates.length).toBe(3);
    expect(h.calls.length).toBe(4);
  });

  test("failures: the first is silent, later ones are critical; past 3 in a row it backs off 2^(n-3) s up to a minute", async () => {
    const h = remoteHarness();
    const failNext = async () => {
      h.calls.at(-1)!.fail(new Error("No cluster leader"));
      await flush();
    };
    await failNext();
    expect(h.updates).toEqual([]);
    expect(h.calls.length).toBe(2);
    await failNext();
    await failNext();
    expect(h.updates).toEqual([
      ["critical", "Failure checking aliased node or service: No cluster leader"],
      ["critical", "Failure checking aliased node or service: No cluster leader"],
    ]);
    expect(h.calls.length).toBe(4);
    await failNext(); // 4th failure: wait 2 s
    expect(h.calls.length).toBe(4);
    await run(h.clock, 1_999);
    expect(h.calls.length).toBe(4);
    await run(h.clock, 1);
    expect(h.calls.length).toBe(5);
    for (let i = 0; i < 6; i++) {
      await failNext();
      await run(h.clock, 60_000);
    }
    await failNext(); // 11th failure: 2^8 s capped at 60 s
    await run(h.clock, 59_999);
    const before = h.calls.length;
    await run(h.clock, 1);
    expect(h.calls.length).toBe(before + 1);
    h.calls.at(-1)!.answer({ index: 3, checks: [] });
    await flush();
    expect(h.updates.at(-1)).toEqual(["passing", "No checks found."]);
    expect(h.calls.length).toBe(before + 2); // success resets: no wait
    h.runner.stop();
  });
});

describe("alias checks through the agent", () => {
  test("AliasService without AliasNode follows the local service; with AliasNode the catalog watch", async () => {
    const answers: NodeChecksResult[] = [{ index: 4, checks: [chk("n2", "db", "db", "warning", "lagging")] }];
    const asked: [string, number][] = [];
    const k = kit({
      probes: {
        http: async () => ({ status: 200, statusText: "OK", body: "" }), tcp: async () => {},
        nodeChecks: (node, minIndex) => {
          asked.push([node, minIndex]);
          const a = answers.shift();
          return a ? Promise.resolve(a) : new Promise(() => {});
        },
      },
    });
    k.agent.registerService({
      Kind: "", ID: "web", Name: "web", Tags: null, Address: "", TaggedAddresses: undefined, Meta: null, Port: 80, Weights: undefined,
      EnableTagOverride: false, Proxy: undefined, Connect: undefined, Checks: [{ ...emptyCheckType(), CheckID: "web-ttl", TTLMs: 60_000 }],
    });
    k.agent.registerCheck({ ...emptyCheckType(), CheckID: "local", Name: "local", ServiceID: "", AliasService: "web" });
    await run(k.clock, 1);
    expect(k.agent.check("local")).toMatchObject({ Status: "critical", Output: 'Aliased check "Service \'web\' check" failing: ', Type: "alias" });
    k.agent.updateTTL("web-ttl", "passing", "fine");
    expect(k.agent.check("local")).toMatchObject({ Status: "passing", Output: "All checks passing." });
    k.agent.registerCheck({ ...emptyCheckType(), CheckID: "remote", Name: "remote", ServiceID: "", AliasNode: "n2", AliasService: "db" });
    await run(k.clock, 1);
    expect(k.agent.check("remote")).toMatchObject({ Status: "warning", Output: 'Aliased check "db" failing: lagging', Type: "alias" });
    // The remote alias is a node check here, so the local alias mirrors it too (as in Consul).
    expect(k.agent.check("local")).toMatchObject({ Status: "warning", Output: 'Aliased check "remote" failing: Aliased check "db" failing: lagging' });
    expect(asked).toEqual([["n2", 0], ["n2", 4]]);
    k.agent.stop();
  });

  test("AliasNode is refused when the agent cannot read the catalog", () => {
    const k = kit();
    expect(() => k.agent.registerCheck({ ...emptyCheckType(), CheckID: "a", Name: "a", ServiceID: "", AliasNode: "n2" }))
      .toThrow("alias checks of another node cannot run on this agent: it cannot read the catalog");
    expect(k.agent.check("a")).toBeUndefined();
  });
});
