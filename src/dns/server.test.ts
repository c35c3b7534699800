import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { CheckServiceNode, NodeServices } from "../model/index.ts";
import { bindUdp, seededRng, silentLogger, systemClock } from "../platform/index.ts";
import { ensureDebianCommands } from "../../test/harness/debian.ts";
import { DNS_DEFAULTS, type DnsConfig } from "./config.ts";
import { createRecursors } from "./recursors.ts";
import { createDnsResolver, type DnsCatalog } from "./resolver.ts";
import { startDnsServer, type DnsServer } from "./server.ts";
import { decodeMessage, DnsRcode, DnsType, encodeMessage, type DnsMessage } from "./wire.ts";

const node = (name: string, address: string, meta: Record<string, string> = {}) =>
  ({ ID: "", Node: name, Address: address, Datacenter: "dc1", TaggedAddresses: {}, Meta: meta, CreateIndex: 1, ModifyIndex: 1 });
const instance = (n: string, address: string, port: number, status: "passing" | "warning" | "critical" = "passing", svcAddress = ""): CheckServiceNode => ({
  Node: node(n, address),
  Service: { ID: "web", Service: "web", Tags: ["v1"], Address: svcAddress, Meta: null, Port: port, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: {} as never, Connect: {} as never, CreateIndex: 1, ModifyIndex: 1 },
  Checks: [{ Node: n, CheckID: "c", Name: "c", Status: status, Notes: "", Output: "", ServiceID: "web", ServiceName: "web", ServiceTags: [], Type: "", Definition: {}, CreateIndex: 1, ModifyIndex: 1 } as never],
});

const catalog: DnsCatalog = {
  async nodeServices(name, dc): Promise<NodeServices | null> {
    if (dc === "nowhere") throw new Error("No path to datacenter");
    if (name === "alias") return { Node: node("alias", "foo.node.consul"), Services: {} };
    if (name === "loop") return { Node: node("loop", "loop.node.consul"), Services: {} };
    if (name === "outside") return { Node: node("outside", "foo.node.example"), Services: {} };
    return name === "foo" ? { Node: node("foo", "127.0.0.7", { rack: "r1" }), Services: {} } : null;
  },
  async serviceNodes(service, tag) {
    if (service === "consul") return [instance("server1", "127.0.0.21", 8300), instance("bad_name", "127.0.0.22", 8300)];
    if (service === "ext") return [instance("ext-node", "10.5.0.1", 443, "passing", "foo.node.consul")];
    if (service !== "web") return [];
    const all = [instance("foo", "127.0.0.7", 8080), instance("bar", "127.0.0.8", 8081, "warning"), instance("baz", "127.0.0.9", 8082, "critical")];
    return tag === undefined || tag === "v1" ? all : [];
  },
  async nodes() {
    return [node("foo", "127.0.0.7"), node("v6", "2001:db8::1")];
  },
  async servicesAt(address) {
    return address === "10.9.9.9" ? [{ ServiceName: "vip", Datacenter: "dc1" } as never] : [];
  },
  async preparedQuery(idOrName) {
    // "q1" failed over to dc2, where web's instance has its own service address.
    return idOrName === "q1" ? { service: "web", datacenter: "dc2", nodes: [instance("far", "10.0.0.1", 9090, "passing", "10.9.0.1")], ttl: "18s" } : null;
  },
};

const config = (over: Partial<DnsConfig> = {}): DnsConfig => ({ ...DNS_DEFAULTS, datacenter: "dc1", ...over });
let upstream: DnsServer, server: DnsServer;

