import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import { BODY_LIMITS, MAX_REQUEST_BODY_BYTES } from "./body.ts";
import type { AgentInfo, HttpApiDeps } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const CHUNK = 64 * 1024;

/** Every dependency a body-reading route needs, each recording whether it was reached. */
function setup() {
  const state = fakeState();
  const reached: string[] = [];
  const deps: HttpApiDeps = {
    agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0, newId: () => "00000000-0000-0000-0000-000000000001",
    now: () => 0,
    localAgent: {
      parseServiceRegistration: (b) => (reached.push("service"), b), parseCheckRegistration: (b) => (reached.push("check"), b),
      registerService: () => [], registerCheck: () => [], updateTTL: () => reached.push("ttl"),
    } as unknown as HttpApiDeps["localAgent"],
    keyring: { list: async () => [], install: async () => (reached.push("keyring"), []), use: async () => [], remove: async () => [] },
    events: { fire: async () => (reached.push("event"), {}) } as unknown as HttpApiDeps["events"],
    snapshots: { save: async () => ({ archive: new Uint8Array(), meta: state.meta }), restore: async () => void reached.push("restore") },
    connectCa: { setConfiguration: async () => void reached.push("ca"), leaf: async () => Promise.reject(new Error("unused")) },
  };
  return { app: createHttpApi(deps), state, reached };
}

/**
 * A body of `total` bytes that is produced only as it is read, counting what was pulled: a route that
 * buffered the whole body before checking it would pull all of it.
 */
function countingBody(total: number) {
  const pulled = { bytes: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) return controller.close();
      const n = Math.min(CHUNK, total - pulled.bytes);
      pulled.bytes += n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  }, { highWaterMark: 0 });
  return { stream, pulled };
}

/** Every route that reads a body, with its limit. */
const ROUTES: [method: string, path: string, limit: number][] = [
  ["PUT", "/v1/kv/k", BODY_LIMITS.kv],
  ["PUT", "/v1/txn", BODY_LIMITS.txn],
  ["PUT", "/v1/catalog/register", BODY_LIMITS.json],
  ["PUT", "/v1/catalog/deregister", BODY_LIMITS.json],
  ["PUT", "/v1/agent/service/register", BODY_LIMITS.json],
  ["PUT", "/v1/agent/check/register", BODY_LIMITS.json],
  ["PUT", "/v1/agent/check/update/c1", BODY_LIMITS.json],
  ["PUT", "/v1/config", BODY_LIMITS.json],
  ["PUT", "/v1/connect/ca/configuration", BODY_LIMITS.json],
  ["POST", "/v1/connect/intentions", BODY_LIMITS.json],
  ["PUT", "/v1/connect/intentions/00000000-0000-0000-0000-000000000001", BODY_LIMITS.json],
  ["POST", "/v1/agent/connect/authorize", BODY_LIMITS.json],
  ["POST", "/v1/discovery-chain/web", BODY_LIMITS.json],
  ["PUT", "/v1/session/create", BODY_LIMITS.json],
  ["POST", "/v1/operator/keyring", BODY_LIMITS.json],
  ["PUT", "/v1/event/fire/deploy", BODY_LIMITS.event],
  ["PUT", "/v1/snapshot", BODY_LIMITS.snapshot],
];

describe("request body limits", () => {
  test("the limits: KV and txn 512 KiB (Consul's defaults), JSON 4 MiB, events 64 KiB, snapshots 256 MiB, the server's the largest", () => {
    expect(BODY_LIMITS).toEqual({ kv: 524_288, txn: 524_288, json: 4_194_304, event: 65_536, snapshot: 268_435_456 });
    expect(MAX_REQUEST_BODY_BYTES).toBe(BODY_LIMITS.snapshot);
  });

  for (const [method, path, limit] of ROUTES) {
    test(`${method} ${path}: a declared length over ${limit} is refused with 413 before a byte is read`, async () => {
      const { app, state, reached } = setup();
      const { stream, pulled } = countingBody(limit + 1);
      const res = await app.request(path, { method, body: stream, headers: { "Content-Length": String(limit + 1) }, duplex: "half" } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.text()).toStartWith(`Request body(${limit + 1} bytes) too large, max size: ${limit} bytes.`);
      expect(res.headers.get("Connection")).toBe("close");
      expect(pulled.bytes).toBe(0);
      expect([state.writes, reached]).toEqual([[], []]);
    });

    test(`${method} ${path}: a chunked body is refused with 413 as soon as it passes ${limit}, without reading on`, async () => {
      const { app, state, reached } = setup();
      const { stream, pulled } = countingBody(limit * 2 + 10 * CHUNK);
      const res = await app.request(path, { method, body: stream, duplex: "half" } as RequestInit);
      expect(res.status).toBe(413);
      expect(await res.text()).toStartWith(`Request body too large, max size: ${limit} bytes.`);
      expect(pulled.bytes).toBeLessThanOrEqual(limit + CHUNK);
      expect([state.writes, reached]).toEqual([[], []]);
    });
  }

  test("a body of exactly the limit is read whole", async () => {
    const { app, state } = setup();
    const { stream } = countingBody(BODY_LIMITS.kv);
    const res = await app.request("/v1/kv/k", { method: "PUT", body: stream, duplex: "half" } as RequestInit);
    expect(res.status).toBe(200);
    const cmd = state.writes[0]!.command;
    expect(cmd.type === "kv" && cmd.entry.Value?.byteLength).toBe(BODY_LIMITS.kv);
  });

  test("a body whose stream fails (the client went away) is a 400 that writes nothing", async () => {
    const { app, state } = setup();
    const stream = new ReadableStream<Uint8Array>({
      pull: (c) => c.error(Object.assign(new Error("The connection was closed."), { name: "AbortError" })),
    });
    const res = await app.request("/v1/kv/k", { method: "PUT", body: stream, duplex: "half" } as RequestInit);
    expect([res.status, await res.text()]).toEqual([400, "Failed to read the request body: the connection was closed\n"]);
    expect(state.writes).toEqual([]);
  });

  test("no route reads a request body except through body.ts", () => {
    const dir = import.meta.dir;
    const readers = /\.req\.(text|json|arrayBuffer|blob|formData|parseBody)\(|req\.raw\.body/;
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && f !== "body.ts")
      .filter((f) => readers.test(readFileSync(join(dir, f), "utf8")));
    expect(offenders).toEqual([]);
  });
});
