import { describe, expect, test } from "bun:test";
import type { DirEntry } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const enc = new TextEncoder();
const entry = (Key: string, value: string | null, extra: Partial<DirEntry> = {}): DirEntry => ({
  Key, Flags: 0, Value: value === null ? null : enc.encode(value), LockIndex: 0, CreateIndex: 5, ModifyIndex: 7, ...extra,
});

function setup() {
  const state = fakeState();
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
  return { state, app };
}

describe("GET /v1/kv", () => {
  test("a blocking read is told when its client goes away", async () => {
    const { state, app } = setup();
    let release = () => {};
    state.hold = new Promise((r) => (release = r));
    const client = new AbortController();
    const answered = app.request(new Request("http://agent/v1/kv/a?index=3&wait=5m", { signal: client.signal })).catch(() => undefined);
    for (let i = 0; i < 20 && state.signals.length === 0; i++) await Promise.resolve();
    expect(state.signals[0]?.aborted).toBe(false);
    client.abort();
    expect(state.signals[0]?.aborted).toBe(true);
    release();
    await answered;
  });

  test("a key answers a one-entry array with a base64 value and the X-Consul headers", async () => {
    const { state, app } = setup();
    state.values["kv-get"] = entry("a/b", "hello", { Session: "s1" });
    const res = await app.request("/v1/kv/a/b?dc=dc2&index=3&wait=1s");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBe("42");
    expect(await res.json()).toEqual([{ LockIndex: 0, Key: "a/b", Flags: 0, Value: "aGVsbG8=", Session: "s1", CreateIndex: 5, ModifyIndex: 7 }]);
    expect(state.reads[0]).toEqual({ query: { type: "kv-get", key: "a/b" }, options: { datacenter: "dc2", consistency: "default", minIndex: 3, maxWaitMs: 1000 } });
  });

  test("percent-escapes in the key are decoded; a null value stays null", async () => {
    const { state, app } = setup();
    state.values["kv-get"] = entry("a b", null);
    const body = (await (await app.request("/v1/kv/a%20b")).json()) as { Value: unknown }[];
    expect(state.reads[0]!.query).toEqual({ type: "kv-get", key: "a b" });
    expect(body[0]!.Value).toBeNull();
  });

  test("a missing key is 404 with an empty body but still carries the index", async () => {
    const { state, app } = setup();
    state.values["kv-get"] = null;
    const res = await app.request("/v1/kv/nope");
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("");
    expect(res.headers.get("X-Consul-Index")).toBe("42");
  });

  test("?raw answers the bare value", async () => {
    const { state, app } = setup();
    state.values["kv-get"] = entry("k", "raw bytes");
    const res = await app.request("/v1/kv/k?raw");
    expect(await res.text()).toBe("raw bytes");
  });

  test("?recurse lists a prefix, ?keys lists keys with a separator (also Consul's old spelling)", async () => {
    const { state, app } = setup();
    state.values["kv-list"] = [entry("a/1", "x"), entry("a/2", "y")];
    expect(((await (await app.request("/v1/kv/a/?recurse")).json()) as unknown[]).length).toBe(2);
    state.values["kv-keys"] = ["a/1", "a/sub/"];
    expect(await (await app.request("/v1/kv/a/?keys&separator=/")).json()).toEqual(["a/1", "a/sub/"]);
    await app.request("/v1/kv/a/?keys&seperator=-");
    expect(state.reads.map((r) => r.query)).toEqual([
      { type: "kv-list", prefix: "a/" },
      { type: "kv-keys", prefix: "a/", separator: "/" },
      { type: "kv-keys", prefix: "a/", separator: "-" },
    ]);
  });

  test("no keys under a prefix is 404, but the root lists as []", async () => {
    const { state, app } = setup();
    state.values["kv-keys"] = [];
    expect((await app.request("/v1/kv/x/?keys")).status).toBe(404);
    expect(await (await app.request("/v1/kv/?keys")).json()).toEqual([]);
  });

  test("bad requests: no key, bad options, conflicting consistency", async () => {
    const { state, app } = setup();
    const expect400 = async (path: string, message: string) => {
      const res = await app.request(path);
      expect(res.status).toBe(400);
      expect((await res.text()).trim()).toBe(message);
    };
    await expect400("/v1/kv/", "Missing key name");
    await expect400("/v1/kv/k?index=x", "Invalid index");
    await expect400("/v1/kv/k?index=1&wait=forever", "Invalid wait time");
    await expect400("/v1/kv/k?stale&consistent", "Cannot specify ?stale with ?consistent, conflicting semantics.");
    expect(state.reads).toEqual([]);
  });

  test("a failed read is 500 with its message", async () => {
    const { state, app } = setup();
    state.failWith = "No cluster leader";
    const res = await app.request("/v1/kv/k");
    expect(res.status).toBe(500);
    expect((await res.text()).trim()).toBe("No cluster leader");
  });
});