beforeAll(async () => {
  // The recursor: another of our servers, authoritative for "example".
  upstream = await startDnsServer({
    host: "127.0.0.1", port: 0, config: config({ domain: "example." }), logger: silentLogger(), clock: systemClock(),
    resolver: createDnsResolver({ config: config({ domain: "example." }), catalog, rng: seededRng(1), nowSeconds: () => 1_700_000_000 }),
  });
  const cfg = config({ recursors: [`127.0.0.1:${upstream.udpPort}`] });
  const external = createRecursors({ config: cfg, clock: systemClock(), logger: silentLogger() });
  server = await startDnsServer({
    host: "127.0.0.1", port: 0, config: cfg, logger: silentLogger(), clock: systemClock(),
    resolver: createDnsResolver({ config: cfg, catalog, rng: seededRng(2), nowSeconds: () => 1_700_000_000, external: (name) => external.lookup(name) }),
  });
});
afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

let nextId = 1;
const question = (name: string, type: number, edns?: number): DnsMessage => ({
  id: nextId++, flags: { qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, rcode: 0 }, questions: [{ name, type, class: 1 }], answers: [], authority: [],
  additional: edns ? [{ name: "", type: DnsType.OPT, class: edns, ttl: 0, data: { type: "raw", bytes: new Uint8Array(0) } }] : [],
});

async function askUdp(port: number, msg: DnsMessage): Promise<DnsMessage> {
  let done!: (m: DnsMessage) => void;
  const got = new Promise<DnsMessage>((r) => (done = r));
  const sock = await bindUdp({ host: "127.0.0.1", port: 0, onMessage: (d) => done(decodeMessage(d)) });
  try {
    await sock.send(encodeMessage(msg), port, "127.0.0.1");
    return await got;
  } finally {
    await sock.close();
  }
}
const ask = (name: string, type: number, edns?: number) => askUdp(server.udpPort, question(name, type, edns));

