import { describe, expect, test } from "bun:test";
import type { DirEntry } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";
import { TXN_MAX_REQUEST_BYTES } from "./txn.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const enc = new TextEncoder();
const b64 = (s: string) => btoa(s);
const entry = (Key: string, value: string | null, extra: Partial<DirEntry> = {}): DirEntry => ({
  Key, Flags: 0, Value: value === null ? null : enc.encode(value), LockIndex: 0, CreateIndex: 5, ModifyIndex: 9, ...extra,
});

function setup() {
  const state = fakeState();
  state.meta = { index: 42, knownLeader: true, lastContactMs: 12.4 };
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
  const put = (body: unknown, query = "", headers: Record<string, string> = {}) =>
    app.request(`/v1/txn${query}`, { method: "PUT", body: typeof body === "string" ? body : JSON.stringify(body), headers });
  return { state, app, put };
}

describe("PUT /v1/txn with writes", () => {
  test("decodes KV ops (case-insensitive, base64 values), writes one txn command, answers Results", async () => {
    const { state, put } = setup();
    state.writeResult = { type: "txn", Results: [{ KV: entry("a", null) }], Errors: null };
    const res = await put([
      { kv: { verb: "set", key: "a", value: b64("hello"), flags: 7 } },
      { KV: { Verb: "cas", Key: "b", Value: null, Index: 3, Session: "" } },
      { KV: { Verb: "get", Key: "c" } },
    ], "?dc=dc2");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      Results: [{ KV: { LockIndex: 0, Key: "a", Flags: 0, Value: null, CreateIndex: 5, ModifyIndex: 9 } }],
      Errors: null,
    });
    expect(state.writes).toEqual([{
      datacenter: "dc2",
      command: {
        type: "txn",
        ops: [
          { KV: { Verb: "set", Key: "a", Value: enc.encode("hello"), Flags: 7 } },
          { KV: { Verb: "cas", Key: "b", Index: 3, Session: "" } },
          { KV: { Verb: "get", Key: "c" } },
        ],
      },
    }]);
  });

  test("a failed transaction answers 409 with the errors and null Results", async () => {
    const { state, put } = setup();
    state.writeResult = { type: "txn", Results: null, Errors: [{ OpIndex: 0, What: 'failed to set key "a", index is stale' }] };
    const res = await put([{ KV: { Verb: "cas", Key: "a", Index: 1 } }]);
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ Results: null, Errors: [{ OpIndex: 0, What: 'failed to set key "a", index is stale' }] });
  });

  test("no results at all is Results null, as Consul's nil slice", async () => {
    const { state, put } = setup();
    state.writeResult = { type: "txn", Results: [], Errors: null };
    expect(await (await put([{ KV: { Verb: "delete", Key: "a" } }])).json()).toEqual({ Results: null, Errors: null });
  });

  test("an unknown verb fails the transaction with 409 before anything is written", async () => {
    const { state, put } = setup();
    const res = await put([{ KV: { Verb: "set", Key: "a" } }, { KV: { Verb: "frob", Key: "b" } }]);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ Results: null, Errors: [{ OpIndex: 1, What: 'unknown KV verb "frob"' }] });
    expect(state.writes).toEqual([]);
  });

  test("an operation naming nothing is skipped, as Consul skips it; a write failure answers 500", async () => {
    const { state, put } = setup();
    state.failWith = "No cluster leader";
    const res = await put([{}, { KV: { Verb: "delete-tree", Key: "p/" } }]);
    expect([res.status, await res.text()]).toEqual([500, "No cluster leader\n"]);
    expect(state.writes[0]!.command).toEqual({ type: "txn", ops: [{ KV: { Verb: "delete-tree", Key: "p/" } }] });
  });
});

