/**
 * The cache types proxycfg watches, over a fake state reader: what each reads, how it narrows the
 * result, and the index it reports.
 */
import { describe, expect, test } from "bun:test";
import type { CheckServiceNode, Intention, ReadQuery } from "../../model/index.ts";
import { silentLogger } from "../../platform/index.ts";
import { simClock } from "../../../test/harness/sim_clock.ts";
import {
  catalogServicesType, compiledChainType, configEntriesType, configEntryType, createAgentCache, DATACENTERS_POLL_MS, datacentersType, healthServicesType, intentionMatchType, meshGatewaysOverCatalog, meshGatewaysType,
  NO_CA_CONFIG, PREPARED_QUERY_POLL_MS, preparedQueryType, type StateReader,
} from "./index.ts";

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function reader(answers: Partial<Record<ReadQuery["type"], (q: any) => unknown>>, index = 7) {
  const reads: { query: ReadQuery; datacenter: string | undefined; minIndex: number }[] = [];
  const r: StateReader = {
    async read(query, options) {
      reads.push({ query, datacenter: options.datacenter, minIndex: options.minIndex });
      const f = answers[query.type];
      if (!f) throw new Error(`unexpected read ${query.type}`);
      return { value: f(query) as never, meta: { index } };
    },
  };
  return { r, reads };
}

const inst = (node: string, service: string, kind: "" | "mesh-gateway" | "connect-proxy" = "connect-proxy", meta: Record<string, string> = {}) =>
  ({ Node: { Node: node, Datacenter: "dc1" }, Service: { ID: service, Service: service, Kind: kind, Meta: meta }, Checks: [] }) as unknown as CheckServiceNode;

function cache() {
  const clock = simClock();
  return { clock, cache: createAgentCache({ clock, rng: { next: () => 0.5 }, logger: silentLogger() }) };
}

