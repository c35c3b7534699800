/**
 * Fuzzing the server port's first bytes: 10,000 connections open with random chunks (random markers,
 * garbage, truncated or mangled TLS ClientHellos). Nothing may crash, every connection must be closed
 * by the server (no hang: handshake deadline), and none may leak.
 */
import { expect, test } from "bun:test";
import * as net from "node:net";
import * as tls from "node:tls";
import { listenTcp, seededRng, silentLogger, systemClock } from "../platform/index.ts";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { ALL_PROTOCOLS } from "./protocols.ts";
import { createServerPort } from "./server_port.ts";

const CONNECTIONS = 10_000;
const PARALLEL = 200;
const DEADLINE_MS = 150;

/** The first flight of a real TLS client (a ClientHello offering causeway/rpc). */
async function realClientHello(): Promise<Uint8Array> {
  return new Promise((resolve) => {
    const server = net.createServer((s) => {
      s.once("data", (d: Buffer) => {
        resolve(new Uint8Array(d));
        s.destroy();
        server.close();
      });
    });
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      const c = tls.connect({ host: "127.0.0.1", port, servername: "server.dc1.consul", ALPNProtocols: ["causeway/rpc"], rejectUnauthorized: false });
      c.on("error", () => {});
    });
  });
}

test(`${CONNECTIONS} random first chunks: no crash, no hang, no leaked socket`, async () => {
  const seed = Number(process.env.FUZZ_SEED ?? 20261202);
  const rng = seededRng(seed);
  console.log(`server port fuzz: seed ${seed} (replay with FUZZ_SEED=${seed})`);
  const pki = testPki();
  const port = createServerPort({
    logger: silentLogger(),
    clock: systemClock(),
    handshakeTimeoutMs: DEADLINE_MS,
    tls: { material: { ca: pki.ca.cert, cert: pki.server.cert, key: pki.server.key }, verifyIncomingRpc: false },
  });
  let served = 0;
  // Handlers close at once: the fuzz is about classification, not the protocols.
  for (const p of ALL_PROTOCOLS) port.serve(p, (s) => { served++; s.on("error", () => {}); s.destroy(); });
  const open = new Set<net.Socket>();
  let accepted = 0;
  const listener = await listenTcp({
    host: "127.0.0.1",
    port: 0,
    onConnection: (s) => {
      accepted++;
      open.add(s);
      s.once("close", () => open.delete(s));
      port.accept(s);
    },
  });
  const hello = await realClientHello();

  const chunk = (): Uint8Array => {
    const kind = rng.int(5);
    if (kind === 0) return hello.subarray(0, 1 + rng.int(hello.length)); // truncated ClientHello
    if (kind === 1) {
      const h = hello.slice();
      for (let i = 0; i < 1 + rng.int(8); i++) h[rng.int(h.length)] = rng.int(256); // mangled ClientHello
      return h;
    }
    if (kind === 2) return new Uint8Array([0x16, ...rng.bytes(rng.int(64))]); // TLS byte then garbage
    if (kind === 3) return new Uint8Array([rng.int(12), ...rng.bytes(rng.int(32))]); // a marker (valid or not) then garbage
    return rng.bytes(1 + rng.int(512)); // anything
  };

  let next = 0;
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const data = chunk();
      const endAfterWrite = rng.next() < 0.5;
      const c = net.connect(listener.port, "127.0.0.1");
      c.on("error", () => {});
      c.once("connect", () => {
        c.write(data);
        if (endAfterWrite) c.end();
      });
      c.resume();
      // The server must close every connection by itself: within its deadline or sooner.
      c.once("close", () => resolve());
    });
  const worker = async () => {
    while (next < CONNECTIONS) {
      next++;
      await one();
    }
  };
  const guard = setTimeout(() => {
    throw new Error(`fuzz (seed ${seed}) did not finish: ${open.size} server sockets still open`);
  }, 120_000);
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  clearTimeout(guard);
  while (open.size > 0) await new Promise((r) => setImmediate(r));
  await listener.close();
  port.close();
  expect(accepted).toBe(CONNECTIONS);
  expect(open.size).toBe(0);
  expect(served).toBeGreaterThan(0);
}, 180_000);
