import { describe, expect, test } from "bun:test";
import type { ReadQuery, ReadValue } from "../model/index.ts";
import { chainAuthorizers, policyAuthorizer, staticAuthorizer } from "./authorizer.ts";
import { authorizeRead, REDACTED_TOKEN } from "./enforce_reads.ts";
import { parseRules } from "./rules_parse.ts";

const authz = (rules: string) => chainAuthorizers([policyAuthorizer(parseRules(rules)), staticAuthorizer("deny")]);
const read = <Q extends ReadQuery>(rules: string, q: Q, v: unknown, listPolicy = false) => authorizeRead(q, v as ReadValue<Q>, authz(rules), { enableKeyListPolicy: listPolicy });

describe("what a token sees of a read", () => {
  test("KV: a point read is denied; lists are filtered; key:list on the prefix only with enable_key_list_policy", () => {
    expect(read(`key_prefix "app/" { policy = "read" }`, { type: "kv-get", key: "other" }, null)).toEqual({ denied: "Permission denied" });
    const entries = [{ Key: "app/a" }, { Key: "app/secret/b" }];
    const rules = `key_prefix "app/" { policy = "read" } key_prefix "app/secret/" { policy = "deny" }`;
    expect(read(rules, { type: "kv-list", prefix: "app/" }, entries)).toEqual({ value: [{ Key: "app/a" }] });
    expect(read(rules, { type: "kv-keys", prefix: "app/", separator: "/" }, ["app/a", "app/secret/"], true)).toEqual({ denied: "Permission denied" });
    expect(read(`key_prefix "app/" { policy = "list" }`, { type: "kv-keys", prefix: "app/", separator: "/" }, ["app/a"], true)).toEqual({ value: ["app/a"] });
  });

  test("catalog and health need node:read and service:read; an unreadable node's services read as null", () => {
    const rules = `node "n1" { policy = "read" } service "web" { policy = "read" }`;
    expect(read(rules, { type: "catalog-nodes" }, [{ Node: "n1" }, { Node: "n2" }])).toEqual({ value: [{ Node: "n1" }] });
    expect(read(rules, { type: "catalog-services" }, { web: ["a"], db: [] })).toEqual({ value: { web: ["a"] } });
    const inst = (n: string, s: string) => ({ Node: { Node: n }, Service: { Service: s }, Checks: [] });
    expect(read(rules, { type: "health-service-nodes", service: "web", passingOnly: false, connect: false }, [inst("n1", "web"), inst("n2", "web")])).toEqual({ value: [inst("n1", "web")] });
    expect(read(rules, { type: "catalog-node-services", node: "n2" }, { Node: { Node: "n2" }, Services: {} })).toEqual({ value: null });
    const checks = [{ Node: "n1", ServiceName: "" }, { Node: "n1", ServiceName: "db" }, { Node: "n1", ServiceName: "web" }];
    expect(read(rules, { type: "health-node-checks", node: "n1" }, checks)).toEqual({ value: [checks[0], checks[2]] });
    // Service summaries: services without service:read go, each one's nodes without node:read too.
    expect(read(rules, { type: "ui-services" }, [{ Name: "db", Nodes: ["n1"] }, { Name: "web", Nodes: ["n1", "n2"] }])).toEqual({ value: [{ Name: "web", Nodes: ["n1"] }] });
    const dump = [
      { Node: "n1", Services: [{ Service: "web" }, { Service: "db" }], Checks: [{ Node: "n1", ServiceName: "" }, { Node: "n1", ServiceName: "db" }] },
      { Node: "n2", Services: [], Checks: [] },
    ];
    expect(read(rules, { type: "ui-nodes" }, dump)).toEqual({ value: [{ Node: "n1", Services: [{ Service: "web" }], Checks: [{ Node: "n1", ServiceName: "" }] }] });
    expect(read(rules, { type: "catalog-service-nodes-by-address", address: "10.0.0.1" }, [{ Node: "n1", ServiceName: "web" }, { Node: "n2", ServiceName: "web" }]))
      .toEqual({ value: [{ Node: "n1", ServiceName: "web" }] });
  });

  test("intentions by source or destination; prepared queries by name with the token hidden; operator reads", () => {
    const x = { SourceName: "web", DestinationName: "db" };
    expect(read(`service "web" { policy = "read" }`, { type: "intention-get", id: "i" }, x)).toEqual({ value: x });
    expect(read(`service "api" { policy = "read" }`, { type: "intention-get", id: "i" }, x)).toEqual({ denied: "Permission denied" });
    const qs = [{ Name: "geo", Token: "secret" }, { Name: "", Token: "" }, { Name: "other", Token: "" }];
    expect(read(`query_prefix "geo" { policy = "read" }`, { type: "prepared-query-list" }, qs)).toEqual({ value: [{ Name: "geo", Token: REDACTED_TOKEN }] });
    expect(read(`acl = "write"`, { type: "prepared-query-list" }, qs)).toEqual({ value: qs });
    expect(read(`operator = "read"`, { type: "ca-config" }, { Provider: "consul" })).toEqual({ value: { Provider: "consul" } });
    expect(read(``, { type: "federation-state-list" }, [])).toEqual({ denied: "Permission denied" });
    expect(read(`operator = "write" key_prefix "" { policy = "write" }`, { type: "snapshot" }, {})).toEqual({ denied: "Permission denied" });
    expect(read(`acl = "write"`, { type: "snapshot" }, {})).toEqual({ value: {} });
  });

  test("a read transaction's check ops need key:read; its KV results are filtered", () => {
    const rules = `key_prefix "app/" { policy = "read" }`;
    expect(read(rules, { type: "txn-read", ops: [{ KV: { Verb: "check-index", Key: "secret", Index: 1 } }] }, { Results: [], Errors: null })).toEqual({
      value: { Results: null, Errors: [{ OpIndex: 0, What: "Permission denied" }] },
    });
    expect(read(rules, { type: "txn-read", ops: [{ KV: { Verb: "get-tree", Key: "" } }] }, { Results: [{ KV: { Key: "app/a" } }, { KV: { Key: "x" } }], Errors: null })).toEqual({
      value: { Results: [{ KV: { Key: "app/a" } }], Errors: null },
    });
  });
});
