/**
 * Production probes for the agent's HTTP and TCP health checks (they satisfy src/agent's HttpProbe and
 * TcpProbe ports structurally; platform cannot import the agent). Built on node:http, node:https and
 * node:net so they behave the same on Bun and Deno. Error messages follow Go's, which Consul shows as
 * check output: "dial tcp 127.0.0.1:1: connect: connection refused".
 */
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";

/** One HTTP health-check request. `headers` already carries Consul's User-Agent and Accept defaults. */
export interface HealthHttpRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, readonly string[]>>;
  /** "" sends no body. */
  readonly body: string;
  readonly timeoutMs: number;
  readonly tlsSkipVerify: boolean;
  /** Only the last this-many bytes of the body are kept. */
  readonly maxBodyBytes: number;
}

export interface HealthHttpResponse {
  readonly status: number;
  /** The reason phrase ("OK"); "" when the server sent none. */
  readonly statusText: string;
  readonly body: string;
}

/** Go's http.Client follows at most 10 redirects. */
const MAX_REDIRECTS = 10;

const GO_ERRNO: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connect: connection refused",
  ECONNRESET: "read: connection reset by peer",
  EHOSTUNREACH: "connect: no route to host",
  ENETUNREACH: "connect: network is unreachable",
  ETIMEDOUT: "i/o timeout",
  EPIPE: "write: broken pipe",
};

/** Whether a socket error is one Go words as a dial failure (refused, unreachable, unknown host, ...). */
export function isDialErrno(err: NodeJS.ErrnoException): boolean {
  return err.code === "ENOTFOUND" || err.code === "EAI_AGAIN" || (err.code !== undefined && err.code in GO_ERRNO);
}

/** A connect error in Go's words: "dial tcp 127.0.0.1:1: connect: connection refused"; the message as is when Go has no equivalent. */
export function goDialError(err: NodeJS.ErrnoException, host: string, port: number | string): Error {
  const addr = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  if (err.code === "ENOTFOUND" || err.code === "EAI_AGAIN") return new Error(`dial tcp: lookup ${host}: no such host`);
  const text = err.code ? GO_ERRNO[err.code] : undefined;
  return new Error(text ? `dial tcp ${addr}: ${text}` : err.message);
}

/** Splits "host:port" / "[v6]:port". Throws Go's "missing port in address" when there is no port. */
export function splitHostPort(addr: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(addr) ?? /^([^:]*):(\d+)$/.exec(addr);
  if (!m) throw new Error(`address ${addr}: missing port in address`);
  return { host: m[1]!, port: Number(m[2]) };
}

/**
 * TCP check probe: connects to `addr` and closes at once. Rejects with Go's dial error text, or
 * "dial tcp <addr>: i/o timeout" after `timeoutMs`.
 */
export function tcpHealthProbe(addr: string, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let target: { host: string; port: number };
    try {
      target = splitHostPort(addr);
    } catch (err) {
      reject(new Error(`dial tcp ${(err as Error).message}`));
      return;
    }
    const socket = net.connect({ host: target.host || "localhost", port: target.port });
    const timer = setTimeout(() => done(new Error(`dial tcp ${addr}: i/o timeout`)), timeoutMs);
    const done = (err?: Error) => {
      clearTimeout(timer);
      socket.removeAllListeners("connect");
      socket.on("error", () => {});
      socket.destroy();
      if (err) reject(err);
      else resolve();
    };
    socket.once("connect", () => done());
    socket.once("error", (err: NodeJS.ErrnoException) => done(goDialError(err, target.host, target.port)));
  });
}

/**
 * HTTP check probe: one request (following up to 10 redirects, as Go's client does), resolving with
 * the final status, reason phrase and the tail of the body. Keep-alive is off, as in Consul's checks.
 * Rejects after `timeoutMs` with "context deadline exceeded (Client.Timeout exceeded while awaiting headers)".
 */
export function httpHealthProbe(req: HealthHttpRequest): Promise<HealthHttpResponse> {
  return new Promise<HealthHttpResponse>((resolve, reject) => {
    let current: http.ClientRequest | undefined;
    let finished = false;
    const finish = (err: Error | undefined, res?: HealthHttpResponse) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      current?.destroy();
      if (err) reject(err);
      else resolve(res!);
    };
    const timer = setTimeout(() => finish(new Error("context deadline exceeded (Client.Timeout exceeded while awaiting headers)")), req.timeoutMs);

    const send = (url: URL, method: string, body: string, hops: number) => {
      const lib = url.protocol === "https:" ? https : url.protocol === "http:" ? http : undefined;
      if (!lib) return finish(new Error(`unsupported protocol scheme ${JSON.stringify(url.protocol.replace(/:$/, ""))}`));
      const headers: Record<string, string[] | string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = [...v];
      headers["Connection"] = "close";
      if (body) headers["Content-Length"] = String(Buffer.byteLength(body));
      const r = lib.request(url, { method, headers, agent: false, ...(url.protocol === "https:" ? { rejectUnauthorized: !req.tlsSkipVerify } : {}) }, (res) => {
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if ([301, 302, 303, 307, 308].includes(status) && location) {
          res.resume();
          if (hops >= MAX_REDIRECTS) return finish(new Error("stopped after 10 redirects"));
          const keep = status === 307 || status === 308;
          return send(new URL(location, url), keep ? method : method === "HEAD" ? "HEAD" : "GET", keep ? body : "", hops + 1);
        }
        let chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size > 2 * req.maxBodyBytes + 65536) {
            const all = Buffer.concat(chunks);
            chunks = [all.subarray(all.length - req.maxBodyBytes)];
            size = req.maxBodyBytes;
          }
        });
        res.on("error", (err) => finish(err));
        res.on("end", () => {
          const all = Buffer.concat(chunks);
          const tail = all.length > req.maxBodyBytes ? all.subarray(all.length - req.maxBodyBytes) : all;
          finish(undefined, { status, statusText: res.statusMessage ?? "", body: tail.toString("utf8") });
        });
      });
      current = r;
      r.on("error", (err: NodeJS.ErrnoException) => finish(goDialError(err, url.hostname.replace(/^\[|\]$/g, ""), url.port || (url.protocol === "https:" ? 443 : 80))));
      r.end(body || undefined);
    };

    try {
      send(new URL(req.url), req.method || "GET", req.body, 0);
    } catch (err) {
      finish(err as Error);
    }
  });
}