describe("DNS server over UDP and TCP", () => {
  test("a node's A record with its meta as TXT in Additional; ANY puts the TXT in the answer", async () => {
    const a = await ask("foo.node.consul", DnsType.A);
    expect(a.flags).toMatchObject({ qr: true, aa: true, ra: true, rcode: DnsRcode.NOERROR });
    expect(a.answers.map((r) => r.data)).toEqual([{ type: "A", address: "127.0.0.7" }]);
    expect(a.additional.map((r) => r.data)).toEqual([{ type: "TXT", strings: ["rack=r1"] }]);
    const any = await ask("FOO.node.dc1.consul", DnsType.ANY);
    expect(any.answers.map((r) => r.data.type)).toEqual(["A", "TXT"]);
    expect(any.answers[0]!.name).toBe("FOO.node.dc1.consul");
  });

  test("CNAME targets are followed, ours 3 levels at most, others through the recursors; a hostname service address is the SRV target", async () => {
    const alias = await ask("alias.node.consul", DnsType.A);
    expect(alias.answers.map((r) => [r.name, r.data])).toEqual([["alias.node.consul", { type: "CNAME", name: "foo.node.consul" }], ["foo.node.consul", { type: "A", address: "127.0.0.7" }]]);
    // A name outside the domain is asked of the recursors (here our "example" server).
    const outside = await ask("outside.node.consul", DnsType.A);
    expect(outside.answers.map((r) => [r.name, r.data])).toEqual([["outside.node.consul", { type: "CNAME", name: "foo.node.example" }], ["foo.node.example", { type: "A", address: "127.0.0.7" }]]);
    const loop = await ask("loop.node.consul", DnsType.A, 4096); // EDNS: past the 3-answer UDP limit
    expect(loop.answers.map((r) => r.type)).toEqual([DnsType.CNAME, DnsType.CNAME, DnsType.CNAME, DnsType.CNAME]);
    const srv = await ask("ext.service.consul", DnsType.SRV);
    expect(srv.answers.map((r) => r.data)).toEqual([{ type: "SRV", srv: { priority: 1, weight: 1, port: 443, target: "foo.node.consul" } }]);
    expect(srv.additional.map((r) => [r.name, r.data])).toContainEqual(["foo.node.consul", { type: "A", address: "127.0.0.7" }]);
    const a = await ask("ext.service.consul", DnsType.A);
    expect(a.answers.map((r) => r.type)).toEqual([DnsType.CNAME, DnsType.A]);
  });

  test("a service: critical instances left out, SRV targets with their addresses in Additional", async () => {
    const srv = await ask("web.service.consul", DnsType.SRV);
    const targets = srv.answers.map((r) => (r.data.type === "SRV" ? `${r.data.srv.target}:${r.data.srv.port}` : "")).sort();
    expect(targets).toEqual(["bar.node.dc1.consul:8081", "foo.node.dc1.consul:8080"]);
    expect(srv.additional.filter((r) => r.type === DnsType.A).map((r) => r.name).sort()).toEqual(["bar.node.dc1.consul", "foo.node.dc1.consul"]);
    const rfc = await ask("_web._v1.service.consul", DnsType.SRV);
    expect(rfc.answers).toHaveLength(2);
    const a = await ask("v1.web.service.consul", DnsType.A);
    expect(a.answers.map((r) => (r.data.type === "A" ? r.data.address : "")).sort()).toEqual(["127.0.0.7", "127.0.0.8"]);
  });

  test("NXDOMAIN with the SOA; NODATA with the SOA; an unknown datacenter is NXDOMAIN", async () => {
    for (const name of ["nope.node.consul", "nope.service.consul", "foo.bar.consul", "x.node.nowhere.consul"]) {
      const r = await ask(name, DnsType.A);
      expect(r.flags.rcode, name).toBe(DnsRcode.NXDOMAIN);
      expect(r.authority[0]?.data, name).toMatchObject({ type: "SOA", soa: { mname: "ns.consul", rname: "hostmaster.consul", serial: 1_700_000_000, refresh: 3600, retry: 600, expire: 86400, minimum: 0 } });
    }
    const aaaa = await ask("web.service.consul", DnsType.AAAA);
    expect(aaaa.flags.rcode).toBe(DnsRcode.NOERROR);
    expect(aaaa.answers).toEqual([]);
    expect(aaaa.authority[0]?.type).toBe(DnsType.SOA);
  });

  test("prepared queries: the answering datacenter in SRV targets, the query's TTL; unknown queries NXDOMAIN", async () => {
    const srv = await ask("q1.query.consul", DnsType.SRV);
    expect(srv.answers.map((r) => [r.ttl, r.data])).toEqual([[18, { type: "SRV", srv: { priority: 1, weight: 1, port: 9090, target: "0a090001.addr.dc2.consul" } }]]);
    expect(srv.additional.map((r) => [r.name, r.data])).toContainEqual(["0a090001.addr.dc2.consul", { type: "A", address: "10.9.0.1" }]);
    expect((await ask("q2.query.consul", DnsType.A)).flags.rcode).toBe(DnsRcode.NXDOMAIN);
  });

  test("NS and SOA: the servers as name servers with their addresses as glue (names that are not DNS labels left out)", async () => {
    const ns = await ask("consul", DnsType.NS);
    expect(ns.answers.map((r) => [r.name, r.data])).toEqual([["consul", { type: "NS", name: "server1.node.dc1.consul" }]]);
    expect(ns.additional.map((r) => [r.name, r.data])).toEqual([["server1.node.dc1.consul", { type: "A", address: "127.0.0.21" }]]);
    const soa = await ask("anything.node.consul", DnsType.SOA);
    expect(soa.answers.map((r) => r.type)).toEqual([DnsType.SOA]);
    expect(soa.authority.map((r) => r.type)).toEqual([DnsType.NS]);
  });

  test("PTR for a node's IPv4 and IPv6 address, then a service's; a miss goes to the recursor", async () => {
    expect((await ask("7.0.0.127.in-addr.arpa", DnsType.PTR)).answers.map((r) => r.data)).toEqual([{ type: "PTR", name: "foo.node.dc1.consul" }]);
    const v6 = `${"20010db8000000000000000000000001".split("").reverse().join(".")}.ip6.arpa`;
    expect((await ask(v6, DnsType.PTR)).answers.map((r) => r.data)).toEqual([{ type: "PTR", name: "v6.node.dc1.consul" }]);
    expect((await ask("9.9.9.10.in-addr.arpa", DnsType.PTR)).answers.map((r) => r.data)).toEqual([{ type: "PTR", name: "vip.service.dc1.consul" }]);
    // The recursor (with the same catalog, no recursors of its own) answers the miss with NXDOMAIN and its SOA.
    const miss = await ask("8.8.8.10.in-addr.arpa", DnsType.PTR);
    expect(miss.flags.rcode).toBe(DnsRcode.NXDOMAIN);
    expect(miss.authority.map((r) => r.data.type)).toEqual(["SOA"]);
  });

  test(".addr names, and an EDNS0 request gets its OPT back with its own size", async () => {
    const r = await ask("7f000001.addr.dc1.consul", DnsType.A, 4096);
    expect(r.answers.map((x) => x.data)).toEqual([{ type: "A", address: "127.0.0.1" }]);
    expect(r.additional.find((x) => x.type === DnsType.OPT)?.class).toBe(4096);
  });

  test("names outside the domain go to the recursors; the recursor's answer comes back unchanged", async () => {
    const r = await ask("foo.node.example", DnsType.A);
    expect(r.answers.map((x) => x.data)).toEqual([{ type: "A", address: "127.0.0.7" }]);
    // The upstream has no recursors: it refuses a name outside its domain, and we then answer SERVFAIL.
    const none = await ask("www.example.org", DnsType.A);
    expect(none.flags).toMatchObject({ rcode: DnsRcode.SERVFAIL, ra: true, aa: false });
  });

  test("recursors in order: a silent one times out, one that answers SERVFAIL is skipped, the next answers; all failing is SERVFAIL", async () => {
    const silent = await bindUdp({ host: "127.0.0.1", port: 0, onMessage: () => {} });
    const failing = await bindUdp({
      host: "127.0.0.1", port: 0,
      onMessage: (d, from) => {
        const q = decodeMessage(d);
        void failing.send(encodeMessage({ ...q, flags: { ...q.flags, qr: true, rcode: DnsRcode.SERVFAIL } }), from.port, from.address);
      },
    });
    const start = async (recursors: string[]) => {
      const cfg = config({ recursors, recursorTimeoutMs: 150 });
      return startDnsServer({ host: "127.0.0.1", port: 0, config: cfg, logger: silentLogger(), clock: systemClock(), resolver: createDnsResolver({ config: cfg, catalog, rng: seededRng(3), nowSeconds: () => 0 }) });
    };
    const chain = await start([`127.0.0.1:${silent.port}`, `127.0.0.1:${failing.port}`, `127.0.0.1:${upstream.udpPort}`]);
    const dead = await start([`127.0.0.1:${silent.port}`, `127.0.0.1:${failing.port}`]);
    try {
      const t0 = performance.now();
      const ok = await askUdp(chain.udpPort, question("foo.node.example", DnsType.A));
      expect(performance.now() - t0).toBeGreaterThanOrEqual(140); // waited out the silent one
      expect(ok.answers.map((r) => r.data)).toEqual([{ type: "A", address: "127.0.0.7" }]);
      const none = await askUdp(dead.udpPort, question("foo.node.example", DnsType.A, 1232));
      expect(none.flags).toMatchObject({ rcode: DnsRcode.SERVFAIL, ra: true, aa: false });
      expect(none.additional.map((r) => r.type)).toEqual([DnsType.OPT]);
      expect(dead.stats()).toMatchObject({ recursed: 1, recursionFailures: 1 });
    } finally {
      await chain.close();
      await dead.close();
      await silent.close();
      await failing.close();
    }
  });

  test("FORMERR for two questions, NOTIMP for another opcode; garbage gets no answer", async () => {
    const two = question("foo.node.consul", DnsType.A);
    const r = await askUdp(server.udpPort, { ...two, questions: [...two.questions, ...two.questions] });
    expect(r.flags.rcode).toBe(DnsRcode.FORMERR);
    const status = await askUdp(server.udpPort, { ...two, flags: { ...two.flags, opcode: 2 } });
    expect(status.flags.rcode).toBe(DnsRcode.NOTIMP);
  });

  test("seeded garbage and mutated queries over UDP and TCP: no crash, malformed ones counted, every reply strict", async () => {
    const seed = Number(process.env.DNS_FUZZ_SEED ?? 7);
    const rng = seededRng(seed);
    const valid = encodeMessage(question("web.service.consul", DnsType.SRV, 1232));
    const mutate = (): Uint8Array => {
      const b = Uint8Array.from(valid);
      for (let k = 1 + rng.int(4); k > 0; k--) b[rng.int(b.length)] = rng.int(256);
      return rng.int(4) === 0 ? b.slice(0, 1 + rng.int(b.length - 1)) : b;
    };
    const before = server.stats();
    const replies: Uint8Array[] = [];
    const sock = await bindUdp({ host: "127.0.0.1", port: 0, onMessage: (d) => void replies.push(d) });
    const N = 400;
    try {
      const handled = () => server.stats().queries + server.stats().malformed - before.queries - before.malformed;
      const caughtUp = async (n: number) => {
        const deadline = performance.now() + 5_000;
        while (handled() < n && performance.now() < deadline) await new Promise((r) => setTimeout(r, 2));
      };
      // In batches of 50: a burst from this same process would outrun the kernel's receive buffer
      // (about 256 datagrams by default) before the server's side of the event loop reads any.
      for (let i = 0; i < N; i++) {
        await sock.send(i % 2 ? rng.bytes(1 + rng.int(80)) : mutate(), server.udpPort, "127.0.0.1");
        if (i % 50 === 49) await caughtUp(i + 1);
      }
      // Garbage on a TCP connection closes it; the server goes on.
      const { connect } = await import("node:net");
      await new Promise<void>((done) => {
        const c = connect(server.tcpPort, "127.0.0.1", () => c.write(Uint8Array.of(0, 5, 1, 2, 3, 4, 5)));
        c.on("close", () => done());
        c.on("error", () => done());
      });
      await caughtUp(N + 1);
      expect(handled(), `seed ${seed} (DNS_FUZZ_SEED)`).toBe(N + 1);
      expect(server.stats().malformed - before.malformed, `seed ${seed}`).toBeGreaterThan(N / 2);
      for (const r of replies) expect(() => decodeMessage(r), `seed ${seed}`).not.toThrow();
      expect((await ask("foo.node.consul", DnsType.A)).answers).toHaveLength(1);
    } finally {
      await sock.close();
    }
  });

  test("dig over UDP and TCP (dnsutils)", async () => {
    ensureDebianCommands({ dig: "dnsutils" }, "the DNS tests with dig");
    // Asynchronously: the server answers from this process's event loop.
    const dig = async (port: number, args: string[]) => (await promisify(execFile)("dig", ["@127.0.0.1", "-p", String(port), "+time=2", "+tries=1", ...args], { encoding: "utf8" })).stdout;
    expect((await dig(server.udpPort, ["+short", "foo.node.consul", "A"])).trim()).toBe("127.0.0.7");
    const tcp = await dig(server.tcpPort, ["+tcp", "web.service.consul", "SRV"]);
    expect(tcp).toContain("status: NOERROR");
    expect(server.tcpPort).toBe(server.udpPort);
    expect(tcp).toMatch(/web\.service\.consul\.\s+0\s+IN\s+SRV\s+1 1 808[01] (foo|bar)\.node\.dc1\.consul\./);
    // A name outside the domain over TCP goes to the recursor over TCP too.
    expect((await dig(server.tcpPort, ["+tcp", "+short", "foo.node.example", "A"])).trim()).toBe("127.0.0.7");
    const nx = await dig(server.udpPort, ["nope.node.consul", "A"]);
    expect(nx).toContain("status: NXDOMAIN");
    expect(nx).toMatch(/consul\.\s+0\s+IN\s+SOA\s+ns\.consul\. hostmaster\.consul\. 1700000000 3600 600 86400 0/);
  }, 180_000);
});