describe("proxycfg cache types", () => {
  test("health: Connect instances in a datacenter, narrowed by a subset filter", async () => {
    const { r, reads } = reader({ "health-service-nodes": () => [inst("a", "db", "connect-proxy", { version: "v1" }), inst("b", "db", "connect-proxy", { version: "v2" })] });
    const { cache: c } = cache();
    const got = await c.get(healthServicesType(r), { service: "db", connect: true, datacenter: "dc2", filter: 'Service.Meta.version == "v2"' });
    expect(got.value.map((n) => n.Node.Node)).toEqual(["b"]);
    expect(got.index).toBe(7);
    expect(reads[0]).toEqual({ query: { type: "health-service-nodes", service: "db", connect: true, passingOnly: false }, datacenter: "dc2", minIndex: 0 });
    await expect(c.get(healthServicesType(r), { service: "db", connect: true, filter: "Service.Meta ==" })).rejects.toThrow();
    c.close();
  });

  test("intentions matching a destination, exact and wildcard, highest precedence first", async () => {
    const ixn = (src: string, dst: string, p: number) => ({ SourceNS: "default", SourceName: src, DestinationNS: "default", DestinationName: dst, Precedence: p }) as unknown as Intention;
    const { r } = reader({ "intention-list": () => [ixn("a", "api", 9), ixn("b", "*", 8), ixn("c", "web", 9)] });
    const { cache: c } = cache();
    const got = await c.get(intentionMatchType(r), { service: "web" });
    expect(got.value.map((i) => i.SourceName)).toEqual(["c", "b"]);
    c.close();
  });

  test("config entry by kind and name; null while absent", async () => {
    const { r, reads } = reader({ "config-entry-get": () => null });
    const { cache: c } = cache();
    expect((await c.get(configEntryType(r), { kind: "service-defaults", name: "web" })).value).toBeNull();
    expect(reads[0]!.query).toEqual({ type: "config-entry-get", kind: "service-defaults", name: "web" });
    c.close();
  });

  test("compiled chain: the config entries' index; no trust domain is Consul's error", async () => {
    let td = "";
    const { r } = reader({ "config-entry-list": () => [], "ca-roots": () => ({ roots: [], trustDomain: td, activeRootId: "" }) }, 11);
    const { cache: c } = cache();
    const type = compiledChainType(r, "dc1");
    await expect(c.get(type, { name: "db", evaluateInDatacenter: "dc1" })).rejects.toThrow(NO_CA_CONFIG);
    td = "11111111-2222-3333-4444-555555555555.consul";
    const got = await c.get(type, { name: "db", evaluateInDatacenter: "dc2" });
    expect(got.index).toBe(11);
    expect(Object.keys(got.value.Targets)).toEqual(["db.default.dc2"]);
    c.close();
  });

  test("prepared query: polled every 30 s, a new index only when the result changed", async () => {
    let nodes = [inst("b", "geo"), inst("a", "geo")];
    let calls = 0;
    const { r } = reader({
      "prepared-query-execute": () => (calls++, { type: "found", query: {}, value: { Service: "geo", Nodes: nodes, DNS: {}, Datacenter: "dc1", Failovers: 0 } }),
    });
    const { cache: c, clock } = cache();
    const seen: { nodes: string[]; index: number }[] = [];
    const stop = c.watch(preparedQueryType({ reader: r, datacenters: () => [] }), { idOrName: "geo", source: { Datacenter: "dc1", Segment: "", Node: "n", Ip: "" } }, {
      onUpdate: (v) => seen.push({ nodes: v.value.map((n) => n.Node.Node), index: v.index }),
    });
    await flush();
    expect(seen).toEqual([{ nodes: ["a", "b"], index: 1 }]);
    clock.advance(PREPARED_QUERY_POLL_MS);
    await flush();
    expect(calls).toBe(2);
    expect(seen).toHaveLength(1);
    nodes = [inst("a", "geo")];
    clock.advance(PREPARED_QUERY_POLL_MS);
    await flush();
    expect(seen.at(-1)).toEqual({ nodes: ["a"], index: 2 });
    stop();
    c.close();
  });

  test("mesh gateways over the catalog: one read of the instances of kind mesh-gateway in the asked datacenter", async () => {
    const { r, reads } = reader({
      "health-service-kind-nodes": (q) => (q.kind === "mesh-gateway" ? [inst("g", "mesh-gateway", "mesh-gateway")] : []),
    }, 5);
    const { cache: c } = cache();
    const got = await c.get(meshGatewaysType(meshGatewaysOverCatalog(r)), { datacenter: "dc2" });
    expect(got.value.map((n) => n.Node.Node)).toEqual(["g"]);
    expect(got.index).toBe(5);
    // The first read, then the background refresh blocking on its index: both the one kind read in dc2.
    expect(reads.every((x) => x.query.type === "health-service-kind-nodes" && x.datacenter === "dc2")).toBe(true);
    expect(reads[0]!.minIndex).toBe(0);
    c.close();
  });

  test("catalog services: the sorted names of a datacenter's catalog", async () => {
    const { r, reads } = reader({ "catalog-services": () => ({ web: [], consul: [], db: ["v1"] }) }, 9);
    const { cache: c } = cache();
    const got = await c.get(catalogServicesType(r), {});
    expect(got).toMatchObject({ value: ["consul", "db", "web"], index: 9 });
    expect(reads[0]!.datacenter).toBeUndefined();
    c.close();
  });

  test("config entries of one kind: one list read", async () => {
    const { r, reads } = reader({ "config-entry-list": () => [] });
    const { cache: c } = cache();
    expect((await c.get(configEntriesType(r), { kind: "service-resolver" })).value).toEqual([]);
    expect(reads[0]!.query).toEqual({ type: "config-entry-list", kind: "service-resolver" });
    c.close();
  });

  test("datacenters: polled every 30 s, sorted, a new index only when the list changed", async () => {
    let dcs = ["dc2", "dc1"];
    let calls = 0;
    const { cache: c, clock } = cache();
    const seen: { dcs: readonly string[]; index: number }[] = [];
    const stop = c.watch(datacentersType(() => (calls++, dcs)), {}, { onUpdate: (v) => seen.push({ dcs: v.value, index: v.index }) });
    await flush();
    expect(seen).toEqual([{ dcs: ["dc1", "dc2"], index: 1 }]);
    clock.advance(DATACENTERS_POLL_MS);
    await flush();
    expect(calls).toBe(2);
    expect(seen).toHaveLength(1);
    dcs = ["dc1", "dc2", "dc3"];
    clock.advance(DATACENTERS_POLL_MS);
    await flush();
    expect(seen.at(-1)).toEqual({ dcs: ["dc1", "dc2", "dc3"], index: 2 });
    stop();
    c.close();
  });
});
