import { describe, expect, test } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack, AnySchema } from "@bufbuild/protobuf/wkt";
import type { Any } from "@bufbuild/protobuf/wkt";
import { ClusterSchema } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import { DeltaDiscoveryResponseSchema, DiscoveryResponseSchema } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { deltaVariant, MAX_NACK_MESSAGE, nackStatus, resourceName, sotwVariant } from "./xds_client_protocol.ts";
import type { HeldResource, ResourceTable } from "./xds_client_protocol.ts";
import { GATEWAY_TYPE_URLS } from "./xds_sink.ts";

const CDS = GATEWAY_TYPE_URLS.cluster;
const EDS = GATEWAY_TYPE_URLS.endpoint;

const clusterAny = (name: string, timeout = 5): Any => anyPack(ClusterSchema, create(ClusterSchema, { name, connectTimeout: { seconds: BigInt(timeout) } }));
const claAny = (name: string): Any => anyPack(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, { clusterName: name }));
const table = (entries: Array<[string, string, Any]>): ResourceTable => new Map(entries.map(([n, v, r]) => [n, { version: v, resource: r } as HeldResource]));
const delta = (o: { typeUrl?: string; resources?: Array<{ name: string; version?: string; resource?: Any }>; removed?: string[] }) =>
  create(DeltaDiscoveryResponseSchema, {
    typeUrl: o.typeUrl ?? CDS,
    nonce: "n",
    systemVersionInfo: "sv",
    resources: (o.resources ?? []).map((r) => ({ name: r.name, version: r.version ?? "v1", resource: r.resource })),
    removedResources: o.removed ?? [],
  });
const sotw = (resources: Any[], typeUrl: string = CDS, versionInfo = "v2") => create(DiscoveryResponseSchema, { typeUrl, versionInfo, nonce: "n", resources });
const ok = (c: ReturnType<typeof deltaVariant.candidate>) => {
  if (!c.ok) throw new Error(`rejected: ${c.reason}`);
  return c;
};
const reason = (c: ReturnType<typeof deltaVariant.candidate>) => (c.ok ? "accepted" : c.reason);

describe("resourceName", () => {
  test("reads field 1 of Listener, Cluster and ClusterLoadAssignment without decoding the rest", () => {
    expect(resourceName(toBinary(ListenerSchema, create(ListenerSchema, { name: "l:1", statPrefix: "x" })))).toBe("l:1");
    expect(resourceName(clusterAny("c").value)).toBe("c");
    expect(resourceName(claAny("e").value)).toBe("e");
    expect(resourceName(new Uint8Array())).toBe("");
  });

  test("throws on malformed bytes", () => {
    expect(() => resourceName(new Uint8Array([0x0a, 0x05, 0x61]))).toThrow();
  });
});

describe("delta candidate", () => {
  const held = table([["a", "1", clusterAny("a")], ["b", "1", clusterAny("b")]]);

  test("applies upserts and removals on top of the held set", () => {
    const c = ok(deltaVariant.candidate(held, delta({ resources: [{ name: "b", version: "2", resource: clusterAny("b", 9) }, { name: "c", version: "1", resource: clusterAny("c") }], removed: ["a", "zz"] }), undefined));
    expect([...c.set.keys()].sort()).toEqual(["b", "c"]);
    expect(c.set.get("b")!.version).toBe("2");
    expect(c.received).toEqual(["b", "c"]);
    expect(c.removed).toEqual(["a"]);
    expect([...held.keys()]).toEqual(["a", "b"]); // the held set is not touched
  });

  test("ignores resources outside a named subscription", () => {
    const c = ok(deltaVariant.candidate(new Map(), delta({ typeUrl: EDS, resources: [{ name: "x", resource: claAny("x") }, { name: "y", resource: claAny("y") }] }), new Set(["x"])));
    expect([...c.set.keys()]).toEqual(["x"]);
  });

  test("a body-less resource naming the held version is a heartbeat; another version is an error", () => {
    expect(ok(deltaVariant.candidate(held, delta({ resources: [{ name: "a", version: "1" }] }), undefined)).received).toEqual([]);
    expect(reason(deltaVariant.candidate(held, delta({ resources: [{ name: "a", version: "2" }] }), undefined))).toBe('resource "a" has no body');
  });

  test("rejects malformed responses", () => {
    expect(reason(deltaVariant.candidate(held, delta({ resources: [{ name: "", resource: clusterAny("") }] }), undefined))).toBe("a resource in the response has no name");
    expect(reason(deltaVariant.candidate(held, delta({ resources: [{ name: "c", resource: clusterAny("c") }, { name: "c", resource: clusterAny("c") }] }), undefined)))
      .toBe('duplicate resource name "c" in the response');
    expect(reason(deltaVariant.candidate(held, delta({ resources: [{ name: "c", resource: claAny("c") }] }), undefined)))
      .toBe(`resource "c" has type URL "${EDS}" in a response of "${CDS}"`);
    expect(reason(deltaVariant.candidate(held, delta({ resources: [{ name: "a", resource: clusterAny("a") }], removed: ["a"] }), undefined)))
      .toBe('resource "a" is both updated and removed in the response');
  });
});