describe("PUT and DELETE /v1/kv", () => {
  const put = (app: ReturnType<typeof setup>["app"], path: string, body: string | Uint8Array = "v") => app.request(path, { method: "PUT", body });

  test("a plain PUT sets the key with the raw body and flags, answering true", async () => {
    const { state, app } = setup();
    const res = await put(app, "/v1/kv/a/b?flags=42", "value");
    expect(await res.json()).toBe(true);
    expect(state.writes[0]!.command).toEqual({ type: "kv", op: "set", entry: { Key: "a/b", Flags: 42, Value: enc.encode("value"), Session: undefined, ModifyIndex: undefined } });
  });

  test("cas, acquire and release become their verbs and answer the store's verdict", async () => {
    const { state, app } = setup();
    state.writeResult = { type: "kv", ok: false };
    expect(await (await put(app, "/v1/kv/k?cas=9")).json()).toBe(false);
    expect(await (await put(app, "/v1/kv/k?acquire=s1")).json()).toBe(false);
    expect(await (await put(app, "/v1/kv/k?release=s1")).json()).toBe(false);
    expect(state.writes.map((w) => w.command.type === "kv" && [w.command.op, w.command.entry.ModifyIndex, w.command.entry.Session])).toEqual([
      ["cas", 9, undefined], ["lock", undefined, "s1"], ["unlock", undefined, "s1"],
    ]);
  });

  test("bad PUTs write nothing: no key, bad numbers, conflicting verbs, no session, too large", async () => {
    const { state, app } = setup();
    const cases: [string, number, string | RegExp][] = [
      ["/v1/kv/", 400, "Missing key name"],
      ["/v1/kv/k?flags=x", 400, /Invalid flags value "x"/],
      ["/v1/kv/k?cas=-1", 400, /Invalid cas value/],
      ["/v1/kv/k?cas=1&acquire=s", 400, /^Conflicting flags: /],
      ["/v1/kv/k?acquire", 400, "Missing session ID for ?acquire"],
    ];
    for (const [path, status, message] of cases) {
      const res = await put(app, path);
      expect(res.status).toBe(status);
      const text = (await res.text()).trim();
      if (typeof message === "string") expect(text).toBe(message);
      else expect(text).toMatch(message);
    }
    const big = await app.request("/v1/kv/k", { method: "PUT", body: new Uint8Array(512 * 1024 + 1), headers: { "Content-Length": String(512 * 1024 + 1) } });
    expect(big.status).toBe(413);
    expect(await big.text()).toContain("Request body(524289 bytes) too large, max size: 524288 bytes.");
    // Without a Content-Length (a chunked body) the value is refused once the bytes read pass the limit.
    const chunked = await put(app, "/v1/kv/k", new Uint8Array(512 * 1024 + 1));
    expect(chunked.status).toBe(413);
    expect(await chunked.text()).toContain("Request body too large, max size: 524288 bytes. See https://www.consul.io/docs/agent/options.html#kv_max_value_size.");
    expect(state.writes).toEqual([]);
  });

  test("DELETE: a key, a tree with ?recurse, and delete-cas with its verdict", async () => {
    const { state, app } = setup();
    expect(await (await app.request("/v1/kv/k", { method: "DELETE" })).json()).toBe(true);
    expect(await (await app.request("/v1/kv/p/?recurse", { method: "DELETE" })).json()).toBe(true);
    state.writeResult = { type: "kv", ok: false };
    expect(await (await app.request("/v1/kv/k?cas=3", { method: "DELETE" })).json()).toBe(false);
    expect(state.writes.map((w) => w.command.type === "kv" && [w.command.op, w.command.entry.Key])).toEqual([["delete", "k"], ["delete-tree", "p/"], ["delete-cas", "k"]]);
    expect((await app.request("/v1/kv/", { method: "DELETE" })).status).toBe(400);
    expect((await app.request("/v1/kv/k?recurse&cas=1", { method: "DELETE" })).status).toBe(400);
  });

  test("a write that times out in Raft is 500 with the reason (the command is atomic: applied whole or not at all)", async () => {
    const { state, app } = setup();
    state.failWith = "proposal timed out after 10000 ms";
    const res = await put(app, "/v1/kv/k", "v");
    expect(res.status).toBe(500);
    expect((await res.text()).trim()).toBe("proposal timed out after 10000 ms");
  });

  test("a write the store refuses is 400 with its message (Consul: 500)", async () => {
    const { state, app } = setup();
    state.writeResult = { type: "error", error: "invalid session \"s9\"" };
    const res = await put(app, "/v1/kv/k?acquire=s9");
    expect(res.status).toBe(400);
    expect((await res.text()).trim()).toBe('invalid session "s9"');
  });
});

