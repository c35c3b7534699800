/**
 * The gRPC health probe of gRPC checks (it satisfies src/agent's GrpcProbe structurally): one unary
 * call of grpc.health.v1.Health/Check over node:http2, h2c or TLS, with a hand-written protobuf codec
 * for its two tiny messages (HealthCheckRequest{string service = 1}, HealthCheckResponse{enum status = 1}).
 * Errors are worded as grpc-go's, which Consul shows as check output:
 * "rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing dial tcp ...\"".
 * TLS verification uses the system roots unless skipped (Consul's default, enable_agent_tls_for_checks off).
 */
import * as http2 from "node:http2";
import { goDialError, isDialErrno, splitHostPort } from "./probes.ts";

export interface GrpcHealthProbeRequest {
  /** "host:port". */
  readonly target: string;
  readonly service: string;
  readonly useTls: boolean;
  readonly tlsSkipVerify: boolean;
  readonly timeoutMs: number;
}

/** grpc-go's code names, by number. */
const CODE_NAMES = [
  "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists", "PermissionDenied",
  "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss",
  "Unauthenticated",
] as const;

const rpcError = (code: number, desc: string) => new Error(`rpc error: code = ${CODE_NAMES[code] ?? `Code(${code})`} desc = ${desc}`);

/** grpc-go's mapping of a non-200 HTTP status to a gRPC code. */
function codeOfHttpStatus(status: number): number {
  switch (status) {
    case 400: return 13;
    case 401: return 16;
    case 403: return 7;
    case 404: return 12;
    case 429: case 502: case 503: case 504: return 14;
    default: return 2;
  }
}

/** HealthCheckRequest in the gRPC length-prefixed framing: field 1 (string) only when non-empty. */
export function encodeHealthCheckRequest(service: string): Uint8Array {
  const body = new TextEncoder().encode(service);
  const lenBytes: number[] = [];
  for (let n = body.length; ; n >>>= 7) {
    if (n < 0x80) {
      lenBytes.push(n);
      break;
    }
    lenBytes.push((n & 0x7f) | 0x80);
  }
  const msg = body.length ? new Uint8Array([0x0a, ...lenBytes, ...body]) : new Uint8Array(0);
  const frame = new Uint8Array(5 + msg.length);
  new DataView(frame.buffer).setUint32(1, msg.length);
  frame.set(msg, 5);
  return frame;
}

/**
 * The status of a framed HealthCheckResponse (0 when field 1 is absent, as proto3 defaults). Unknown
 * fields are skipped. Throws on a truncated or compressed frame.
 */
export function decodeHealthCheckResponse(data: Uint8Array): number {
  if (data.length < 5) throw new Error("response message is truncated");
  if (data[0] !== 0) throw new Error("compressed response messages are not supported");
  const len = new DataView(data.buffer, data.byteOffset, data.length).getUint32(1);
  if (data.length < 5 + len) throw new Error("response message is truncated");
  const msg = data.subarray(5, 5 + len);
  let i = 0;
  let status = 0;
  const varint = () => {
    let v = 0, shift = 0;
    for (;;) {
      if (i >= msg.length) throw new Error("response message is truncated");
      const b = msg[i++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
      if (shift > 63) throw new Error("response varint is too long");
    }
  };
  while (i < msg.length) {
    const key = varint();
    const field = Math.floor(key / 8), wire = key % 8;
    if (wire === 0) {
      const v = varint();
      if (field === 1) status = v;
    } else if (wire === 2) {
      const n = varint(); // read before adding: `i += varint()` would add to the old i
      i += n;
    }
    else if (wire === 1) i += 8;
    else if (wire === 5) i += 4;
    else throw new Error(`unexpected wire type ${wire} in response`);
  }
  if (i > msg.length) throw new Error("response message is truncated");
  return status;
}

/** Calls Health/Check once; resolves with the status enum, rejects with grpc-go's error text. */
export function grpcHealthProbe(req: GrpcHealthProbeRequest): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let target: { host: string; port: number };
    try {
      target = splitHostPort(req.target);
    } catch (err) {
      reject(rpcError(14, `connection error: desc = "transport: Error while dialing dial tcp ${(err as Error).message}"`));
      return;
    }
    const host = target.host || "localhost";
    const authority = host.includes(":") ? `[${host}]:${target.port}` : `${host}:${target.port}`;
    let settled = false;
    const session = http2.connect(`${req.useTls ? "https" : "http"}://${authority}`, {
      ...(req.useTls ? { rejectUnauthorized: !req.tlsSkipVerify, ALPNProtocols: ["h2"], servername: /^[\d.]+$|:/.test(host) ? "" : host } : {}),
    });
    const finish = (err: Error | undefined, status?: number) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      if (err) reject(err);
      else resolve(status!);
    };
    const timer = setTimeout(() => finish(rpcError(4, "context deadline exceeded")), req.timeoutMs);
    /** A failure before an answer, in grpc-go's words; Deno reports a refused dial on the stream, with the socket error as its cause. */
    const connectionError = (e: NodeJS.ErrnoException) => {
      const err = (e.cause as NodeJS.ErrnoException | undefined)?.code ? (e.cause as NodeJS.ErrnoException) : e;
      const text = isDialErrno(err) ? `Error while dialing ${goDialError(err, host, target.port).message}`
        : req.useTls ? `authentication handshake failed: ${err.message}` : err.message;
      finish(rpcError(14, `connection error: desc = ${JSON.stringify(`transport: ${text}`)}`));
    };
    session.on("error", connectionError);
    const stream = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Check",
      "content-type": "application/grpc",
      te: "trailers",
      "grpc-timeout": `${Math.max(1, Math.ceil(req.timeoutMs))}m`,
    });
    const chunks: Buffer[] = [];
    let grpcStatus: number | undefined;
    let grpcMessage = "";
    const takeStatus = (h: http2.IncomingHttpHeaders) => {
      const s = h["grpc-status"];
      if (s !== undefined) {
        grpcStatus = Number(s);
        grpcMessage = decodeURIComponentSafe(String(h["grpc-message"] ?? ""));
      }
    };
    stream.on("response", (headers) => {
      const status = Number(headers[":status"]);
      if (status !== 200) {
        finish(rpcError(codeOfHttpStatus(status), `unexpected HTTP status code received from server: ${status}`));
        return;
      }
      takeStatus(headers);
    });
    stream.on("trailers", (trailers) => takeStatus(trailers));
    stream.on("data", (d: Buffer) => chunks.push(d));
    stream.on("error", connectionError);
    stream.on("end", () => {
      if (grpcStatus === undefined) return finish(rpcError(13, "server closed the stream without sending trailers"));
      if (grpcStatus !== 0) return finish(rpcError(grpcStatus, grpcMessage));
      try {
        finish(undefined, decodeHealthCheckResponse(Buffer.concat(chunks)));
      } catch (err) {
        finish(rpcError(13, `grpc: failed to unmarshal the received message: ${(err as Error).message}`));
      }
    });
    stream.end(encodeHealthCheckRequest(req.service));
  });
}

/** grpc-message is percent-encoded; a malformed escape is shown as sent. */
function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
