import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { testPki } from "../../test/harness/tls_fixtures.ts";
import { decodeHealthCheckResponse, encodeHealthCheckRequest, grpcHealthProbe } from "./grpc_health.ts";

// A real grpc-js server with a hand-rolled grpc.health.v1.Health service: protobuf done independently
// of the code under test (request: field 1 string; response: field 1 varint).
// The request is wrapped in an object: grpc-js treats a falsy decoded message as none at all.
const decodeRequest = (b: Buffer) => ({ service: b.length ? b.subarray(2, 2 + b[1]!).toString("utf8") : "" });
const encodeResponse = (status: number) => (status === 0 ? Buffer.alloc(0) : Buffer.from([0x08, status]));
const HEALTH = {
  Check: {
    path: "/grpc.health.v1.Health/Check", requestStream: false, responseStream: false,
    requestSerialize: (r: { service: string }) => Buffer.from(r.service), requestDeserialize: decodeRequest,
    responseSerialize: encodeResponse, responseDeserialize: (b: Buffer) => b[1] ?? 0,
  },
} satisfies grpc.ServiceDefinition;

const statuses: Record<string, number> = { "": 1, "pkg.Up": 1, "pkg.Down": 2, "pkg.Unknown": 0 };
const seen: string[] = [];
function serve(creds: grpc.ServerCredentials): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(HEALTH, {
    Check: (call: grpc.ServerUnaryCall<{ service: string }, number>, cb: grpc.sendUnaryData<number>) => {
      seen.push(call.request.service);
      const s = statuses[call.request.service];
      if (s === undefined) cb({ code: grpc.status.NOT_FOUND, details: "unknown service" });
      else cb(null, s);
    },
  });
  return new Promise((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", creds, (err, port) => (err ? reject(err) : resolve({ server, port }))));
}

let plain: { server: grpc.Server; port: number };
let secure: { server: grpc.Server; port: number };
beforeAll(async () => {
  plain = await serve(grpc.ServerCredentials.createInsecure());
  const pki = testPki();
  secure = await serve(grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(pki.server.cert), private_key: Buffer.from(pki.server.key) }], false));
});
afterAll(() => {
  plain.server.forceShutdown();
  secure.server.forceShutdown();
});

const probe = (port: number, service: string, extra: Partial<Parameters<typeof grpcHealthProbe>[0]> = {}) =>
  grpcHealthProbe({ target: `127.0.0.1:${port}`, service, useTls: false, tlsSkipVerify: false, timeoutMs: 5_000, ...extra });
const failure = (p: Promise<unknown>) => p.then((v) => `resolved ${v}`, (e: Error) => e.message);

describe("grpcHealthProbe against a grpc-js server", () => {
  test("answers the serving status of the server and of a named service", async () => {
    expect(await probe(plain.port, "")).toBe(1);
    expect(await probe(plain.port, "pkg.Up")).toBe(1);
    expect(await probe(plain.port, "pkg.Down")).toBe(2);
    expect(await probe(plain.port, "pkg.Unknown")).toBe(0);
    expect(seen.slice(-4)).toEqual(["", "pkg.Up", "pkg.Down", "pkg.Unknown"]);
  });

  test("a gRPC error status comes back in grpc-go's words", async () => {
    expect(await failure(probe(plain.port, "pkg.Nope"))).toBe("rpc error: code = NotFound desc = unknown service");
  });

  test("a refused connection is Unavailable with Go's dial error", async () => {
    const { server, port } = await serve(grpc.ServerCredentials.createInsecure());
    server.forceShutdown();
    expect(await failure(probe(port, ""))).toBe(
      `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:${port}: connect: connection refused"`);
  });

  test("GRPCUseTLS: TLS with TLSSkipVerify passes; an untrusted certificate fails the handshake", async () => {
    expect(await probe(secure.port, "pkg.Up", { useTls: true, tlsSkipVerify: true })).toBe(1);
    expect(await failure(probe(secure.port, "", { useTls: true }))).toStartWith(
      'rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: ');
    // Cleartext against a TLS server does not get an answer.
    expect(await failure(probe(secure.port, "", { timeoutMs: 1_000 }))).toStartWith("rpc error: code = ");
  });
});

describe("health message codec", () => {
  test("request framing: 5-byte prefix, field 1 only when set", () => {
    expect([...encodeHealthCheckRequest("")]).toEqual([0, 0, 0, 0, 0]);
    expect([...encodeHealthCheckRequest("ab")]).toEqual([0, 0, 0, 0, 4, 0x0a, 2, 0x61, 0x62]);
    const long = encodeHealthCheckRequest("x".repeat(200));
    expect([...long.subarray(0, 8)]).toEqual([0, 0, 0, 0, 203, 0x0a, 0xc8, 0x01]);
  });

  test("response: status from field 1, unknown fields skipped, proto3 default 0, bad frames refused", () => {
    expect(decodeHealthCheckResponse(new Uint8Array([0, 0, 0, 0, 2, 0x08, 2]))).toBe(2);
    expect(decodeHealthCheckResponse(new Uint8Array([0, 0, 0, 0, 0]))).toBe(0);
    expect(decodeHealthCheckResponse(new Uint8Array([0, 0, 0, 0, 5, 0x12, 1, 0x41, 0x08, 1]))).toBe(1);
    expect(() => decodeHealthCheckResponse(new Uint8Array([0, 0, 0, 0, 3, 0x08]))).toThrow("truncated");
    expect(() => decodeHealthCheckResponse(new Uint8Array([1, 0, 0, 0, 0]))).toThrow("compressed");
  });
});
