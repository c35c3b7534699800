import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { DeltaDiscoveryRequestSchema } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DeltaDiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createXdsCache, typeSnapshot } from "../cache/cache.ts";
import type { NodeSnapshot } from "../cache/cache.ts";
import { CLUSTER_TYPE as CDS, ENDPOINT_TYPE as EDS, LISTENER_TYPE as LDS, ROUTE_TYPE as RDS } from "../types.ts";
import { ProtocolError } from "./common.ts";
import { DeltaStream } from "./delta.ts";

const enc = new TextEncoder(), dec = new TextDecoder();

function snapshots() {
  const cache = createXdsCache();
  return (spec: Record<string, Record<string, string>>): NodeSnapshot => {
    cache.set("n", new Map(Object.entries(spec).map(([t, m]) => [t, new Map(Object.entries(m).map(([n, tag]) => [n, enc.encode(`${n}=${tag}`)]))])));
    return cache.get("n")!;
  };
}

const req = (
  typeUrl: string,
  o: { sub?: string[]; unsub?: string[]; nonce?: string; nack?: string; initial?: Record<string, string> } = {},
) =>
  create(DeltaDiscoveryRequestSchema, {
    typeUrl,
    resourceNamesSubscribe: o.sub ?? [],
    resourceNamesUnsubscribe: o.unsub ?? [],
    responseNonce: o.nonce ?? "",
    initialResourceVersions: o.initial ?? {},
    errorDetail: o.nack === undefined ? undefined : { code: 3, message: o.nack },
  });

/** `Type: +name=tag,... -removed,...` (nonce left out). */
const show = (r: DeltaDiscoveryResponse | undefined) => {
  if (!r) return r;
  const up = r.resources.map((x) => {
    expect(x.version).toMatch(/^[0-9a-f]{32}$/);
    return `+${dec.decode(x.resource!.value)}`;
  });
  return `${r.typeUrl.split(".").at(-1)}: ${[...up, ...r.removedResources.map((n) => `-${n}`)].join(" ")}`;
};

const ack = (s: DeltaStream, r: DeltaDiscoveryResponse) => s.onRequest(req(r.typeUrl, { nonce: r.nonce }));

/** Sends and ACKs until nothing is left; returns what was sent. */
function drain(s: DeltaStream): string[] {
  const out: string[] = [];
  for (let r = s.next(); r; r = s.next()) {
    out.push(show(r)!);
    expect(s.next()).toBeUndefined(); // one in flight
    ack(s, r);
  }
  return out;
}

