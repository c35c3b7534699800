/**
 * HTTP/1.1 over a raw socket, for tests of what a server does with requests no ordinary client sends:
 * no or odd Host headers, bodies of a gigabyte (declared or chunked) that the server should refuse
 * while they stream, clients that hang up mid-body.
 */
import { connect, type Socket } from "node:net";

/** Sends `request` as is, then reads until the server closes (or `ms` pass); the text received. */
export function rawRequest(port: number, request: string, ms = 2000): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    let out = "";
    const done = () => (clearTimeout(t), s.destroy(), resolve(out));
    const t = setTimeout(done, ms);
    s.on("data", (d) => (out += d.toString()));
    s.on("close", done);
    s.on("error", done);
    s.write(request);
  });
}

export interface UploadResult {
  /** Everything the server sent back. */
  readonly answer: string;
  /** Body bytes written to the socket before the server closed it (or all of them). */
  readonly sent: number;
  /** Milliseconds from the first byte sent to the end. */
  readonly ms: number;
}

/**
 * PUTs (or `method`s) a body of `total` bytes of `fill` to `path` (declared with Content-Length, or chunked), as fast
 * as the server takes it and whatever it answers meanwhile, until all is sent or the server closes the
 * connection. The body is generated as it goes: a gigabyte costs the caller nothing.
 */
export function uploadBody(port: number, path: string, total: number, o: { chunked?: boolean; fill?: number; host?: string; method?: string } = {}): Promise<UploadResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const s: Socket = connect(port, "127.0.0.1");
    let answer = "";
    let sent = 0;
    let stopped = false;
    const chunk = Buffer.alloc(64 * 1024, o.fill ?? 0x61);
    const finish = () => {
      if (stopped) return;
      stopped = true;
      s.destroy();
      resolve({ answer, sent, ms: performance.now() - started });
    };
    s.on("data", (d) => (answer += d.toString()));
    s.on("close", finish);
    s.on("error", finish);
    const length = o.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${total}`;
    s.write(`${o.method ?? "PUT"} ${path} HTTP/1.1\r\nHost: ${o.host ?? "localhost"}\r\n${length}\r\n\r\n`);
    const pump = () => {
      while (!stopped && sent < total) {
        const part = chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += part.length;
        const framed = o.chunked ? Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")]) : part;
        if (!s.write(framed)) return void s.once("drain", pump);
      }
      if (stopped) return;
      if (o.chunked) s.write("0\r\n\r\n");
      // Everything is out: give the answer a moment, then hang up.
      setTimeout(finish, 500);
    };
    pump();
  });
}
