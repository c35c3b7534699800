import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import type { Any } from "@bufbuild/protobuf/wkt";
import { NodeSchema } from "../gen/envoy/config/core/v3/base_pb.ts";
import { ClusterSchema } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import { DeltaDiscoveryResponseSchema, DiscoveryResponseSchema } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DeltaDiscoveryRequest, DiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { deltaVariant, sotwVariant } from "./xds_client_protocol.ts";
import { AdsSession, newBooks } from "./xds_client_session.ts";
import type { SessionEvent, TypeBook } from "./xds_client_session.ts";
import { GATEWAY_TYPE_URLS } from "./xds_sink.ts";
import type { XdsSink } from "./xds_sink.ts";

const CDS = GATEWAY_TYPE_URLS.cluster;
const EDS = GATEWAY_TYPE_URLS.endpoint;
const LDS = GATEWAY_TYPE_URLS.listener;
const NODE = create(NodeSchema, { id: "gw-1", cluster: "gw" });

const packed: Record<string, (name: string, n?: number) => Any> = {
  [CDS]: (name, n = 5) => anyPack(ClusterSchema, create(ClusterSchema, { name, connectTimeout: { seconds: BigInt(n) } })),
  [EDS]: (name, n = 1) => anyPack(ClusterLoadAssignmentSchema, create(ClusterLoadAssignmentSchema, { clusterName: name, endpoints: [{ priority: n }] })),
  [LDS]: (name, n = 1) => anyPack(ListenerSchema, create(ListenerSchema, { name, statPrefix: `p${n}` })),
};

/** A sink whose EDS names are the clusters it holds, and that rejects what `rejectIf` names. */
class FakeSink implements XdsSink {
  readonly sets = new Map<string, string[]>();
  readonly calls: string[] = [];
  rejectIf: (typeUrl: string, names: string[]) => string | undefined = () => undefined;
  apply(typeUrl: string, set: ReadonlyMap<string, Any>): string | undefined {
    const names = [...set.keys()].sort();
    this.calls.push(`${typeUrl.slice(typeUrl.lastIndexOf(".") + 1)} ${names.join(",")}`);
    const reason = this.rejectIf(typeUrl, names);
    if (reason === undefined) this.sets.set(typeUrl, names);
    return reason;
  }
  endpointNames(): readonly string[] {
    return (this.sets.get(CDS) ?? []).filter((n) => !n.startsWith("dns"));
  }
}

let nonce = 0;
const deltaResp = (typeUrl: string, upserts: Array<[string, string]>, removed: string[] = []) =>
  create(DeltaDiscoveryResponseSchema, {
    typeUrl,
    nonce: `n${++nonce}`,
    systemVersionInfo: `sys${nonce}`,
    resources: upserts.map(([name, version]) => ({ name, version, resource: packed[typeUrl]!(name, Number(version)) })),
    removedResources: removed,
  });
const sotwResp = (typeUrl: string, names: Array<[string, number]>, version: string) =>
  create(DiscoveryResponseSchema, { typeUrl, nonce: `n${++nonce}`, versionInfo: version, resources: names.map(([n, x]) => packed[typeUrl]!(n, x)) });

/** Summaries of delta requests (a delta request with a nonce and no error is an ACK). */
const dsum = (reqs: DeltaDiscoveryRequest[]) =>
  reqs.map((r) => {
    const t = r.typeUrl.slice(r.typeUrl.lastIndexOf(".") + 1);
    const parts = [t];
    if (r.node) parts.push(`node=${r.node.id}`);
    if (r.resourceNamesSubscribe.length) parts.push(`+${r.resourceNamesSubscribe.join(",")}`);
    if (r.resourceNamesUnsubscribe.length) parts.push(`-${r.resourceNamesUnsubscribe.join(",")}`);
    const initial = Object.entries(r.initialResourceVersions).sort();
    if (initial.length) parts.push(`initial=${initial.map(([n, v]) => `${n}@${v}`).join(",")}`);
    if (r.responseNonce) parts.push(`${r.errorDetail ? "NACK" : "ACK"} ${r.responseNonce}`);
    return parts.join(" ");
  });
/** Summaries of SotW requests (on the wire an ACK is a request with the response's nonce and version). */
const ssum = (reqs: DiscoveryRequest[]) =>
  reqs.map((r) => {
    const t = r.typeUrl.slice(r.typeUrl.lastIndexOf(".") + 1);
    return [t, r.node ? `node=${r.node.id}` : "", `[${r.resourceNames.join(",")}]`, `v=${r.versionInfo}`, r.responseNonce ? `${r.errorDetail ? "NACK" : "nonce"} ${r.responseNonce}` : ""]
      .filter((x) => x !== "").join(" ");
  });

