import { describe, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { DiscoveryRequestSchema } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { DiscoveryResponse } from "../../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createXdsCache } from "../cache/cache.ts";
import type { NodeSnapshot } from "../cache/cache.ts";
import { CLUSTER_TYPE as CDS, ENDPOINT_TYPE as EDS, LISTENER_TYPE as LDS, ROUTE_TYPE as RDS } from "../types.ts";
import { ProtocolError } from "./common.ts";
import { SotwStream } from "./sotw.ts";

const enc = new TextEncoder(), dec = new TextDecoder();

/** Snapshots whose resources are the bytes of "name=tag", so responses can be read back. */
function snapshots() {
  const cache = createXdsCache();
  return (spec: Record<string, Record<string, string>>): NodeSnapshot => {
    cache.set("n", new Map(Object.entries(spec).map(([t, m]) => [t, new Map(Object.entries(m).map(([n, tag]) => [n, enc.encode(`${n}=${tag}`)]))])));
    return cache.get("n")!;
  };
}

const req = (typeUrl: string, o: { names?: string[]; nonce?: string; version?: string; nack?: string } = {}) =>
  create(DiscoveryRequestSchema, {
    typeUrl,
    resourceNames: o.names ?? [],
    responseNonce: o.nonce ?? "",
    versionInfo: o.version ?? "",
    errorDetail: o.nack === undefined ? undefined : { code: 3, message: o.nack },
  });

/** A response as `type nonce: name=tag,...`. */
const show = (r: DiscoveryResponse | undefined) =>
  r && `${r.typeUrl.split(".").at(-1)} ${r.nonce}: ${r.resources.map((a) => dec.decode(a.value)).join(",")}`;

/** ACKs `r` (nonce + version) keeping the type's names. */
const ack = (s: SotwStream, r: DiscoveryResponse, names: string[] = []) =>
  s.onRequest(req(r.typeUrl, { names, nonce: r.nonce, version: r.versionInfo }));

describe("SotW ADS stream", () => {
  test("legacy wildcard CDS: initial response, ACK, change, removal by omission", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [CDS]: { a: "1", b: "1" } }));
    expect(s.onRequest(req(CDS))).toEqual({ kind: "request", typeUrl: CDS, first: true });
    const r1 = s.next()!;
    expect(show(r1)).toBe("Cluster 00000001: a=1,b=1");
    expect(r1.versionInfo).toMatch(/^[0-9a-f]{32}$/);
    expect(s.next()).toBeUndefined();
    expect(ack(s, r1)).toEqual({ kind: "ack", typeUrl: CDS, nonce: "00000001", version: r1.versionInfo });
    expect(s.next()).toBeUndefined(); // nothing changed
    s.onSnapshot(snap({ [CDS]: { a: "2" }, [EDS]: { a: "1" } }));
    const r2 = s.next()!;
    expect(show(r2)).toBe("Cluster 00000002: a=2"); // b removed: left out of the full state
    expect(r2.versionInfo).not.toBe(r1.versionInfo);
    expect(s.next()).toBeUndefined(); // EDS not subscribed
  });

  test("per-type versions: a change of one type leaves the other's version_info alone", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [CDS]: { a: "1" }, [LDS]: { l: "1" } }));
    s.onRequest(req(CDS));
    s.onRequest(req(LDS));
    const c1 = s.next()!;
    ack(s, c1);
    const l1 = s.next()!;
    ack(s, l1);
    s.onSnapshot(snap({ [CDS]: { a: "1" }, [LDS]: { l: "2" } }));
    const l2 = s.next()!;
    expect(show(l2)).toBe("Listener 00000003: l=2");
    expect(l2.versionInfo).not.toBe(l1.versionInfo);
    ack(s, l2);
    expect(s.next()).toBeUndefined(); // CDS content (and version) unchanged: not resent
  });

  test("NACK keeps the rejected content from being resent; the next change is sent", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [CDS]: { a: "1" } }));
    s.onRequest(req(CDS));
    const r1 = s.next()!;
    ack(s, r1);
    s.onSnapshot(snap({ [CDS]: { a: "bad" } }));
    const r2 = s.next()!;
    const nack = s.onRequest(req(CDS, { nonce: r2.nonce, version: r1.versionInfo, nack: "invalid cluster" }));
    expect(nack).toEqual({ kind: "nack", typeUrl: CDS, nonce: r2.nonce, version: r1.versionInfo, errorCode: 3, errorMessage: "invalid cluster" });
    expect(s.next()).toBeUndefined();
    // A spontaneous request with the same subscription does not bring the rejected content back.
    s.onRequest(req(CDS, { nonce: r2.nonce, version: r1.versionInfo }));
    expect(s.next()).toBeUndefined();
    s.onSnapshot(snap({ [CDS]: { a: "3" } }));
    expect(show(s.next())).toBe("Cluster 00000003: a=3");
  });

  test("a request naming an older nonce of its type is ignored, subscription changes included", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [EDS]: { a: "1", b: "1" } }));
    s.onRequest(req(EDS, { names: ["a"] }));
    const r1 = s.next()!;
    ack(s, r1, ["a"]);
    s.onSnapshot(snap({ [EDS]: { a: "2", b: "1" } }));
    const r2 = s.next()!;
    expect(show(r2)).toBe("ClusterLoadAssignment 00000002: a=2");
    // The client asked for b before it saw r2: its request names r1's nonce and is stale.
    expect(s.onRequest(req(EDS, { names: ["a", "b"], nonce: r1.nonce }))).toEqual({ kind: "stale", typeUrl: EDS, nonce: r1.nonce });
    expect(s.awaitingAck()).toBe(true);
    // Its ACK of r2 carries its current names; b is sent then.
    expect(ack(s, r2, ["a", "b"]).kind).toBe("ack");
    expect(show(s.next())).toBe("ClusterLoadAssignment 00000003: a=2,b=1");
  });

  test("named subscriptions: only named resources, only their changes, a names change always answered", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [EDS]: { a: "1", b: "1", c: "1" } }));
    s.onRequest(req(EDS, { names: ["b", "a", "missing"] }));
    const r1 = s.next()!;
    expect(show(r1)).toBe("ClusterLoadAssignment 00000001: a=1,b=1");
    ack(s, r1, ["a", "b", "missing"]);
    s.onSnapshot(snap({ [EDS]: { a: "1", b: "1", c: "2" } }));
    expect(s.next()).toBeUndefined(); // c is not wanted
    const r2sub = s.onRequest(req(EDS, { names: ["a"], nonce: r1.nonce, version: r1.versionInfo }));
    expect(r2sub.kind).toBe("request");
    expect(show(s.next())).toBe("ClusterLoadAssignment 00000002: a=1");
  });

  test("legacy wildcard rules: empty first request = *, naming leaves it, empty afterwards = nothing; * is explicit", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [LDS]: { x: "1", y: "1" }, [RDS]: { r: "1" } }));
    s.onRequest(req(LDS));
    let r = s.next()!;
    expect(show(r)).toBe("Listener 00000001: x=1,y=1");
    s.onRequest(req(LDS, { names: ["*", "x"], nonce: r.nonce }));
    r = s.next()!;
    expect(show(r)).toBe("Listener 00000002: x=1,y=1");
    s.onRequest(req(LDS, { names: ["x"], nonce: r.nonce }));
    r = s.next()!;
    expect(show(r)).toBe("Listener 00000003: x=1");
    s.onRequest(req(LDS, { names: [], nonce: r.nonce }));
    r = s.next()!;
    expect(show(r)).toBe("Listener 00000004: "); // unsubscribed from everything
    ack(s, r);
    // RDS has no legacy wildcard: an empty first request subscribes to nothing.
    s.onRequest(req(RDS));
    r = s.next()!;
    expect(show(r)).toBe("RouteConfiguration 00000005: ");
    s.onRequest(req(RDS, { names: ["*"], nonce: r.nonce }));
    expect(show(s.next())).toBe("RouteConfiguration 00000006: r=1");
  });

  test("one response in flight; changes go CDS, EDS, LDS, RDS, each after the previous ACK", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [CDS]: { a: "1" }, [EDS]: { a: "1" }, [LDS]: { l: "1" }, [RDS]: { r: "1" } }));
    // Requests arrive in the "wrong" order; responses still follow the send order.
    s.onRequest(req(RDS, { names: ["r"] }));
    s.onRequest(req(LDS));
    s.onRequest(req(EDS, { names: ["a"] }));
    s.onRequest(req(CDS));
    const order: string[] = [];
    for (let r = s.next(); r; r = s.next()) {
      order.push(show(r)!);
      expect(s.next()).toBeUndefined();
      ack(s, r, r.typeUrl === EDS ? ["a"] : r.typeUrl === RDS ? ["r"] : []);
    }
    expect(order).toEqual([
      "Cluster 00000001: a=1",
      "ClusterLoadAssignment 00000002: a=1",
      "Listener 00000003: l=1",
      "RouteConfiguration 00000004: r=1",
    ]);
    s.onSnapshot(snap({ [CDS]: { a: "2" }, [EDS]: { a: "2" }, [LDS]: { l: "2" }, [RDS]: { r: "2" } }));
    order.length = 0;
    for (let r = s.next(); r; r = s.next()) {
      order.push(show(r)!.replace(/ \d+:/, ":"));
      ack(s, r, r.typeUrl === EDS ? ["a"] : r.typeUrl === RDS ? ["r"] : []);
    }
    expect(order).toEqual(["Cluster: a=2", "ClusterLoadAssignment: a=2", "Listener: l=2", "RouteConfiguration: r=2"]);
  });

  test("warming: after a changed cluster is ACKed its endpoints are sent again, even unchanged", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [CDS]: { a: "1", b: "1" }, [EDS]: { a: "1", b: "1" } }));
    s.onRequest(req(CDS));
    ack(s, s.next()!);
    s.onRequest(req(EDS, { names: ["a", "b"] }));
    const e1 = s.next()!;
    ack(s, e1, ["a", "b"]);
    s.onSnapshot(snap({ [CDS]: { a: "2", b: "1" }, [EDS]: { a: "1", b: "1" } }));
    const c2 = s.next()!;
    expect(show(c2)).toBe("Cluster 00000003: a=2,b=1");
    expect(s.next()).toBeUndefined(); // EDS waits for the CDS ACK
    ack(s, c2);
    const e2 = s.next()!;
    expect(show(e2)).toBe("ClusterLoadAssignment 00000004: a=1,b=1");
    expect(e2.versionInfo).toBe(e1.versionInfo);
    ack(s, e2, ["a", "b"]);
    expect(s.next()).toBeUndefined();
    // A NACKed cluster change does not trigger warming.
    s.onSnapshot(snap({ [CDS]: { a: "3", b: "1" }, [EDS]: { a: "1", b: "1" } }));
    const c3 = s.next()!;
    s.onRequest(req(CDS, { nonce: c3.nonce, version: c2.versionInfo, nack: "no" }));
    expect(s.next()).toBeUndefined();
  });

  test("warming: a new cluster's endpoints go out when EDS asks for them (after the CDS ACK)", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onSnapshot(snap({ [CDS]: { a: "1" }, [EDS]: { a: "1" } }));
    s.onRequest(req(CDS));
    ack(s, s.next()!);
    s.onRequest(req(EDS, { names: ["a"] }));
    const e1 = s.next()!;
    ack(s, e1, ["a"]);
    s.onSnapshot(snap({ [CDS]: { a: "1", b: "1" }, [EDS]: { a: "1", b: "1" } }));
    const c2 = s.next()!;
    // Envoy asks for b's endpoints while the CDS response is in flight: held until the ACK.
    s.onRequest(req(EDS, { names: ["a", "b"], nonce: e1.nonce, version: e1.versionInfo }));
    expect(s.next()).toBeUndefined();
    ack(s, c2);
    expect(show(s.next())).toBe("ClusterLoadAssignment 00000004: a=1,b=1");
  });

  test("nothing is sent before the node has a snapshot; a request without type URL is refused", () => {
    const snap = snapshots();
    const s = new SotwStream();
    s.onRequest(req(CDS));
    expect(s.next()).toBeUndefined();
    s.onSnapshot(snap({}));
    expect(show(s.next())).toBe("Cluster 00000001: "); // empty, but answered
    expect(() => s.onRequest(req(""))).toThrow(ProtocolError);
  });
});