describe("sotw candidate", () => {
  const held = table([["a", "v1", clusterAny("a")], ["b", "v1", clusterAny("b")]]);

  test("a wildcard response is the complete set; received lists only changed bytes", () => {
    const c = ok(sotwVariant.candidate(held, sotw([clusterAny("a"), clusterAny("c", 3)]), undefined));
    expect([...c.set.keys()]).toEqual(["a", "c"]);
    expect(c.received).toEqual(["c"]);
    expect(c.removed).toEqual(["b"]);
    expect(c.set.get("a")!.version).toBe("v2");
  });

  test("for a named subscription, a resource left out keeps its last value, and unwanted ones are ignored", () => {
    const eds = table([["x", "v1", claAny("x")], ["y", "v1", claAny("y")]]);
    const c = ok(sotwVariant.candidate(eds, sotw([claAny("y"), claAny("z")], EDS), new Set(["x", "y"])));
    expect([...c.set.keys()].sort()).toEqual(["x", "y"]);
    expect(c.set.get("x")!.version).toBe("v1");
    expect(c.removed).toEqual([]);
  });

  test("rejects malformed responses", () => {
    expect(reason(sotwVariant.candidate(held, sotw([claAny("a")]), undefined))).toBe(`a resource has type URL "${EDS}" in a response of "${CDS}"`);
    expect(reason(sotwVariant.candidate(held, sotw([clusterAny("a"), clusterAny("a")]), undefined))).toBe('duplicate resource name "a" in the response');
    expect(reason(sotwVariant.candidate(held, sotw([clusterAny("")]), undefined))).toBe("a resource in the response has no name");
    const broken = create(AnySchema, { typeUrl: CDS, value: new Uint8Array([0x0a, 0x05, 0x61]) });
    expect(reason(sotwVariant.candidate(held, sotw([broken]), undefined))).toStartWith("a resource of the response cannot be decoded: ");
  });
});

describe("requests", () => {
  const held = table([["a", "1", claAny("a")], ["b", "2", claAny("b")]]);
  const node = undefined;

  test("delta: first request with initial_resource_versions of the subscribed names, ACK, NACK, re-subscription", () => {
    const start = deltaVariant.start({ typeUrl: EDS, names: ["b", "c"], version: "sv", nonce: "" }, held, node);
    expect([start.typeUrl, start.resourceNamesSubscribe, start.initialResourceVersions, start.responseNonce]).toEqual([EDS, ["b", "c"], { b: "2" }, ""]);
    const wild = deltaVariant.start({ typeUrl: CDS, names: undefined, version: "", nonce: "" }, held, node);
    expect([wild.resourceNamesSubscribe, wild.initialResourceVersions]).toEqual([[], { a: "1", b: "2" }]);
    const ack = deltaVariant.ack({ typeUrl: CDS, names: undefined, version: "sv", nonce: "n7" });
    expect([ack.responseNonce, ack.errorDetail, ack.resourceNamesSubscribe]).toEqual(["n7", undefined, []]);
    const nack = deltaVariant.nack({ typeUrl: CDS, names: undefined, version: "sv", nonce: "n8" }, "bad cluster");
    expect([nack.responseNonce, nack.errorDetail?.code, nack.errorDetail?.message]).toEqual(["n8", 13, "bad cluster"]);
    const sub = deltaVariant.resubscribe({ typeUrl: EDS, names: ["b", "c", "d"], version: "sv", nonce: "n9" }, ["a", "b"]);
    expect([sub.resourceNamesSubscribe, sub.resourceNamesUnsubscribe, sub.responseNonce]).toEqual([["c", "d"], ["a"], ""]);
  });

  test("sotw: every request carries the subscription; a NACK keeps the last good version", () => {
    const start = sotwVariant.start({ typeUrl: EDS, names: ["a"], version: "v3", nonce: "" }, held, node);
    expect([start.versionInfo, start.resourceNames, start.responseNonce]).toEqual(["v3", ["a"], ""]);
    const ack = sotwVariant.ack({ typeUrl: CDS, names: undefined, version: "v4", nonce: "n1" });
    expect([ack.versionInfo, ack.responseNonce, ack.resourceNames, ack.errorDetail]).toEqual(["v4", "n1", [], undefined]);
    const nack = sotwVariant.nack({ typeUrl: EDS, names: ["a"], version: "v3", nonce: "n2" }, "no");
    expect([nack.versionInfo, nack.responseNonce, nack.resourceNames, nack.errorDetail?.code, nack.errorDetail?.message]).toEqual(["v3", "n2", ["a"], 13, "no"]);
    const sub = sotwVariant.resubscribe({ typeUrl: EDS, names: ["a", "b"], version: "v3", nonce: "n2" }, ["a"]);
    expect([sub.versionInfo, sub.responseNonce, sub.resourceNames]).toEqual(["v3", "n2", ["a", "b"]]);
  });

  test("a NACK message is truncated as Envoy truncates it", () => {
    expect(nackStatus("x".repeat(MAX_NACK_MESSAGE)).message.length).toBe(MAX_NACK_MESSAGE);
    expect(nackStatus("x".repeat(MAX_NACK_MESSAGE + 1)).message).toBe(`${"x".repeat(MAX_NACK_MESSAGE)}...(truncated)`);
  });
});
