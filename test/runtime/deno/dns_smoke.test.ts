/**
 * Deno smoke suite: the DNS server answers over UDP and TCP on Deno (node:dgram and node:net there),
 * with our codec on both ends.
 */
import assert from "node:assert/strict";
import { connect } from "node:net";
import { createDnsResolver, decodeMessage, DNS_DEFAULTS, DnsType, encodeMessage, startDnsServer, type DnsMessage } from "../../../src/dns/index.ts";
import { bindUdp, seededRng, silentLogger, systemClock } from "../../../src/platform/index.ts";

const node = { ID: "", Node: "foo", Address: "127.0.0.7", Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, CreateIndex: 1, ModifyIndex: 1 };
const query = (name: string): DnsMessage => ({
  id: 7, flags: { qr: false, opcode: 0, aa: false, tc: false, rd: true, ra: false, rcode: 0 }, questions: [{ name, type: DnsType.A, class: 1 }], answers: [], authority: [], additional: [],
});

Deno.test("dns: a node's A record over UDP and TCP", async () => {
  const config = { ...DNS_DEFAULTS, datacenter: "dc1" };
  const server = await startDnsServer({
    host: "127.0.0.1", port: 0, config, logger: silentLogger(), clock: systemClock(),
    resolver: createDnsResolver({ config, rng: seededRng(1), nowSeconds: () => 0, catalog: {
      nodeServices: async (name) => (name === "foo" ? { Node: node, Services: {} } : null), serviceNodes: async () => [], preparedQuery: async () => null, nodes: async () => [node], servicesAt: async () => [],
    } }),
  });
  try {
    let done!: (m: DnsMessage) => void;
    const got = new Promise<DnsMessage>((r) => (done = r));
    const sock = await bindUdp({ host: "127.0.0.1", port: 0, onMessage: (d) => done(decodeMessage(d)) });
    await sock.send(encodeMessage(query("foo.node.consul")), server.udpPort, "127.0.0.1");
    const udp = await got;
    await sock.close();
    assert.deepEqual(udp.answers.map((r) => r.data), [{ type: "A", address: "127.0.0.7" }]);

    const tcp = await new Promise<DnsMessage>((resolve, reject) => {
      const c = connect(server.tcpPort, "127.0.0.1", () => {
        const q = encodeMessage(query("nope.node.consul"));
        c.write(Uint8Array.of(q.length >> 8, q.length & 0xff));
        c.write(q);
      });
      let buf = new Uint8Array(0);
      c.on("data", (d: Uint8Array) => {
        buf = Uint8Array.from([...buf, ...d]);
        if (buf.length >= 2 && buf.length >= 2 + ((buf[0]! << 8) | buf[1]!)) {
          c.destroy();
          resolve(decodeMessage(buf.slice(2)));
        }
      });
      c.on("error", reject);
    });
    assert.equal(tcp.flags.rcode, 3);
    assert.equal(tcp.authority[0]?.type, DnsType.SOA);
  } finally {
    await server.close();
  }
});