describe("KV key escaping", () => {
  test("a key is decoded exactly once: %2525 is the key %25, %2F a slash", async () => {
    const { state, app } = setup();
    state.values["kv-get"] = null;
    await app.request("/v1/kv/a%2525b");
    await app.request("/v1/kv/a%2Fb");
    expect(state.reads.map((r) => r.query)).toEqual([{ type: "kv-get", key: "a%25b" }, { type: "kv-get", key: "a/b" }]);
  });
});

const MAX = "18446744073709551615";

describe("uint64 values on the HTTP API", () => {
  test("?flags and ?cas are exact over the whole uint64 range; past it they are 400", async () => {
    const { state, app } = setup();
    const ok = await app.request(`/v1/kv/k?flags=${MAX}&cas=9007199254740993`, { method: "PUT", body: "v" });
    expect(ok.status).toBe(200);
    expect(state.writes[0]!.command).toMatchObject({ type: "kv", op: "cas", entry: { Key: "k", Flags: 18446744073709551615n, ModifyIndex: 9007199254740993n } });
    for (const q of ["flags=18446744073709551616", "flags=-1", "flags=1.5", "cas=1e3"]) {
      const res = await app.request(`/v1/kv/k?${q}`, { method: "PUT", body: "v" });
      expect([q, res.status]).toEqual([q, 400]);
    }
  });

  test("stored flags are rendered as the exact number; ?index past 2^53 is accepted", async () => {
    const { state, app } = setup();
    const entry: DirEntry = { Key: "k", Flags: 18446744073709551615n, Value: null, LockIndex: 0, CreateIndex: 5, ModifyIndex: 7 };
    state.values["kv-get"] = entry;
    const res = await app.request(`/v1/kv/k?index=${MAX}&wait=1ms`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(`[{"LockIndex":0,"Key":"k","Flags":${MAX},"Value":null,"CreateIndex":5,"ModifyIndex":7}]`);
    expect((await app.request("/v1/kv/k?index=18446744073709551616")).status).toBe(400);
  });

  test("txn Flags and Index past 2^53 reach the state exactly", async () => {
    const { state, app } = setup();
    state.writeResult = { type: "txn", results: [], errors: [] } as never;
    await app.request("/v1/txn", { method: "PUT", body: `[{"KV":{"Verb":"cas","Key":"k","Flags":${MAX},"Index":9007199254740993}}]` });
    expect(state.writes[0]!.command).toMatchObject({ type: "txn", ops: [{ KV: { Verb: "cas", Key: "k", Flags: 18446744073709551615n, Index: 9007199254740993n } }] });
  });
});

describe("KV null values (Consul stores nil for an empty body)", () => {
  test("a PUT with an empty body writes no value; a stored null reads as null, and ?raw as an empty body", async () => {
    const { state, app } = setup();
    await app.request("/v1/kv/empty", { method: "PUT" });
    await app.request("/v1/kv/empty2", { method: "PUT", body: "" });
    expect(state.writes.map((w) => (w.command as { entry: { Value: unknown } }).entry.Value)).toEqual([null, null]);
    state.values["kv-get"] = entry("empty", null);
    expect(await (await app.request("/v1/kv/empty")).json()).toEqual([{ LockIndex: 0, Key: "empty", Flags: 0, Value: null, CreateIndex: 5, ModifyIndex: 7 }]);
    const raw = await app.request("/v1/kv/empty?raw");
    expect([raw.status, await raw.text()]).toEqual([200, ""]);
  });
});
