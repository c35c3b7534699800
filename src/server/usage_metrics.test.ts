import { describe, expect, test } from "bun:test";
import { createStateStore, type StateCommand } from "../state/index.ts";
import { caConfig, intention, root, setRoots, upsert } from "../state/connect_fixtures.test.ts";
import { MetricsRegistry } from "../telemetry/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { recordUsageMetrics, USAGE_METRICS_INTERVAL_MS } from "./usage_metrics.ts";

describe("usage metrics", () => {
  test("state counts every interval; the active root's expiry in seconds; a new active root counts a rotation", () => {
    const clock = simClock(Date.parse("2029-12-31T00:00:00Z"));
    const store = createStateStore({ clock });
    let index = 0;
    const apply = (cmd: StateCommand) => store.apply(++index, cmd);
    apply({ type: "register", req: { Node: "n1", Address: "10.0.0.1", Service: { ID: "web-1", Service: "web" } } });
    apply({ type: "register", req: { Node: "n2", Address: "10.0.0.2", Service: { ID: "web-2", Service: "web" } } });
    apply({ type: "register", req: { Node: "n2", Address: "10.0.0.2", Service: { ID: "db", Service: "db" } } });
    for (const k of ["a", "b", "c"]) apply({ type: "kv", op: "set", entry: { Key: k } });
    apply(upsert(intention("0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", "web", "db")));
    apply(setRoots([root("r1", true)], 0, caConfig()));
    const rootsIndex = index;
    const registry = new MetricsRegistry({ now: () => clock.now() });
    const stop = recordUsageMetrics(store, registry, clock);
    const value = (name: string) => registry.series().find((s) => s.name === `consul.${name}`)!;
    expect(["state.nodes", "state.services", "state.service_instances", "state.kv_entries", "state.intentions"].map((n) => value(n).value)).toEqual([2, 2, 3, 3, 1]);
    expect(value("mesh.active-root-ca.expiry").value).toBe(86_400); // one day before 2030-01-01
    apply({ type: "kv", op: "delete", entry: { Key: "a" } });
    apply(setRoots([root("r1", false), root("r2", true)], rootsIndex));
    clock.advance(USAGE_METRICS_INTERVAL_MS);
    expect(value("state.kv_entries").value).toBe(2);
    expect(value("connect.ca.root.rotations").total).toBe(1);
    stop();
  });
});
