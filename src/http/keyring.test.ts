import { describe, expect, test } from "bun:test";
import { createHttpApi } from "./app.ts";
import type { AgentInfo, KeyringApi, KeyringPoolResult } from "./deps.ts";
import { KEYRING_UNAVAILABLE, keyError, keyringErrors } from "./keyring.ts";

const agent: AgentInfo = {
  datacenter: "dc1", primaryDatacenter: "dc1", nodeName: "s1", nodeId: "id", server: true, version: "0.1.0", revision: "",
  advertiseAddr: "10.0.0.1", serfLanPort: 8301, serverPort: 8300, nodeMeta: {}, debugConfig: {}, stats: () => ({}),
};

const K1 = "pUqJrVyVRj5jsiYEkM/tFQYfWyJIv4s3XkvDwy7Cu5s=";
const K2 = "HWq0+0TFdXo7uFGiYGxMabKmV7uUjfA4s6z6/kN+I4g=";
const K16 = "AAAAAAAAAAAAAAAAAAAAAA==";

const pool = (wan: boolean, over: Partial<KeyringPoolResult> = {}): KeyringPoolResult => ({
  wan, datacenter: "dc1", segment: "", messages: {}, keys: {}, numNodes: wan ? 1 : 3, error: "", ...over,
});

function fake(results: readonly KeyringPoolResult[] | (() => never) = [pool(true), pool(false)]) {
  const calls: string[] = [];
  const answer = async (call: string) => {
    calls.push(call);
    if (typeof results === "function") return results();
    return results;
  };
  const api: KeyringApi = {
    list: () => answer("list"),
    install: (k) => answer(`install ${k}`),
    use: (k) => answer(`use ${k}`),
    remove: (k) => answer(`remove ${k}`),
  };
  return { api, calls };
}

const app = (keyring?: KeyringApi) => createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, keyring });
const send = (a: ReturnType<typeof app>, method: string, body?: string, query = "") =>
  a.request(`/v1/operator/keyring${query}`, { method, body, headers: body === undefined ? {} : { "Content-Type": "application/json" } });

describe("GET /v1/operator/keyring", () => {
  test("lists every pool in Consul 1.8's shape, WAN first; Messages only when there are some", async () => {
    const { api } = fake([
      pool(true, { keys: { [K1]: 1 } }),
      pool(false, { keys: { [K2]: 3, [K1]: 3 }, messages: { c2: "truncated key list response, showing first 1 of 2 keys" } }),
    ]);
    const res = await app(api).request("/v1/operator/keyring");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await res.json() as any[];
    expect(body).toEqual([
      { WAN: true, Datacenter: "dc1", Segment: "", Keys: { [K1]: 1 }, NumNodes: 1 },
      { WAN: false, Datacenter: "dc1", Segment: "", Messages: { c2: "truncated key list response, showing first 1 of 2 keys" }, Keys: { [K2]: 3, [K1]: 3 }, NumNodes: 3 },
    ]);
    expect(Object.keys(body[1])).toEqual(["WAN", "Datacenter", "Segment", "Messages", "Keys", "NumNodes"]);
    expect(Object.keys(body[1].Keys)).toEqual([K2, K1].sort()); // Go writes map keys sorted
  });

  test("a pool with an error makes it a 500 with Consul's multi-error text", async () => {
    const { api } = fake([
      pool(true),
      pool(false, { error: "2/3 nodes reported success", messages: { c2: "boom", a1: "x" } }),
    ]);
    const res = await app(api).request("/v1/operator/keyring");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("3 errors occurred:\n\t* dc1 (LAN) error: 2/3 nodes reported success\n\t* a1: x\n\t* c2: boom\n\n");
  });

  test("relay-factor is validated as Consul does", async () => {
    const { api, calls } = fake();
    expect((await send(app(api), "GET", undefined, "?relay-factor=3")).status).toBe(200);
    const bad = await send(app(api), "GET", undefined, "?relay-factor=9");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe("Invalid relay-factor: Relay factor must be in range: [0, 5]");
    const nan = await send(app(api), "GET", undefined, "?relay-factor=x");
    expect(await nan.text()).toBe('Error parsing relay factor: strconv.Atoi: parsing "x": invalid syntax');
    expect(calls).toEqual(["list"]);
  });
});