describe("delta ADS stream", () => {
  test("legacy wildcard CDS: everything, then only what changed, removals in removed_resources", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [CDS]: { a: "1", b: "1", c: "1" } }));
    expect(s.onRequest(req(CDS))).toEqual({ kind: "request", typeUrl: CDS, first: true });
    const r1 = s.next()!;
    expect(show(r1)).toBe("Cluster: +a=1 +b=1 +c=1");
    expect(r1.nonce).toBe("00000001");
    expect(r1.systemVersionInfo).toBe(typeSnapshot(snap({ [CDS]: { a: "1", b: "1", c: "1" } }), CDS).version);
    expect(ack(s, r1)).toEqual({ kind: "ack", typeUrl: CDS, nonce: "00000001", version: r1.systemVersionInfo });
    expect(s.next()).toBeUndefined();
    s.onSnapshot(snap({ [CDS]: { a: "2", b: "1" } }));
    expect(drain(s)).toEqual(["Cluster: +a=2", "Cluster: -c"]); // upserts first, removals last
  });

  test("an empty wildcard type is answered once, then only on change", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({}));
    s.onRequest(req(LDS));
    expect(drain(s)).toEqual(["Listener: "]);
    s.onSnapshot(snap({ [CDS]: { a: "1" } }));
    expect(drain(s)).toEqual([]);
    s.onSnapshot(snap({ [LDS]: { l: "1" } }));
    expect(drain(s)).toEqual(["Listener: +l=1"]);
  });

  test("named: absent names are reported removed; a resource that goes and comes back is sent again", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [EDS]: { a: "1", other: "1" } }));
    s.onRequest(req(EDS, { sub: ["a", "later"] }));
    expect(drain(s)).toEqual(["ClusterLoadAssignment: +a=1", "ClusterLoadAssignment: -later"]);
    s.onSnapshot(snap({ [EDS]: { a: "1", other: "2" } }));
    expect(drain(s)).toEqual([]); // "other" is not wanted, "later" was already reported
    s.onSnapshot(snap({ [EDS]: { a: "1", later: "1" } }));
    expect(drain(s)).toEqual(["ClusterLoadAssignment: +later=1"]);
    s.onSnapshot(snap({ [EDS]: { later: "1" } }));
    expect(drain(s)).toEqual(["ClusterLoadAssignment: -a"]);
    // No silent unsubscribe (Consul #10563/#10987): a is still wanted, so its return is sent.
    s.onSnapshot(snap({ [EDS]: { a: "1", later: "1" } }));
    expect(drain(s)).toEqual(["ClusterLoadAssignment: +a=1"]);
    // An explicit unsubscribe stops it (no response is owed for it).
    s.onRequest(req(EDS, { unsub: ["a"] }));
    s.onSnapshot(snap({ [EDS]: { a: "2", later: "1" } }));
    expect(drain(s)).toEqual([]);
    s.onRequest(req(EDS, { sub: ["a"] }));
    expect(drain(s)).toEqual(["ClusterLoadAssignment: +a=2"]);
  });

  test("subscribing again to a resource the client holds sends it again", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [RDS]: { r: "1" } }));
    s.onRequest(req(RDS, { sub: ["r"] }));
    expect(drain(s)).toEqual(["RouteConfiguration: +r=1"]);
    s.onRequest(req(RDS, { sub: ["r"] }));
    expect(drain(s)).toEqual(["RouteConfiguration: +r=1"]);
  });

  test("reconnect: initial_resource_versions are honoured, only differences are sent", () => {
    const snap = snapshots();
    const s1 = new DeltaStream();
    const first = snap({ [CDS]: { a: "1", b: "1", gone: "1" }, [EDS]: { a: "1", b: "1" } });
    s1.onSnapshot(first);
    s1.onRequest(req(CDS));
    drain(s1);
    const held = (t: string) => Object.fromEntries([...typeSnapshot(first, t).resources].map(([n, r]) => [n, r.version]));
    const cdsHeld = held(CDS), edsHeld = held(EDS);
    // The server changes b and drops "gone" while the client is away.
    const s2 = new DeltaStream();
    s2.onSnapshot(snap({ [CDS]: { a: "1", b: "2" }, [EDS]: { a: "1", b: "1" } }));
    s2.onRequest(req(CDS, { sub: ["*"], initial: cdsHeld }));
    s2.onRequest(req(EDS, { sub: ["a", "b"], initial: edsHeld }));
    // b changed: sent, and after its ACK b's endpoints again (warming); a and its endpoints are not.
    expect(drain(s2)).toEqual(["Cluster: +b=2", "ClusterLoadAssignment: +b=1", "Cluster: -gone"]);
    // Without initial versions everything is sent.
    const s3 = new DeltaStream();
    s3.onSnapshot(snap({ [CDS]: { a: "1", b: "2" } }));
    s3.onRequest(req(CDS, { sub: ["*"] }));
    expect(drain(s3)).toEqual(["Cluster: +a=1 +b=2"]);
  });

  test("NACK: the rejected version is not resent, a newer one is; the client keeps what it had", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [CDS]: { a: "1", b: "1" } }));
    s.onRequest(req(CDS));
    drain(s);
    s.onSnapshot(snap({ [CDS]: { a: "bad", b: "1" } }));
    const r = s.next()!;
    expect(show(r)).toBe("Cluster: +a=bad");
    expect(s.onRequest(req(CDS, { nonce: r.nonce, nack: "bad cluster a" }))).toEqual({
      kind: "nack", typeUrl: CDS, nonce: r.nonce, version: "", errorCode: 3, errorMessage: "bad cluster a",
    });
    expect(s.next()).toBeUndefined();
    s.onSnapshot(snap({ [CDS]: { a: "bad", b: "2" } }));
    expect(drain(s)).toEqual(["Cluster: +b=2"]);
    s.onSnapshot(snap({ [CDS]: { a: "3", b: "2" } }));
    expect(drain(s)).toEqual(["Cluster: +a=3"]);
    // The client now holds a=3, so going back to a=1 is a change like any other.
    s.onSnapshot(snap({ [CDS]: { a: "1", b: "2" } }));
    expect(drain(s)).toEqual(["Cluster: +a=1"]);
  });

  test("a stale nonce pairs with nothing, but its subscription changes apply", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [EDS]: { a: "1", b: "1" } }));
    s.onRequest(req(EDS, { sub: ["a"] }));
    const r1 = s.next()!;
    expect(s.onRequest(req(EDS, { sub: ["b"], nonce: "0000ffff" }))).toEqual({ kind: "stale", typeUrl: EDS, nonce: "0000ffff" });
    expect(s.awaitingAck()).toBe(true);
    ack(s, r1);
    expect(drain(s)).toEqual(["ClusterLoadAssignment: +b=1"]);
  });

  test("order: CDS upserts, EDS upserts, LDS, RDS, then CDS and EDS removals; one in flight", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [CDS]: { old: "1" }, [EDS]: { old: "1" }, [LDS]: { l: "1" }, [RDS]: { r: "1" } }));
    s.onRequest(req(RDS, { sub: ["r"] }));
    s.onRequest(req(LDS));
    s.onRequest(req(EDS, { sub: ["old"] }));
    s.onRequest(req(CDS));
    expect(drain(s)).toEqual([
      "Cluster: +old=1",
      "ClusterLoadAssignment: +old=1",
      "Listener: +l=1",
      "RouteConfiguration: +r=1",
    ]);
    s.onRequest(req(EDS, { sub: ["new"] }));
    s.onSnapshot(snap({ [CDS]: { new: "1" }, [EDS]: { new: "1" }, [LDS]: { l: "2" }, [RDS]: { r: "2" } }));
    expect(drain(s)).toEqual([
      "Cluster: +new=1",
      "ClusterLoadAssignment: +new=1",
      "Listener: +l=2",
      "RouteConfiguration: +r=2",
      "Cluster: -old",
      "ClusterLoadAssignment: -old",
    ]);
  });

  test("warming (#17640): endpoints of a changed cluster are sent after the cluster's ACK, never before", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [CDS]: { a: "1" }, [EDS]: { a: "1" } }));
    s.onRequest(req(CDS));
    s.onRequest(req(EDS, { sub: ["a"] }));
    drain(s);
    // Cluster and endpoints change together: CDS, then (after its ACK) the new EDS.
    s.onSnapshot(snap({ [CDS]: { a: "2" }, [EDS]: { a: "2" } }));
    const c = s.next()!;
    expect(show(c)).toBe("Cluster: +a=2");
    expect(s.next()).toBeUndefined();
    ack(s, c);
    expect(drain(s)).toEqual(["ClusterLoadAssignment: +a=2"]);
    // Cluster changes alone: its unchanged endpoints are sent again after the ACK.
    s.onSnapshot(snap({ [CDS]: { a: "3" }, [EDS]: { a: "2" } }));
    expect(drain(s)).toEqual(["Cluster: +a=3", "ClusterLoadAssignment: +a=2"]);
    // Endpoints NACKed, then the cluster changes: warming does not resend what the client refused.
    s.onSnapshot(snap({ [CDS]: { a: "3" }, [EDS]: { a: "bad" } }));
    const e = s.next()!;
    s.onRequest(req(EDS, { nonce: e.nonce, nack: "no" }));
    s.onSnapshot(snap({ [CDS]: { a: "4" }, [EDS]: { a: "bad" } }));
    expect(drain(s)).toEqual(["Cluster: +a=4"]);
  });

  test("wildcard plus a name: unsubscribing the name is answered (resource or removal)", () => {
    const snap = snapshots();
    const s = new DeltaStream();
    s.onSnapshot(snap({ [CDS]: { a: "1" } }));
    s.onRequest(req(CDS, { sub: ["*", "a", "x"] }));
    expect(drain(s)).toEqual(["Cluster: +a=1", "Cluster: -x"]);
    s.onRequest(req(CDS, { unsub: ["a", "x"] }));
    expect(drain(s)).toEqual(["Cluster: +a=1", "Cluster: -x"]);
    // Leaving the wildcard: nothing more is sent for resources no longer wanted.
    s.onRequest(req(CDS, { unsub: ["*"] }));
    s.onSnapshot(snap({ [CDS]: { a: "2" } }));
    expect(drain(s)).toEqual([]);
  });

  test("a request without type URL is refused", () => {
    expect(() => new DeltaStream().onRequest(req(""))).toThrow(ProtocolError);
  });
});