describe("PUT /v1/txn with reads only", () => {
  test("goes to the txn-read path without blocking; sets KnownLeader and LastContact only; values base64", async () => {
    const { state, put } = setup();
    state.values["txn-read"] = { Results: [{ KV: entry("a", "hi", { Session: "s1" }) }], Errors: null };
    const res = await put([{ KV: { Verb: "get", Key: "a" } }, { KV: { Verb: "check-index", Key: "a", Index: 9 } }], "?stale&index=10&wait=5s&dc=dc2");
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-Index")).toBeNull();
    expect(res.headers.get("X-Consul-KnownLeader")).toBe("true");
    expect(res.headers.get("X-Consul-LastContact")).toBe("12");
    expect(await res.json()).toEqual({ Results: [{ KV: { LockIndex: 0, Key: "a", Flags: 0, Value: b64("hi"), Session: "s1", CreateIndex: 5, ModifyIndex: 9 } }], Errors: null });
    expect(state.reads).toEqual([{
      query: { type: "txn-read", ops: [{ KV: { Verb: "get", Key: "a" } }, { KV: { Verb: "check-index", Key: "a", Index: 9 } }] },
      options: { datacenter: "dc2", consistency: "stale", minIndex: 0, maxWaitMs: 0 },
    }]);
    expect(state.writes).toEqual([]);
  });

  test("read errors answer 409; bad read options 400; a failed read 500", async () => {
    const { state, put } = setup();
    state.values["txn-read"] = { Results: null, Errors: [{ OpIndex: 0, What: 'key "a" doesn\'t exist' }] };
    const res = await put([{ KV: { Verb: "get", Key: "a" } }]);
    expect([res.status, await res.json()]).toEqual([409, { Results: null, Errors: [{ OpIndex: 0, What: 'key "a" doesn\'t exist' }] }]);
    const bad = await put([{ KV: { Verb: "get", Key: "a" } }], "?stale&consistent");
    expect([bad.status, await bad.text()]).toEqual([400, "Cannot specify ?stale with ?consistent, conflicting semantics.\n"]);
    state.failWith = "rpc error";
    expect((await put([{ KV: { Verb: "get-tree", Key: "" } }])).status).toBe(500);
  });
});

describe("PUT /v1/txn refusals", () => {
  const cases: [string, unknown, number, string][] = [
    ["an empty body", "", 400, "Failed to parse body: EOF"],
    ["malformed JSON", "[{", 400, "Failed to parse body: unexpected EOF"],
    ["an object body", { KV: {} }, 400, "Failed to parse body: json: cannot unmarshal object into Go value of type api.TxnOps"],
    ["a non-string value", [{ KV: { Verb: "set", Key: "a", Value: 5 } }], 400, "Failed to parse body: json: cannot unmarshal number into Go struct field TxnOp.KV.Value of type []uint8"],
    ["bad base64", [{ KV: { Verb: "set", Key: "a", Value: "not base64!" } }], 400, "Failed to parse body: illegal base64 data at input byte 3"],
    ["negative flags", [{ KV: { Verb: "set", Key: "a", Flags: -1 } }], 400, "Failed to parse body: json: cannot unmarshal number -1 into Go struct field TxnOp.KV.Flags of type uint64"],
    ["a node that is not an object", [{ Node: { Verb: "set", Node: "n1" } }], 400, "Failed to parse body: json: cannot unmarshal string into Go struct field TxnOp.Node.Node of type api.Node"],
    ["65 operations", Array.from({ length: 65 }, () => ({ KV: { Verb: "get", Key: "a" } })), 413, "Transaction contains too many operations (65 > 64)"],
  ];
  for (const [what, body, status, message] of cases) {
    test(`${what} answers ${status} "${message}"`, async () => {
      const { state, put } = setup();
      const res = await put(body);
      expect([res.status, await res.text()]).toEqual([status, `${message}\n`]);
      expect(state.writes).toEqual([]);
      expect(state.reads).toEqual([]);
    });
  }

  test("an oversized body answers 413 with Consul's wording, by its Content-Length or by its size", async () => {
    const { state, put } = setup();
    const huge = "x".repeat(TXN_MAX_REQUEST_BYTES - 100);
    const tooBig = await put([{ KV: { Verb: "set", Key: "k", Value: b64(huge) } }]);
    expect([tooBig.status, await tooBig.text()]).toEqual([413, `Request body too large, max size: ${TXN_MAX_REQUEST_BYTES} bytes. See https://www.consul.io/docs/agent/options.html#txn_max_req_len.\n`]);
    const declared = await put("x".repeat(TXN_MAX_REQUEST_BYTES + 1), "", { "content-length": String(TXN_MAX_REQUEST_BYTES + 1) });
    expect([declared.status, await declared.text()]).toEqual([
      413, `Request body(${TXN_MAX_REQUEST_BYTES + 1} bytes) too large, max size: ${TXN_MAX_REQUEST_BYTES} bytes. See https://www.consul.io/docs/agent/options.html#txn_max_req_len.\n`,
    ]);
    expect(state.writes).toEqual([]);
  });
});
