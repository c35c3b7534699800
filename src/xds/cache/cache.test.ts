import { describe, expect, test } from "bun:test";
import { create, createRegistry, toBinary } from "@bufbuild/protobuf";
import { DiscoveryRequestSchema } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { ClusterSchema } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, TYPE_URL_PREFIX } from "../types.ts";
import { createXdsCache, typeSnapshot } from "./cache.ts";
import type { CacheEvent, ResourceSet, ResourceValue } from "./cache.ts";
import { resourceVersion, typeVersion } from "./hash.ts";

const cluster = (name: string, stat = "") => create(ClusterSchema, { name, altStatName: stat });
const cla = (name: string, priority = 0) => create(ClusterLoadAssignmentSchema, { clusterName: name, endpoints: [{ priority }] });

function set(spec: Record<string, Record<string, ResourceValue>>): ResourceSet {
  return new Map(Object.entries(spec).map(([t, byName]) => [t, new Map(Object.entries(byName))]));
}

describe("xds cache", () => {
  test("versions: per resource = hash of its bytes, per type = hash of sorted (name, version)", () => {
    const cache = createXdsCache();
    const a = cluster("a");
    cache.set("n1", set({ [CLUSTER_TYPE]: { b: cluster("b"), a } }));
    const ts = typeSnapshot(cache.get("n1"), CLUSTER_TYPE);
    expect([...ts.resources.keys()]).toEqual(["a", "b"]);
    const va = resourceVersion(toBinary(ClusterSchema, a));
    expect(ts.resources.get("a")!.version).toBe(va);
    expect(va).toMatch(/^[0-9a-f]{32}$/);
    expect(ts.version).toBe(typeVersion([["a", va], ["b", ts.resources.get("b")!.version]]));
    // A type the node does not have: empty, with the version of nothing.
    expect(typeSnapshot(cache.get("n1"), LISTENER_TYPE)).toEqual({ typeUrl: LISTENER_TYPE, version: typeVersion([]), resources: new Map() });
  });

  test("a message and its bytes are the same resource; equal content on another node gives equal versions", () => {
    const cache = createXdsCache();
    cache.set("n1", set({ [CLUSTER_TYPE]: { a: cluster("a", "x") } }));
    cache.set("n2", set({ [CLUSTER_TYPE]: { a: toBinary(ClusterSchema, cluster("a", "x")) } }));
    expect(typeSnapshot(cache.get("n1"), CLUSTER_TYPE).version).toBe(typeSnapshot(cache.get("n2"), CLUSTER_TYPE).version);
  });

  test("SotW version changes only for the type whose content changed; set returns the changed types", () => {
    const cache = createXdsCache();
    const events: CacheEvent[] = [];
    cache.watch("n", (e) => events.push(e));
    expect(cache.set("n", set({ [CLUSTER_TYPE]: { a: cluster("a") }, [ENDPOINT_TYPE]: { a: cla("a") } }))).toEqual([CLUSTER_TYPE, ENDPOINT_TYPE]);
    const s1 = cache.get("n")!;
    // Equal content, new objects: nothing changes, nobody is told.
    expect(cache.set("n", set({ [CLUSTER_TYPE]: { a: cluster("a") }, [ENDPOINT_TYPE]: { a: cla("a") } }))).toEqual([]);
    expect(cache.get("n")).toBe(s1);
    expect(events).toHaveLength(1);
    // Only EDS changes.
    expect(cache.set("n", set({ [CLUSTER_TYPE]: { a: cluster("a") }, [ENDPOINT_TYPE]: { a: cla("a", 1) } }))).toEqual([ENDPOINT_TYPE]);
    const s2 = cache.get("n")!;
    expect(s2.generation).toBe(2);
    expect(s2.types.get(CLUSTER_TYPE)).toBe(s1.types.get(CLUSTER_TYPE)!);
    expect(s2.types.get(ENDPOINT_TYPE)!.version).not.toBe(s1.types.get(ENDPOINT_TYPE)!.version);
    expect(events.at(-1)).toEqual({ kind: "set", snapshot: s2, changedTypes: [ENDPOINT_TYPE] });
    // A type that disappears (or becomes empty) changed.
    expect(cache.set("n", set({ [CLUSTER_TYPE]: { a: cluster("a") }, [ENDPOINT_TYPE]: {} }))).toEqual([ENDPOINT_TYPE]);
    expect(cache.get("n")!.types.has(ENDPOINT_TYPE)).toBe(false);
  });

  test("unchanged resources keep their cached entry; a changed one gets a new version", () => {
    const cache = createXdsCache();
    const a = cluster("a");
    cache.set("n", set({ [CLUSTER_TYPE]: { a, b: cluster("b") } }));
    const before = typeSnapshot(cache.get("n"), CLUSTER_TYPE);
    cache.set("n", set({ [CLUSTER_TYPE]: { a, b: cluster("b", "changed") } }));
    const after = typeSnapshot(cache.get("n"), CLUSTER_TYPE);
    expect(after.resources.get("a")).toBe(before.resources.get("a")!);
    expect(after.resources.get("b")!.version).not.toBe(before.resources.get("b")!.version);
    expect(after.version).not.toBe(before.version);
  });

  test("a message object shared by nodes is encoded once; a wrong type URL still throws for it", () => {
    const cache = createXdsCache();
    const shared = cla("c", 1);
    cache.set("n1", set({ [ENDPOINT_TYPE]: { c: shared } }));
    cache.set("n2", set({ [ENDPOINT_TYPE]: { c: shared, d: cla("d") } }));
    const r1 = typeSnapshot(cache.get("n1"), ENDPOINT_TYPE).resources.get("c")!;
    const r2 = typeSnapshot(cache.get("n2"), ENDPOINT_TYPE).resources.get("c")!;
    expect(r2.bytes).toBe(r1.bytes);
    expect(r2.version).toBe(resourceVersion(toBinary(ClusterLoadAssignmentSchema, cla("c", 1))));
    expect(() => cache.set("n3", set({ [CLUSTER_TYPE]: { c: shared } }))).toThrow("is a envoy.config.endpoint.v3.ClusterLoadAssignment");
    expect(cache.get("n3")).toBeUndefined();
  });

  test("a type whose resources are all unchanged keeps its snapshot; renaming one changes it", () => {
    const cache = createXdsCache();
    const a = cluster("a");
    cache.set("n1", set({ [CLUSTER_TYPE]: { a, b: cluster("b") } }));
    const before = typeSnapshot(cache.get("n1"), CLUSTER_TYPE);
    expect(cache.set("n1", set({ [CLUSTER_TYPE]: { a, b: cluster("b") } }))).toEqual([]);
    expect(typeSnapshot(cache.get("n1"), CLUSTER_TYPE)).toBe(before);
    // Same count, one name swapped for a resource with the same bytes: a different set of names.
    expect(cache.set("n1", set({ [CLUSTER_TYPE]: { a, c: cluster("b") } }))).toEqual([CLUSTER_TYPE]);
    expect([...typeSnapshot(cache.get("n1"), CLUSTER_TYPE).resources.keys()]).toEqual(["a", "c"]);
  });

  test("the first set of a node creates its snapshot even when empty", () => {
    const cache = createXdsCache();
    const events: CacheEvent[] = [];
    cache.watch("n", (e) => events.push(e));
    expect(cache.set("n", new Map())).toEqual([]);
    expect(cache.get("n")!.generation).toBe(1);
    expect(events).toHaveLength(1);
  });

  test("bad input throws and writes nothing", () => {
    const cache = createXdsCache();
    cache.set("n", set({ [CLUSTER_TYPE]: { a: cluster("a") } }));
    const s = cache.get("n");
    expect(() => cache.set("n", set({ [CLUSTER_TYPE]: { a: cluster("a", "new") }, [ENDPOINT_TYPE]: { a: cluster("a") } }))).toThrow(
      /is a envoy.config.cluster.v3.Cluster, not type.googleapis.com\/envoy.config.endpoint.v3.ClusterLoadAssignment/,
    );
    expect(() => cache.set("n", set({ [CLUSTER_TYPE]: { "": cluster("a") } }))).toThrow(/empty resource name/);
    expect(() => cache.set("n", set({ "not-a-type-url": { a: cluster("a") } }))).toThrow(/bad type URL/);
    expect(() => cache.set("", new Map())).toThrow(/node ID/);
    const req = create(DiscoveryRequestSchema, { typeUrl: CLUSTER_TYPE });
    expect(() => cache.set("n", set({ [TYPE_URL_PREFIX + req.$typeName]: { r: req } }))).toThrow(/no schema registered/);
    // With a registry that knows the type, it is accepted.
    const withRegistry = createXdsCache({ registry: createRegistry(DiscoveryRequestSchema, ListenerSchema) });
    expect(withRegistry.set("m", set({ [TYPE_URL_PREFIX + req.$typeName]: { r: req }, [LISTENER_TYPE]: { l: create(ListenerSchema, { name: "l" }) } }))).toHaveLength(2);
    expect(cache.get("n")).toBe(s!);
  });

  test("removal tells watchers; cancelled watchers hear nothing; a throwing watcher does not stop the others", () => {
    const cache = createXdsCache();
    const seen: string[] = [];
    const cancel = cache.watch("n", (e) => seen.push(`w1:${e.kind}`));
    cache.watch("n", () => {
      throw new Error("boom");
    });
    cache.watch("n", (e) => seen.push(`w3:${e.kind}`));
    expect(() => cache.set("n", set({ [CLUSTER_TYPE]: { a: cluster("a") } }))).toThrow("boom");
    expect(cache.get("n")).toBeDefined();
    cancel();
    expect(() => cache.remove("n")).toThrow("boom");
    expect(seen).toEqual(["w1:set", "w3:set", "w3:removed"]);
    expect(cache.get("n")).toBeUndefined();
    expect(() => cache.remove("n")).toThrow("boom"); // the watchers hear it again: the node is still gone
    expect(cache.nodes()).toEqual([]);
  });

  test("removing a node that never had a snapshot still tells its watchers (a stream waiting for a first snapshot)", () => {
    const cache = createXdsCache();
    const seen: string[] = [];
    cache.watch("waiting", (e) => seen.push(e.kind));
    expect(cache.remove("waiting")).toBe(false);
    expect(seen).toEqual(["removed"]);
  });
});