describe("POST, PUT and DELETE /v1/operator/keyring", () => {
  for (const [method, op] of [["POST", "install"], ["PUT", "use"], ["DELETE", "remove"]] as const) {
    test(`${method} runs ${op} with the body's Key and answers 200 with no body`, async () => {
      const { api, calls } = fake();
      const res = await send(app(api), method, JSON.stringify({ Key: K2 }));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("");
      expect(calls).toEqual([`${op} ${K2}`]);
    });
  }

  test("an operation every node refused is a 400 (Consul: 500) naming the pool and each node's message; a partial failure 500", async () => {
    const partial = fake([pool(true), pool(false, { error: "1/3 nodes reported failure", messages: { c1: "Requested key is not in the keyring" } })]);
    expect((await send(app(partial.api), "PUT", JSON.stringify({ Key: K1 }))).status).toBe(500);
    const { api } = fake([
      pool(true, { error: "1/1 nodes reported failure", messages: { "s1.dc1": "Removing the primary key is not allowed" } }),
      pool(false, { error: "3/3 nodes reported failure", messages: { s1: "Removing the primary key is not allowed" } }),
    ]);
    const res = await send(app(api), "DELETE", JSON.stringify({ Key: K1 }));
    expect(res.status).toBe(400);
    expect(await res.text()).toBe(
      "4 errors occurred:\n\t* WAN error: 1/1 nodes reported failure\n\t* s1.dc1: Removing the primary key is not allowed\n" +
      "\t* dc1 (LAN) error: 3/3 nodes reported failure\n\t* s1: Removing the primary key is not allowed\n\n",
    );
  });

  test("an operation that cannot run at all is a 500 with its message", async () => {
    const { api } = fake(() => {
      throw new Error("gossip pool stopped");
    });
    const res = await send(app(api), "POST", JSON.stringify({ Key: K1 }));
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("gossip pool stopped");
  });

  test("a malformed key or body is a 400 and nothing runs", async () => {
    const { api, calls } = fake();
    const cases: [string | undefined, string][] = [
      [JSON.stringify({ Key: "not base64!" }), "Invalid key: illegal base64 data at input byte 3"],
      [JSON.stringify({ Key: "c2hvcnQ=" }), "Invalid key: key size must be 16, 24 or 32 bytes"],
      [JSON.stringify({ Key: K1.slice(0, -1) }), "Invalid key: illegal base64 data at input byte 40"],
      [JSON.stringify({}), "Invalid key: key size must be 16, 24 or 32 bytes"],
      [JSON.stringify({ Key: 7 }), "Request decode failed: Key must be a string"],
      [undefined, "Request decode failed: EOF"],
    ];
    for (const [body, message] of cases) {
      const res = await send(app(api), "POST", body);
      expect(res.status, String(body)).toBe(400);
      expect(await res.text()).toBe(message);
    }
    const junk = await send(app(api), "PUT", "{nope");
    expect(junk.status).toBe(400);
    expect(await junk.text()).toStartWith("Request decode failed: ");
    expect(calls).toEqual([]);
  });

  test("keys of every AES size are accepted", () => {
    expect(keyError(K1)).toBeUndefined();
    expect(keyError(K16)).toBeUndefined();
    expect(keyError("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")).toBeUndefined(); // 24 bytes, no padding
  });
});

describe("without keyring management", () => {
  test("every method answers 500; other methods 405", async () => {
    for (const method of ["GET", "POST", "PUT", "DELETE"]) {
      const res = await send(app(), method, method === "GET" ? undefined : JSON.stringify({ Key: K1 }));
      expect(res.status).toBe(500);
      expect(await res.text()).toBe(KEYRING_UNAVAILABLE);
    }
    const patch = await send(app(fake().api), "PATCH", "{}");
    expect(patch.status).toBe(405);
  });

  test("no errors is the empty string", () => {
    expect(keyringErrors([pool(true), pool(false)])).toBe("");
    expect(keyringErrors([pool(false, { error: "x" })])).toBe("1 error occurred:\n\t* dc1 (LAN) error: x\n\n");
  });
});
