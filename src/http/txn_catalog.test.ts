import { describe, expect, test } from "bun:test";
import type { HealthCheck, Node, NodeService } from "../model/index.ts";
import { fakeState } from "../../test/harness/fake_state.ts";
import { createHttpApi } from "./app.ts";
import type { AgentInfo } from "./deps.ts";

const agent = { datacenter: "dc1", nodeName: "n1", server: true } as AgentInfo;
const ID1 = "11111111-2222-3333-4444-555555555555";

function setup() {
  const state = fakeState();
  state.meta = { index: 42, knownLeader: true, lastContactMs: 3 };
  const app = createHttpApi({ agent, raft: { leader: () => "", peers: () => [] }, state, random: () => 0 });
  const put = (body: unknown) => app.request("/v1/txn", { method: "PUT", body: typeof body === "string" ? body : JSON.stringify(body) });
  return { state, put };
}

const storedNode: Node = { ID: ID1, Node: "n1", Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: {}, Meta: {}, CreateIndex: 5, ModifyIndex: 6 };

describe("PUT /v1/txn with Node, Service and Check operations", () => {
  test("decodes what Consul's Go client sends (api.Node, api.AgentService, api.HealthCheck) into one txn command", async () => {
    const { state, put } = setup();
    state.writeResult = { type: "txn", Results: [{ Node: storedNode }], Errors: null };
    const res = await put([
      { Node: { Verb: "cas", Node: { ID: ID1, Node: "n1", Address: "10.0.0.1", Datacenter: "", TaggedAddresses: { lan: "10.0.0.1" }, Meta: { r: "a" }, CreateIndex: 0, ModifyIndex: 4 } } },
      {
        Service: {
          Verb: "set", Node: "n1",
          Service: {
            Kind: "", ID: "", Service: "web", Tags: ["v1"], Meta: null, Port: 80, Address: "", TaggedAddresses: { lan: { Address: "1.2.3.4", Port: 80 } },
            Weights: { Passing: 3, Warning: 1 }, EnableTagOverride: false, CreateIndex: 0, ModifyIndex: 0, ContentHash: "", Proxy: null, Connect: null, Namespace: "",
          },
        },
      },
      {
        Check: {
          Verb: "set",
          Check: {
            Node: "n1", CheckID: "", Name: "web-http", Status: "passing", Notes: "", Output: "", ServiceID: "web", ServiceName: "", ServiceTags: null,
            Type: "", Namespace: "", Definition: { HTTP: "http://x/", Interval: "10s", Timeout: "2s", DeregisterCriticalServiceAfter: "0s" },
            CreateIndex: 0, ModifyIndex: 0,
          },
        },
      },
      { KV: { Verb: "delete", Key: "k" } },
      { Check: { Verb: "delete-cas", Check: { Node: "n1", CheckID: "old", ModifyIndex: 9 } } },
    ]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ Results: [{ Node: storedNode }], Errors: null });
    const ops = (state.writes[0]!.command as unknown as { ops: unknown[] }).ops;
    expect(ops[0]).toEqual({ Node: { Verb: "cas", Node: { ID: ID1, Node: "n1", Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: { lan: "10.0.0.1" }, Meta: { r: "a" } }, Index: 4 } });
    // Consul's convertOps keeps only these service fields; ID defaults to the name (servicePreApply).
    expect(ops[1]).toMatchObject({ Service: { Verb: "set", Node: "n1", Service: { ID: "web", Service: "web", Tags: ["v1"], Port: 80, Weights: { Passing: 3, Warning: 1 } }, Index: 0 } });
    expect((ops[1] as { Service: { Service: NodeService } }).Service.Service.TaggedAddresses).toBeUndefined();
    expect(ops[2]).toMatchObject({ Check: { Verb: "set", Check: { Node: "n1", CheckID: "web-http", Status: "passing", ServiceID: "web", Definition: { HTTP: "http://x/", Interval: "10s", Timeout: "2s" } } } });
    expect((ops[2] as { Check: { Check: HealthCheck } }).Check.Check.Definition.DeregisterCriticalServiceAfter).toBeUndefined();
    expect(ops[3]).toEqual({ KV: { Verb: "delete", Key: "k" } });
    expect(ops[4]).toMatchObject({ Check: { Verb: "delete-cas", Check: { Node: "n1", CheckID: "old" }, Index: 9 } });
  });

  test("results carry Node, Service and Check objects in Consul's shape", async () => {
    const { state, put } = setup();
    const svc = { ID: "web", Service: "web", Tags: null, Address: "", Meta: null, Port: 0, Weights: { Passing: 1, Warning: 1 }, EnableTagOverride: false, Proxy: { MeshGateway: {}, Expose: {} }, Connect: {}, CreateIndex: 7, ModifyIndex: 7 } as NodeService;
    const chk = { Node: "n1", CheckID: "c", Name: "c", Status: "critical", Notes: "", Output: "", ServiceID: "", ServiceName: "", ServiceTags: null, Type: "", Definition: {}, CreateIndex: 7, ModifyIndex: 7 } as HealthCheck;
    state.writeResult = { type: "txn", Results: [{ Node: storedNode }, { Service: svc }, { Check: chk }], Errors: null };
    const res = await put([{ Node: { Verb: "set", Node: { Node: "n1" } } }]);
    expect(await res.json()).toEqual({ Results: [{ Node: storedNode }, { Service: svc }, { Check: chk }], Errors: null });
  });

  test("catalog gets alone take the read path; a get among writes goes to Raft", async () => {
    const { state, put } = setup();
    state.values["txn-read"] = { Results: [{ Node: storedNode }], Errors: null };
    const res = await put([{ Node: { Verb: "get", Node: { Node: "n1" } } }, { Service: { Verb: "get", Node: "n1", Service: { ID: "web" } } }, { Check: { Verb: "get", Check: { Node: "n1", CheckID: "c" } } }]);
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Consul-KnownLeader")).toBe("true");
    expect(state.reads[0]!.query).toEqual({
      type: "txn-read",
      ops: [
        { Node: { Verb: "get", Node: { ID: "", Node: "n1", Address: "", Datacenter: "dc1", TaggedAddresses: {}, Meta: {} } } },
        { Service: { Verb: "get", Node: "n1", Service: { ID: "web" } } },
        { Check: { Verb: "get", Check: { Node: "n1", CheckID: "c" } } },
      ],
    });
    expect(state.writes).toEqual([]);
    state.writeResult = { type: "txn", Results: [], Errors: null };
    await put([{ Node: { Verb: "get", Node: { Node: "n1" } } }, { Node: { Verb: "delete", Node: { Node: "n1" } } }]);
    expect(state.writes).toHaveLength(1);
  });

  test("Consul's preCheck failures answer 409 with every failing op, and nothing is written or read", async () => {
    const { state, put } = setup();
    const res = await put([
      { KV: { Verb: "set", Key: "a" } },
      {},
      { Node: { Verb: "set", Node: { Address: "10.0.0.1" } } },
      { Node: { Verb: "delete", Node: { Node: "n1", ID: "nope" } } },
      { Service: { Verb: "delete", Node: "n1", Service: { ID: "web" } } },
      { Service: { Verb: "set", Node: "n1", Service: { Service: "web", Address: "0.0.0.0" } } },
      { Check: { Verb: "set", Check: { Node: "n1", CheckID: "c", Status: "meh" } } },
      { Node: { Verb: "frob", Node: { Node: "n1" } } },
      { Node: { Verb: "get", Node: { ID: "not-checked-here" } } },
    ]);
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      Results: null,
      Errors: [
        { OpIndex: 1, What: "Must provide node" },
        { OpIndex: 2, What: "Bad node ID: uuid string is wrong length" },
        { OpIndex: 3, What: "Must provide service name with ID" },
        { OpIndex: 4, What: "Invalid service address" },
        { OpIndex: 5, What: 'Invalid check status "meh": must be one of passing, warning, critical' },
        { OpIndex: 6, What: 'unknown Node verb "frob"' },
      ],
    });
    expect(state.writes).toEqual([]);
    expect(state.reads).toEqual([]);
  });

  test("bad shapes answer 400 with Go's decode text; 64 ops of mixed kinds pass, 65 do not", async () => {
    const { state, put } = setup();
    const bad = await put([{ Service: { Verb: "set", Node: "n1", Service: { Port: "80" } } }]);
    expect([bad.status, await bad.text()]).toEqual([400, "Failed to parse body: json: cannot unmarshal string into Go struct field TxnOp.Service.Service.Port of type int\n"]);
    const badDur = await put([{ Check: { Verb: "set", Check: { Node: "n1", CheckID: "c", Definition: { Interval: "soon" } } } }]);
    expect(badDur.status).toBe(400);
    const mixed = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? { Node: { Verb: "get", Node: { Node: "n1" } } } : { KV: { Verb: "get", Key: "a" } }));
    state.values["txn-read"] = { Results: [], Errors: null };
    expect((await put(mixed(64))).status).toBe(200);
    const many = await put(mixed(65));
    expect([many.status, await many.text()]).toEqual([413, "Transaction contains too many operations (65 > 64)\n"]);
    expect(state.writes).toEqual([]);
  });
});