function deltaSession(books = newBooks(), sink = new FakeSink(), events: SessionEvent[] = []) {
  return { s: new AdsSession({ variant: deltaVariant, books, sink, node: NODE, now: () => 42, onEvent: (e) => events.push(e) }), books, sink, events };
}

describe("AdsSession (delta)", () => {
  test("a fresh stream subscribes in warming order: clusters, then endpoints by the sink's names, then listeners", () => {
    nonce = 0;
    const { s, books, sink } = deltaSession();
    expect(dsum(s.open())).toEqual(["Cluster node=gw-1"]);
    expect(dsum(s.onResponse(deltaResp(CDS, [["a", "1"], ["b", "1"], ["dns", "1"]])))).toEqual(["ClusterLoadAssignment +a,b", "Cluster ACK n1"]);
    expect(s.endpointSubscription()).toEqual(["a", "b"]);
    expect(dsum(s.onResponse(deltaResp(EDS, [["a", "1"]], ["b"])))).toEqual(["Listener", "ClusterLoadAssignment ACK n2"]);
    expect(dsum(s.onResponse(deltaResp(LDS, [["l", "1"]])))).toEqual(["Listener ACK n3"]);
    expect(sink.calls).toEqual(["Cluster a,b,dns", "ClusterLoadAssignment a", "Listener l"]);
    const cds = books.get(CDS)!;
    expect([cds.accepted, cds.version, cds.nonce, cds.applied, cds.held.size, cds.lastUpdateMs]).toEqual([true, "sys1", "n1", 1, 3, 42]);
  });

  test("a rejected response is NACKed, the last good set stays, and the next response applies on top of it", () => {
    nonce = 0;
    const events: SessionEvent[] = [];
    const { s, books, sink } = deltaSession(newBooks(), new FakeSink(), events);
    s.open();
    s.onResponse(deltaResp(CDS, [["a", "1"], ["b", "1"]]));
    sink.rejectIf = (t, names) => (t === CDS && names.includes("bad") ? 'cluster "bad" is not supported' : undefined);
    const out = s.onResponse(deltaResp(CDS, [["bad", "1"], ["b", "2"]]));
    expect(dsum(out)).toEqual(["Cluster NACK n2"]);
    expect(out[0]!.errorDetail?.message).toBe('cluster "bad" is not supported');
    const cds = books.get(CDS)!;
    expect([...cds.held.keys()].sort()).toEqual(["a", "b"]);
    expect(cds.held.get("b")!.version).toBe("1");
    expect([cds.version, cds.nonce, cds.rejected, cds.lastNack]).toEqual(["sys1", "n2", 1, { reason: 'cluster "bad" is not supported', nonce: "n2", version: "sys2", atMs: 42 }]);
    expect(dsum(s.onResponse(deltaResp(CDS, [["c", "1"]])))).toEqual(["ClusterLoadAssignment +c", "Cluster ACK n3"]);
    expect(sink.sets.get(CDS)).toEqual(["a", "b", "c"]);
    expect(events.map((e) => e.kind)).toEqual(["applied", "rejected", "applied"]);
  });

  test("the EDS subscription follows applied clusters (before the CDS ACK) and forgets endpoints of removed clusters", () => {
    nonce = 0;
    const { s, books } = deltaSession();
    s.open();
    s.onResponse(deltaResp(CDS, [["a", "1"], ["b", "1"]]));
    s.onResponse(deltaResp(EDS, [["a", "1"], ["b", "1"]]));
    expect(dsum(s.onResponse(deltaResp(CDS, [["c", "1"]], ["a"])))).toEqual(["ClusterLoadAssignment +c -a", "Cluster ACK n3"]);
    expect([...books.get(EDS)!.held.keys()]).toEqual(["b"]);
    // A response that changes nothing the sink derives names from: no re-subscription.
    expect(dsum(s.onResponse(deltaResp(CDS, [["c", "2"]])))).toEqual(["Cluster ACK n4"]);
    // Endpoints of names not subscribed to are ignored.
    s.onResponse(deltaResp(EDS, [["zz", "1"], ["c", "1"]]));
    expect([...books.get(EDS)!.held.keys()].sort()).toEqual(["b", "c"]);
  });

  test("a reconnect sends every first request at once with what it holds; the node only on the first", () => {
    nonce = 0;
    const { s, books, sink } = deltaSession();
    s.open();
    s.onResponse(deltaResp(CDS, [["a", "1"], ["b", "1"]]));
    s.onResponse(deltaResp(EDS, [["a", "3"], ["b", "4"]]));
    s.onResponse(deltaResp(LDS, [["l", "1"]]));
    const again = deltaSession(books, sink).s;
    expect(dsum(again.open())).toEqual([
      "Cluster node=gw-1 initial=a@1,b@1",
      "ClusterLoadAssignment +a,b initial=a@3,b@4",
      "Listener initial=l@1",
    ]);
    // The server sends only what changed; it is applied on the held set.
    expect(dsum(again.onResponse(deltaResp(LDS, [["m", "1"]])))).toEqual(["Listener ACK n4"]);
    expect(sink.sets.get(LDS)).toEqual(["l", "m"]);
  });

  test("a reconnect after only clusters were held waits for endpoints before listeners", () => {
    nonce = 0;
    const { s, books, sink } = deltaSession();
    s.open();
    s.onResponse(deltaResp(CDS, [["a", "1"]]));
    const again = deltaSession(books, sink).s;
    expect(dsum(again.open())).toEqual(["Cluster node=gw-1 initial=a@1", "ClusterLoadAssignment +a"]);
    expect(dsum(again.onResponse(deltaResp(EDS, [["a", "1"]])))).toEqual(["Listener", "ClusterLoadAssignment ACK n2"]);
  });

  test("a response of a type not subscribed to is ignored and not answered; a throwing sink means a NACK", () => {
    nonce = 0;
    const events: SessionEvent[] = [];
    const { s, sink } = deltaSession(newBooks(), new FakeSink(), events);
    s.open();
    expect(s.onResponse(deltaResp(LDS, [["l", "1"]]))).toEqual([]);
    expect(s.onResponse(deltaResp("type.googleapis.com/envoy.config.route.v3.RouteConfiguration", []))).toEqual([]);
    sink.apply = () => {
      throw new Error("boom");
    };
    const out = s.onResponse(deltaResp(CDS, [["a", "1"]]));
    expect(out.at(-1)!.errorDetail?.message).toBe("internal error applying the update: boom");
    expect(events.map((e) => e.kind)).toEqual(["ignored", "ignored", "rejected"]);
  });
});

