/**
 * The loads of the gateway benchmark, run from the benchmark process against any SNI proxy (ours or
 * nginx) in front of TLS backends: bulk download throughput, connection setup rate, and the TLS
 * handshake latency through the proxy. Backends: `startBackends` serves TLS on loopback; a client asks
 * for N bytes by sending N as 8 big-endian bytes right after the handshake, the backend sends them and
 * closes.
 */
import * as tls from "node:tls";
import type { AddressInfo } from "node:net";

export interface Backends {
  readonly ports: readonly number[];
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(256 * 1024, 0x61);

/** `count` TLS backends with the given certificate. */
export async function startBackends(count: number, pem: { cert: string; key: string }): Promise<Backends> {
  const servers: tls.Server[] = [];
  for (let i = 0; i < count; i++) {
    const server = tls.createServer({ cert: pem.cert, key: pem.key }, (s) => {
      let head = Buffer.alloc(0);
      s.on("error", () => {});
      const onData = (d: Buffer) => {
        head = Buffer.concat([head, d]);
        if (head.length < 8) return;
        s.off("data", onData);
        let left = Number(head.readBigUInt64BE(0));
        const pump = () => {
          while (left > 0) {
            const n = Math.min(left, CHUNK.length);
            left -= n;
            if (!s.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) return void s.once("drain", pump);
          }
          s.end();
        };
        pump();
      };
      s.on("data", onData);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    servers.push(server);
  }
  return {
    ports: servers.map((s) => (s.address() as AddressInfo).port),
    close: async () => void (await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))),
  };
}

/** One TLS connection through `port` with `sni`, downloading `bytes`; resolves with the bytes read and the handshake time. */
export function fetchThrough(port: number, sni: string, bytes: number): Promise<{ read: number; handshakeMs: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let handshakeMs = 0;
    let read = 0;
    const s = tls.connect({ host: "127.0.0.1", port, servername: sni, rejectUnauthorized: false }, () => {
      handshakeMs = performance.now() - t0;
      const head = Buffer.alloc(8);
      head.writeBigUInt64BE(BigInt(bytes));
      s.write(head);
    });
    s.on("data", (d: Buffer) => (read += d.length));
    s.on("error", reject);
    s.on("end", () => {
      s.destroy();
      if (read !== bytes) reject(new Error(`read ${read} of ${bytes} bytes through :${port} (${sni})`));
      else resolve({ read, handshakeMs });
    });
  });
}

/** Aggregate download throughput (MB/s) of `conns` parallel connections of `bytesEach`, alternating SNIs. */
export async function throughput(port: number, snis: readonly string[], conns: number, bytesEach: number): Promise<number> {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conns }, (_, i) => fetchThrough(port, snis[i % snis.length]!, bytesEach)));
  return (conns * bytesEach) / 1e6 / ((performance.now() - t0) / 1000);
}

/** Connections set up and torn down per second by `concurrency` loops for `seconds` (each a full TLS handshake + 1 KiB). */
export async function setupRate(port: number, snis: readonly string[], concurrency: number, seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(Array.from({ length: concurrency }, async (_, i) => {
    while (performance.now() < end) {
      await fetchThrough(port, snis[(i + done) % snis.length]!, 1024);
      done++;
    }
  }));
  return done / seconds;
}

/** Handshake latency percentiles (ms) of `n` sequential connections. */
export async function handshakeLatency(port: number, snis: readonly string[], n: number): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) ms.push((await fetchThrough(port, snis[i % snis.length]!, 16)).handshakeMs);
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}
