import { describe, expect, test } from "bun:test";
import type { CheckServiceNode } from "../model/index.ts";
import { seededRng } from "../platform/index.ts";
import { DNS_DEFAULTS, type DnsConfig } from "./config.ts";
import { createDnsResolver, type DnsCatalog } from "./resolver.ts";
import { DnsType, type DnsMessage } from "./wire.ts";

const nodeOf = (name: string, address: string) => ({ ID: "", Node: name, Address: address, Datacenter: "dc1", TaggedAddresses: {}, Meta: { rack: "r1" }, CreateIndex: 1, ModifyIndex: 1 });
const inst = (n: string, address: string, status: "passing" | "warning"): CheckServiceNode => ({
  Node: nodeOf(n, address),
  Service: { ID: "web", Service: "web", Tags: [], Address: "", Meta: null, Port: 80, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: {} as never, Connect: {} as never, CreateIndex: 1, ModifyIndex: 1 },
  Checks: [{ Node: n, CheckID: "c", Name: "c", Status: status, ServiceID: "web", ServiceName: "web" } as never],
});
const instances = Array.from({ length: 6 }, (_, i) => inst(`n${i}`, `10.0.0.${i + 1}`, i < 4 ? "passing" : "warning"));
const catalog: DnsCatalog = {
  nodeServices: async (name) => (name === "n0" ? { Node: nodeOf("n0", "10.0.0.1"), Services: {} } : null),
  serviceNodes: async () => instances,
  preparedQuery: async () => null,
  nodes: async () => [],
  servicesAt: async () => [],
};
const resolver = (over: Partial<DnsConfig> = {}, seed = 1) =>
  createDnsResolver({ config: { ...DNS_DEFAULTS, datacenter: "dc1", ...over }, catalog, rng: seededRng(seed), nowSeconds: () => 1_000 });
const question = (name: string, type: number, edns = 4096): DnsMessage => ({
  id: 1, flags: { qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, rcode: 0 }, questions: [{ name, type, class: 1 }], answers: [], authority: [],
  additional: [{ name: "", type: DnsType.OPT, class: edns, ttl: 0, data: { type: "raw", bytes: new Uint8Array(0) } }],
});
async function ask(r: ReturnType<typeof resolver>, name: string, type: number = DnsType.A): Promise<DnsMessage> {
  const a = await r.answer(question(name, type), "udp");
  if (a.kind !== "reply") throw new Error(`no reply: ${a.kind}`);
  return a.message;
}
const addresses = (m: DnsMessage) => m.answers.map((r) => (r.data.type === "A" ? r.data.address : r.data.type));

describe("dns_config knobs", () => {
  test("only_passing leaves warning instances out; by default they are in", async () => {
    expect(addresses(await ask(resolver(), "web.service.consul")).sort()).toHaveLength(6);
    expect(addresses(await ask(resolver({ onlyPassing: true }), "web.service.consul")).sort()).toEqual(["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]);
  });

  test("a_record_limit caps A answers; answers are shuffled per query", async () => {
    expect(addresses(await ask(resolver({ aRecordLimit: 2 }), "web.service.consul"))).toHaveLength(2);
    const r = resolver({}, 7);
    const orders = new Set<string>();
    for (let i = 0; i < 10; i++) orders.add(addresses(await ask(r, "web.service.consul")).join());
    expect(orders.size).toBeGreaterThan(1);
  });

  test("node_ttl; enable_additional_node_meta_txt false drops the TXT from A answers", async () => {
    const m = await ask(resolver({ nodeTtl: 30 }), "n0.node.consul");
    expect(m.answers.map((r) => [r.type, r.ttl])).toEqual([[DnsType.A, 30]]);
    expect(m.additional.filter((r) => r.type === DnsType.TXT)).toHaveLength(1);
    const quiet = await ask(resolver({ enableAdditionalNodeMetaTxt: false }), "n0.node.consul");
    expect(quiet.additional.filter((r) => r.type === DnsType.TXT)).toEqual([]);
  });

  test("soa settings, and the alt domain answers like the domain with its own SOA owner", async () => {
    const r = resolver({ soa: { refresh: 10, retry: 20, expire: 30, minTtl: 40 }, altDomain: "alt.example." });
    const nx = await ask(r, "nope.node.consul");
    expect(nx.authority.map((x) => [x.name, x.ttl, x.data])).toEqual([["consul", 40, { type: "SOA", soa: { mname: "ns.consul", rname: "hostmaster.consul", serial: 1_000, refresh: 10, retry: 20, expire: 30, minimum: 40 } }]]);
    expect(addresses(await ask(r, "n0.node.alt.example"))).toEqual(["10.0.0.1"]);
    expect((await ask(r, "nope.node.alt.example")).authority[0]?.name).toBe("alt.example");
    // A reverse lookup names the primary domain even with a longer alt domain.
    expect((await ask(r, "1.0.0.10.in-addr.arpa", DnsType.PTR)).authority[0]?.name).toBe("consul");
    const srv = await ask(r, "web.service.alt.example", DnsType.SRV);
    expect(srv.answers.every((x) => x.data.type === "SRV" && x.data.srv.target.endsWith(".node.dc1.alt.example"))).toBe(true);
  });
});
