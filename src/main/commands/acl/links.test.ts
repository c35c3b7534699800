import { describe, expect, test } from "bun:test";
import { mergeLinks, mergeNodeIdentities, mergeServiceIdentities, nodeIdentities, serviceIdentities } from "./links.ts";
import { CommandFailure } from "./shared.ts";

// The servers deduplicate what an update sends, so the CLI tests cannot see these merges repeat a link.
describe("acl link merges and identity flags", () => {
  test("a link already there (by ID for an ID link, by Name for a named one) is not added again", () => {
    const current = [{ ID: "p1", Name: "kv" }];
    expect(mergeLinks(current, [{ Name: "kv" }, { ID: "p1" }, { ID: "p2" }, { Name: "db" }])).toEqual([{ ID: "p1", Name: "kv" }, { ID: "p2" }, { Name: "db" }]);
    expect(mergeLinks(undefined, [{ Name: "kv" }])).toEqual([{ Name: "kv" }]);
  });

  test("a service identity replaces the one of its name; a node identity is added unless the same name and datacenter is there", () => {
    expect(mergeServiceIdentities([{ ServiceName: "web", Datacenters: ["dc1"] }, { ServiceName: "db" }], [{ ServiceName: "web" }, { ServiceName: "api" }]))
      .toEqual([{ ServiceName: "web" }, { ServiceName: "db" }, { ServiceName: "api" }]);
    expect(mergeNodeIdentities([{ NodeName: "n1", Datacenter: "dc1" }], [{ NodeName: "n1", Datacenter: "dc1" }, { NodeName: "n1", Datacenter: "dc2" }]))
      .toEqual([{ NodeName: "n1", Datacenter: "dc1" }, { NodeName: "n1", Datacenter: "dc2" }]);
  });

  test("-service-identity and -node-identity parse as Consul's; malformed values name the flag", () => {
    const values = new Map<string, unknown>([["service-identity", ["web", "db:dc1,dc2"]], ["node-identity", ["n1:dc1"]]]);
    expect(serviceIdentities(values)).toEqual([{ ServiceName: "web" }, { ServiceName: "db", Datacenters: ["dc1", "dc2"] }]);
    expect(nodeIdentities(values)).toEqual([{ NodeName: "n1", Datacenter: "dc1" }]);
    expect(() => nodeIdentities(new Map([["node-identity", ["n1"]]]))).toThrow(new CommandFailure('Malformed -node-identity argument: "n1"'));
    expect(() => serviceIdentities(new Map([["service-identity", ["a:b:c"]]]))).toThrow(new CommandFailure('Malformed -service-identity argument: "a:b:c"'));
  });
});
