/**
 * Test kit: real ClientHellos captured from TLS clients (node:tls on the running runtime, and
 * `openssl s_client`), hand-built ones with chosen extensions, and re-framing of a hello into records
 * of a chosen size. The capture side is a plain TCP server on port 0 that records the first bytes
 * until one whole handshake message has arrived, then hangs up.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import tls from "node:tls";
import { OPENSSL } from "../../test/harness/openssl.ts";

/** Length of the first handshake message in a byte stream of TLS records, once all of it is there. */
function helloComplete(all: Uint8Array): boolean {
  const payload: number[] = [];
  for (let pos = 0; pos + 5 <= all.length; ) {
    const len = (all[pos + 3]! << 8) | all[pos + 4]!;
    const end = Math.min(all.length, pos + 5 + len);
    for (let i = pos + 5; i < end; i++) payload.push(all[i]!);
    pos += 5 + len;
  }
  return payload.length >= 4 && payload.length >= 4 + ((payload[1]! << 16) | (payload[2]! << 8) | payload[3]!);
}

/** Runs a TCP server on 127.0.0.1:0, lets `connect(port)` start a client, and returns the hello it sent. */
async function captureFrom(connect: (port: number) => () => void): Promise<Uint8Array> {
  let stop: (() => void) | undefined;
  const server = net.createServer();
  try {
    return await new Promise<Uint8Array>((resolve, reject) => {
      server.on("error", reject);
      server.on("connection", (sock) => {
        const chunks: Buffer[] = [];
        sock.on("error", () => {});
        sock.on("data", (d: Buffer) => {
          chunks.push(d);
          const all = new Uint8Array(Buffer.concat(chunks));
          if (helloComplete(all)) {
            sock.destroy();
            resolve(all);
          }
        });
      });
      server.listen(0, "127.0.0.1", () => {
        stop = connect((server.address() as net.AddressInfo).port);
      });
    });
  } finally {
    stop?.();
    server.close();
  }
}

/** The ClientHello node:tls (this runtime's TLS stack) sends with `options`. */
export function captureNodeHello(options: tls.ConnectionOptions): Promise<Uint8Array> {
  return captureFrom((port) => {
    const client = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ...options });
    client.on("error", () => {});
    return () => client.destroy();
  });
}

/** Whether the openssl binary the harness uses is installed. */
export const haveOpenssl = existsSync(OPENSSL);

/** The ClientHello `openssl s_client` sends with the extra arguments; the process is killed by PID after. */
export function captureOpensslHello(args: readonly string[]): Promise<Uint8Array> {
  return captureFrom((port) => {
    const child = spawn(OPENSSL, ["s_client", "-connect", `127.0.0.1:${port}`, ...args], { stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => {});
    return () => {
      if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, "SIGKILL");
    };
  });
}

export interface HelloSpec {
  /** Raw bytes of the server_name host name (a string is Latin-1 encoded); omitted: no extension. */
  readonly serverName?: string | Uint8Array;
  readonly alpn?: readonly string[];
  /** Extra extensions (type, data), appended after SNI and ALPN. */
  readonly extensions?: readonly (readonly [number, Uint8Array])[];
  /** Leave out the extensions block entirely (an SSL 3.0-style hello). */
  readonly noExtensions?: boolean;
}

const u16 = (n: number) => [(n >> 8) & 0xff, n & 0xff];
const latin1 = (s: string) => Uint8Array.from([...s].map((c) => c.charCodeAt(0) & 0xff));

/** A ClientHello handshake message (4-byte header + body) as a client would build it. */
export function helloMessage(spec: HelloSpec): Uint8Array {
  const body: number[] = [3, 3, ...new Array(32).fill(7), 0, ...u16(4), 0x13, 0x01, 0xc0, 0x2f, 1, 0];
  if (!spec.noExtensions) {
    const exts: number[] = [];
    const add = (type: number, data: ArrayLike<number>) => exts.push(...u16(type), ...u16(data.length), ...Array.from(data));
    if (spec.serverName !== undefined) {
      const name = typeof spec.serverName === "string" ? latin1(spec.serverName) : spec.serverName;
      add(0, [...u16(name.length + 3), 0, ...u16(name.length), ...name]);
    }
    if (spec.alpn) {
      const list = spec.alpn.flatMap((p) => [p.length, ...latin1(p)]);
      add(16, [...u16(list.length), ...list]);
    }
    for (const [type, data] of spec.extensions ?? []) add(type, data);
    body.push(...u16(exts.length), ...exts);
  }
  return Uint8Array.from([1, (body.length >> 16) & 0xff, (body.length >> 8) & 0xff, body.length & 0xff, ...body]);
}

/** `message` wrapped in handshake records carrying at most `recordSize` bytes each. */
export function inRecords(message: Uint8Array, recordSize = 16384, version = 0x0301): Uint8Array {
  const out: number[] = [];
  for (let pos = 0; pos < message.length; pos += recordSize) {
    const part = message.subarray(pos, Math.min(message.length, pos + recordSize));
    out.push(0x16, ...u16(version), ...u16(part.length), ...part);
  }
  return Uint8Array.from(out);
}

/** The handshake payload of a stream of records (record headers stripped). */
export function handshakeBytes(records: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let pos = 0; pos + 5 <= records.length; ) {
    const len = (records[pos + 3]! << 8) | records[pos + 4]!;
    out.push(...records.subarray(pos + 5, pos + 5 + len));
    pos += 5 + len;
  }
  return Uint8Array.from(out);
}

/** A hand-built hello in records: the one-call form. */
export function hello(spec: HelloSpec, recordSize?: number): Uint8Array {
  return inRecords(helloMessage(spec), recordSize);
}
