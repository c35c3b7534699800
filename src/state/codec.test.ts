import { describe, expect, test } from "bun:test";
import { decodeCommand, encodeCommand } from "./codec.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";
import { check, register, service, utf8 } from "./fixtures.test.ts";

const commands: StateCommand[] = [
  register("n1", {
    ID: "x", Datacenter: "dc1", TaggedAddresses: { lan: "1.1.1.1" }, NodeMeta: { a: "b" }, SkipNodeUpdate: false,
    Service: service("s", "s", { Kind: "connect-proxy", Tags: ["t"], Weights: { Passing: 3, Warning: 1 }, TaggedAddresses: { wan: { Address: "a", Port: 1 } }, Proxy: { DestinationServiceName: "d", MeshGateway: {}, Expose: {} } }),
    Check: check("c", "passing", { ServiceID: "s", Definition: { HTTP: "http://x" } }),
    Checks: [check("d", "critical")],
  }),
  { type: "deregister", req: { Node: "n1", ServiceID: "s" } },
  { type: "kv", op: "set", entry: { Key: "k", Value: utf8("hello"), Flags: 42 } },
  { type: "kv", op: "delete-tree", entry: { Key: "" } },
  { type: "kv", op: "lock", entry: { Key: "k", Value: null, Session: "s" } },
  { type: "session", op: "create", session: { ID: "id", Name: "n", Node: "n1", LockDelay: 15e9, Behavior: "delete", TTL: "10s", NodeChecks: ["serfHealth"], ServiceChecks: [{ ID: "c" }] } },
  { type: "session", op: "destroy", id: "id" },
  { type: "txn", ops: [{ KV: { Verb: "set", Key: "a", Value: new Uint8Array([0, 1, 2, 255]) } }, { KV: { Verb: "check-index", Key: "a", Index: 3 } }] },
  { type: "tombstone-reap", reapIndex: 17 },
  { type: "restore", data: utf8("{}") },
];

describe("command codec", () => {
  test.each(commands.map((c) => [c.type, c] as const))("round-trips %s", (_: string, cmd: StateCommand) => {
    expect(decodeCommand(encodeCommand(cmd))).toEqual(cmd as never);
  });

  test.each([
    ["not JSON", "{nope", "not UTF-8 JSON"],
    ["not UTF-8", new Uint8Array([0xff, 0xfe]), "not UTF-8 JSON"],
    ["an array", "[]", "command must be an object"],
    ["an unknown type", '{"type":"frob"}', 'type "frob" is not a known command type'],
    ["a register without a node", '{"type":"register","req":{}}', "register.req.Node must be a string"],
    ["a register with a bad port", '{"type":"register","req":{"Node":"n","Service":{"Port":"80"}}}', "register.req.Service.Port must be a number"],
    ["a register with a bad kind", '{"type":"register","req":{"Node":"n","Service":{"Kind":"weird"}}}', 'register.req.Service.Kind "weird" is not a service kind'],
    ["a register with bad tags", '{"type":"register","req":{"Node":"n","Service":{"Tags":[1]}}}', "register.req.Service.Tags must be an array of strings or null"],
    ["a check with a bad status", '{"type":"register","req":{"Node":"n","Checks":[{"Status":"sad"}]}}', "register.req.Checks[0].Status must be passing, warning or critical"],
    ["a kv with an unknown verb", '{"type":"kv","op":"frob","entry":{"Key":"k"}}', "kv.op must be one of"],
    ["a kv without a key", '{"type":"kv","op":"set","entry":{}}', "kv.entry.Key must be a string"],
    ["a kv with bad base64", '{"type":"kv","op":"set","entry":{"Key":"k","Value":"!!"}}', "kv.entry.Value is not valid base64"],
    ["a session with a bad op", '{"type":"session","op":"renew","id":"x"}', "session.op must be create or destroy"],
    ["a session without a node", '{"type":"session","op":"create","session":{"ID":"x"}}', "session.session.Node must be a string"],
    ["a txn op of no kind", '{"type":"txn","ops":[{}]}', "txn.ops[0] must have exactly one of KV, Node, Service or Check"],
    ["a negative reap index", '{"type":"tombstone-reap","reapIndex":-1}', "reapIndex must be a non-negative integer"],
  ])("rejects %s", (_: string, input: string | Uint8Array, message: string) => {
    const bytes = typeof input === "string" ? utf8(input) : input;
    expect(() => decodeCommand(bytes)).toThrow(StateCommandError);
    expect(() => decodeCommand(bytes)).toThrow(message);
  });
});
