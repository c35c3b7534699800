import { describe, expect, test } from "bun:test";
import { createStateStore, type StateCommand } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { chainAuthorizers, policyAuthorizer, staticAuthorizer } from "./authorizer.ts";
import { commandDenial, PERMISSION_DENIED, txnDenials } from "./enforce_writes.ts";
import { parseRules } from "./rules_parse.ts";

const authz = (rules: string) => chainAuthorizers([policyAuthorizer(parseRules(rules)), staticAuthorizer("deny")]);

function state() {
  const store = createStateStore({ clock: simClock() });
  let i = 0;
  const apply = (cmd: StateCommand) => store.apply(++i, cmd);
  apply({ type: "register", req: { Node: "n1", Address: "10.0.0.1", Service: { ID: "web-1", Service: "web" } as never, Checks: [{ Node: "n1", CheckID: "node-ok", Name: "n", Status: "passing" } as never] } });
  apply({ type: "session", op: "create", session: { ID: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", Name: "", Node: "n1", LockDelay: 0, Behavior: "release", TTL: "", NodeChecks: [], ServiceChecks: null } });
  return store;
}

describe("which commands a token may propose", () => {
  const store = state();
  const deny = (rules: string, cmd: StateCommand) => commandDenial(cmd, authz(rules), store);

  test("KV: write on the key; a recursive delete needs write on everything under the prefix", () => {
    const kv = (op: "set" | "delete-tree", Key: string): StateCommand => ({ type: "kv", op, entry: { Key } });
    expect(deny(`key_prefix "app/" { policy = "write" }`, kv("set", "app/x"))).toBeUndefined();
    expect(deny(`key_prefix "app/" { policy = "read" }`, kv("set", "app/x"))).toBe(PERMISSION_DENIED);
    expect(deny(`key_prefix "app/" { policy = "write" } key "app/locked" { policy = "read" }`, kv("delete-tree", "app/"))).toBe(PERMISSION_DENIED);
    expect(deny(`key_prefix "app/" { policy = "write" }`, kv("delete-tree", "app/"))).toBeUndefined();
  });

  test("register: node write only when the node changes; service write on the new and the existing service; checks by kind", () => {
    const same: StateCommand = { type: "register", req: { Node: "n1", Address: "10.0.0.1", Service: { ID: "web-1", Service: "web" } as never } };
    expect(deny(`service "web" { policy = "write" }`, same)).toBeUndefined();
    expect(deny(`service "web" { policy = "write" }`, { type: "register", req: { Node: "n1", Address: "10.0.0.9" } })).toBe(PERMISSION_DENIED);
    expect(deny(`service "api" { policy = "write" }`, { type: "register", req: { Node: "n1", Address: "10.0.0.1", Service: { ID: "web-1", Service: "api" } as never } })).toBe(PERMISSION_DENIED);
    expect(deny(`node "n1" { policy = "write" }`, { type: "register", req: { Node: "n1", Address: "10.0.0.1", Checks: [{ Node: "n1", CheckID: "c", ServiceID: "nope" } as never] } })).toBe("Unknown service 'nope' for check 'c'");
    expect(deny(`node "n2" { policy = "write" }`, { type: "register", req: { Node: "n2", Address: "10.0.0.2" } })).toBeUndefined();
  });

  test("deregister: by the existing service's name, a check's kind, or the node", () => {
    expect(deny(`service "web" { policy = "write" }`, { type: "deregister", req: { Node: "n1", ServiceID: "web-1" } })).toBeUndefined();
    expect(deny(`service "web" { policy = "read" }`, { type: "deregister", req: { Node: "n1", ServiceID: "web-1" } })).toBe(PERMISSION_DENIED);
    expect(deny(`node_prefix "" { policy = "write" }`, { type: "deregister", req: { Node: "n1", ServiceID: "nope" } })).toBe("Unknown service 'nope'");
    expect(deny(`node "n1" { policy = "write" }`, { type: "deregister", req: { Node: "n1", CheckID: "node-ok" } })).toBeUndefined();
    expect(deny(`service_prefix "" { policy = "write" }`, { type: "deregister", req: { Node: "n1" } })).toBe(PERMISSION_DENIED);
  });

  test("sessions by node, intentions by destination, config entries, prepared queries, operator and ACL writes", () => {
    expect(deny(`session "n1" { policy = "write" }`, { type: "session", op: "destroy", id: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c" })).toBeUndefined();
    expect(deny(`session "n2" { policy = "write" }`, { type: "session", op: "destroy", id: "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c" })).toBe(PERMISSION_DENIED);
    const intention = { ID: "1b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c", SourceNS: "default", SourceName: "web", DestinationNS: "default", DestinationName: "db" } as never;
    expect(deny(`service "db" { policy = "read" intentions = "write" }`, { type: "intention", op: "upsert", intention })).toBeUndefined();
    expect(deny(`service "web" { policy = "write" }`, { type: "intention", op: "upsert", intention })).toBe(PERMISSION_DENIED);
    const entry = (Kind: string, Name: string): StateCommand => ({ type: "config-entry", op: "set", entry: { Kind, Name } as never });
    expect(deny(`service "web" { policy = "write" }`, entry("service-defaults", "web"))).toBeUndefined();
    expect(deny(`service_prefix "" { policy = "write" }`, entry("proxy-defaults", "global"))).toBe(PERMISSION_DENIED);
    expect(deny(`operator = "write"`, entry("proxy-defaults", "global"))).toBeUndefined();
    const query = (Name: string): StateCommand => ({ type: "prepared-query", op: "create", query: { ID: "q", Name } as never });
    expect(deny(`query_prefix "geo" { policy = "write" }`, query("geo-db"))).toBeUndefined();
    expect(deny(``, query(""))).toBeUndefined(); // unnamed: the ID is the capability
    expect(deny(`query_prefix "" { policy = "read" }`, query("x"))).toBe(PERMISSION_DENIED);
    expect(deny(`operator = "read"`, { type: "autopilot", op: "set-config", config: {} as never })).toBe(PERMISSION_DENIED);
    expect(deny(`acl = "read"`, { type: "acl-policy", op: "delete", ids: ["x"] })).toBe(PERMISSION_DENIED);
    expect(commandDenial({ type: "tombstone-reap", reapIndex: 1 }, staticAuthorizer("manage"), store)).toBe(PERMISSION_DENIED);
    expect(commandDenial({ type: "restore", data: new Uint8Array() }, staticAuthorizer("allow"), store)).toBe(PERMISSION_DENIED);
  });

  test("a transaction's denials are per operation; reads are filtered later, not denied", () => {
    const errors = txnDenials([
      { KV: { Verb: "set", Key: "app/a" } },
      { KV: { Verb: "get", Key: "secret" } },
      { KV: { Verb: "check-index", Key: "secret", Index: 1 } },
      { Node: { Verb: "set", Node: { Node: "n1", Address: "x" } as never } },
      { Check: { Verb: "set", Check: { Node: "n1", CheckID: "c", ServiceID: "web-1", ServiceName: "web" } } },
    ], authz(`key_prefix "app/" { policy = "write" } service "web" { policy = "write" }`));
    expect(errors).toEqual([{ OpIndex: 2, What: PERMISSION_DENIED }, { OpIndex: 3, What: PERMISSION_DENIED }]);
  });
});