describe("AdsSession (sotw)", () => {
  test("requests carry the subscription and the last accepted version; a NACK keeps it", () => {
    nonce = 0;
    const books: Map<string, TypeBook> = newBooks();
    const sink = new FakeSink();
    const s = new AdsSession({ variant: sotwVariant, books, sink, node: NODE, now: () => 1 });
    expect(ssum(s.open())).toEqual(["Cluster node=gw-1 [] v="]);
    expect(ssum(s.onResponse(sotwResp(CDS, [["a", 5], ["b", 5]], "c1")))).toEqual(["ClusterLoadAssignment [a,b] v=", "Cluster [] v=c1 nonce n1"]);
    expect(ssum(s.onResponse(sotwResp(EDS, [["a", 1]], "e1")))).toEqual(["Listener [] v=", "ClusterLoadAssignment [a,b] v=e1 nonce n2"]);
    sink.rejectIf = (t) => (t === EDS ? "no" : undefined);
    expect(ssum(s.onResponse(sotwResp(EDS, [["a", 2], ["b", 1]], "e2")))).toEqual(["ClusterLoadAssignment [a,b] v=e1 NACK n3"]);
    sink.rejectIf = () => undefined;
    // Clusters change: the EDS re-subscription names the last EDS nonce and the last good version, then the CDS ACK.
    expect(ssum(s.onResponse(sotwResp(CDS, [["b", 5], ["c", 5]], "c2")))).toEqual(["ClusterLoadAssignment [b,c] v=e1 nonce n3", "Cluster [] v=c2 nonce n4"]);
    expect([...books.get(EDS)!.held.keys()]).toEqual([]);
    expect(sink.sets.get(CDS)).toEqual(["b", "c"]);
  });

  test("a reconnect sends the last accepted versions and subscriptions at once", () => {
    nonce = 0;
    const books = newBooks();
    const sink = new FakeSink();
    const s = new AdsSession({ variant: sotwVariant, books, sink, node: NODE, now: () => 1 });
    s.open();
    s.onResponse(sotwResp(CDS, [["a", 5]], "c1"));
    s.onResponse(sotwResp(EDS, [["a", 1]], "e1"));
    s.onResponse(sotwResp(LDS, [["l", 1]], "l1"));
    const again = new AdsSession({ variant: sotwVariant, books, sink, node: NODE, now: () => 1 });
    expect(ssum(again.open())).toEqual(["Cluster node=gw-1 [] v=c1", "ClusterLoadAssignment [a] v=e1", "Listener [] v=l1"]);
  });
});
