import { describe, expect, test } from "bun:test";
import type { CheckServiceNode } from "../model/index.ts";
import { systemClock } from "../platform/index.ts";
import { fakeApi } from "../../test/harness/ui_api.ts";
import { createUi } from "./app.tsx";
import { mapLayout, significantState } from "./federation_page.tsx";
import { federationView, formatAge, median, medianRttMs, STALE_AFTER_MS, type DcReads, type FederationInput } from "./federation_view.ts";

const NOW = Date.parse("2026-12-03T12:00:00Z");
const gw = (id: string, dc: string, status = "passing"): CheckServiceNode => ({
  Node: { Node: `srv-${dc}`, Datacenter: dc }, Service: { ID: id, Service: "mesh-gateway", Kind: "mesh-gateway" }, Checks: [{ CheckID: "c", Status: status }],
} as never);
const coord = (x: number) => ({ Vec: [x, 0, 0, 0, 0, 0, 0, 0], Error: 0.2, Adjustment: 0, Height: 0 });
const member = (name: string, dc: string, status = 1) => ({ Name: name, Status: status, Tags: { dc, role: "consul" } });
const healthy = (dc: string): DcReads => ({ leader: `10.0.${dc.slice(2)}.1:8300`, gateways: [gw(`gw-${dc}`, dc)], aclReplication: { Enabled: false, Running: false } });
const input = (o: Partial<FederationInput> = {}): FederationInput => ({
  localDc: "dc1", primaryDc: "dc1", datacenters: ["dc1", "dc2", "dc3"], now: NOW,
  members: [member("s1.dc1", "dc1"), member("s1.dc2", "dc2"), member("s1.dc3", "dc3"), member("s2.dc3", "dc3")],
  coordinates: [
    { Datacenter: "dc1", Coordinates: [{ Node: "s1", Coord: coord(0) }] },
    { Datacenter: "dc2", Coordinates: [{ Node: "s1", Coord: coord(0.01) }] },
    { Datacenter: "dc3", Coordinates: [{ Node: "s1", Coord: coord(0.02) }, { Node: "s2", Coord: coord(0.04) }] },
  ],
  states: ["dc1", "dc2", "dc3"].map((dc) => ({ Datacenter: dc, MeshGateways: [gw(`gw-${dc}`, dc)], UpdatedAt: new Date(NOW - 60_000).toISOString() })),
  reads: { dc1: healthy("dc1"), dc2: healthy("dc2"), dc3: healthy("dc3") },
  ...o,
});

describe("federation view (pure)", () => {
  test("all healthy: primary and local marked, servers alive/total, gateways, state age, median RTT from here", () => {
    const [dc1, dc2, dc3] = federationView(input());
    expect(dc1).toMatchObject({ name: "dc1", primary: true, local: true, link: "healthy", rttMs: 0, serversAlive: 1, serversTotal: 1, problems: [] });
    expect(dc2).toMatchObject({ primary: false, link: "healthy", gatewaysHealthy: 1, stateAgeMs: 60_000, aclReplication: "not replicating" });
    expect(dc2!.rttMs).toBeCloseTo(10, 6);
    // dc3 has two servers at 20 and 40 ms: the median is 30.
    expect(dc3!.rttMs).toBeCloseTo(30, 6);
  });

  test("a critical gateway, a failed server and no leader are problems in words; a datacenter that does not answer is unreachable", () => {
    const views = federationView(input({
      members: [member("s1.dc1", "dc1"), member("s1.dc2", "dc2", 4), member("s1.dc3", "dc3")],
      reads: { dc1: healthy("dc1"), dc2: { ...healthy("dc2"), leader: "", gateways: [gw("gw-dc2", "dc2", "critical")] }, dc3: { leader: { error: "No path to datacenter" }, gateways: { error: "No path to datacenter" }, aclReplication: { error: "x" } } },
    }));
    expect(views[1]).toMatchObject({
      link: "degraded",
      // The primary's copy (a minute old) still says passing: anti-entropy has not caught up.
      problems: ["no leader", "0/1 servers alive", "0/1 gateways healthy", "federation state stale: the primary's copy (60 s old) differs from the datacenter's gateways"],
    });
    expect(views[2]!.link).toBe("unreachable");
    expect(views[2]!.problems).toEqual(["its servers did not answer: No path to datacenter", "gateway health from the primary's copy, not the datacenter itself"]);
    // Its gateways are then the primary's copy.
    expect(views[2]!.gateways.map((g) => g.id)).toEqual(["gw-dc3"]);
  });

  test("a federation state that differs from the datacenter's gateways is stale only once older than three sync intervals", () => {
    const differing = (ageMs: number) => federationView(input({
      states: [{ Datacenter: "dc2", MeshGateways: [gw("gw-dc2", "dc2"), gw("gw-old", "dc2")], UpdatedAt: new Date(NOW - ageMs).toISOString() }],
      datacenters: ["dc1", "dc2"],
    }))[1]!;
    expect(differing(STALE_AFTER_MS - 1).problems).toEqual([]);
    expect(differing(STALE_AFTER_MS + 1000).problems).toEqual(["federation state stale: the primary's copy (16 s old) differs from the datacenter's gateways"]);
    // A secondary the primary has no state for says so.
    expect(federationView(input({ states: [] }))[2]!.problems).toEqual(["no federation state in the primary"]);
  });

  test("ACL replication in words: running with its last success, or failing since its last error", () => {
    const withAcl = (r: DcReads["aclReplication"]) => federationView(input({ reads: { dc1: healthy("dc1"), dc2: { ...healthy("dc2"), aclReplication: r }, dc3: healthy("dc3") } }))[1]!.aclReplication;
    expect(withAcl({ Enabled: true, Running: true, SourceDatacenter: "dc1", ReplicationType: "tokens", LastSuccess: new Date(NOW - 3000).toISOString() })).toBe("running (tokens) from dc1, last success 3 s ago");
    expect(withAcl({ Enabled: true, Running: true, LastSuccess: new Date(NOW - 90_000).toISOString(), LastError: new Date(NOW - 5000).toISOString(), LastErrorMessage: "rpc error" })).toBe("failing since 5 s ago: rpc error");
  });

  test("helpers: median, RTT without coordinates, ages; the map puts the primary on top and never overlaps boxes", () => {
    expect([median([]), median([3, 1, 2]), median([4, 1, 2, 3])]).toEqual([undefined, 2, 2.5]);
    expect(medianRttMs([], "dc1", "dc2")).toBeUndefined();
    expect([formatAge(850), formatAge(3_200), formatAge(600_000), formatAge(9_000_000)]).toEqual(["850 ms", "3 s", "10 min", "3 h"]);
    const at = mapLayout(federationView(input()));
    expect(at.get("dc1")!.y).toBeLessThan(at.get("dc2")!.y);
    const points = [...at.values()];
    for (let i = 0; i < points.length; i++) for (let j = i + 1; j < points.length; j++) {
      expect(Math.abs(points[i]!.x - points[j]!.x) >= 190 || Math.abs(points[i]!.y - points[j]!.y) >= 92).toBe(true);
    }
  });
});

describe("the federation page", () => {
  test("its stream pushes for state, not for clocks: ages and RTTs alone change the hash only every 30 s", () => {
    const at = (now: number, o: Partial<FederationInput> = {}) => significantState(federationView(input({ now, ...o })), now);
    const t0 = 1_800_000_000_000;
    // One second later every age grew and the RTT estimates moved a little: the same state.
    expect(at(t0 + 1000, { coordinates: [] })).toBe(at(t0, { coordinates: [] }));
    expect(at(t0 + 1000)).toBe(at(t0));
    // A gateway turning critical is a change at once; a new 30 s period refreshes the ages.
    const critical = { reads: { dc1: healthy("dc1"), dc2: { ...healthy("dc2"), gateways: [gw("gw-dc2", "dc2", "critical")] }, dc3: healthy("dc3") } };
    expect(at(t0, critical)).not.toBe(at(t0));
    expect(at(t0 + 30_000)).not.toBe(at(t0));
  });

  test("renders the map and the table from the API's answers, each datacenter's reads asked of that datacenter", async () => {
    const fake = fakeApi({
      "GET /v1/agent/self": () => ({ json: { Config: { PrimaryDatacenter: "dc1" } } }),
      "GET /v1/agent/members": () => ({ json: [member("s1.dc1", "dc1"), member("s1.dc2", "dc2")] }),
      "GET /v1/coordinate/datacenters": () => ({ json: [] }),
      "GET /v1/internal/federation-states": () => ({ json: [] }),
      "GET /v1/status/leader": (url) => (url.searchParams.get("dc") === "dc2" ? { status: 500, text: "No path to datacenter" } : { json: "10.0.0.1:8300" }),
      "GET /v1/internal/ui/services": () => ({ json: [{ Name: "mesh-gateway", Kind: "mesh-gateway" }] }),
      "GET /v1/health/service/mesh-gateway": (url) => ({ json: [gw(`gw-${url.searchParams.get("dc") ?? "dc1"}`, "x")] }),
      "GET /v1/acl/replication": () => ({ json: { Enabled: false, Running: false } }),
    });
    const app = createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1", "dc2"], api: fake.api, clock: systemClock() });
    const html = await (await app.request("/ui/federation")).text();
    expect(html).toContain("<title>Federation – dc1 – Causeway</title>");
    expect(html).toContain('<a href="/ui/federation" aria-current="page">Federation</a>');
    expect(html).toContain('<g class="edge edge-unreachable" data-edge="dc2" data-link="unreachable">');
    expect(html).toContain("dc2: unreachable: its servers did not answer: No path to datacenter");
    expect(html).toMatch(/<tr data-dc="dc1"><th scope="row">dc1 \(primary\) \(this one\)<\/th><td class="link-healthy">/);
    expect(html).toContain('data-live-url="/ui/events?topic=federation"');
    expect(fake.calls.map((c) => c.path)).toEqual(expect.arrayContaining(["/v1/status/leader?dc=dc2", "/v1/acl/replication?dc=dc2", "/v1/agent/members?wan=1"]));
  });

  test("on a client agent (no WAN pool: members?wan=1 is null) each datacenter's servers come from its catalog", async () => {
    const server = (node: string, serf: string) => ({ Node: { Node: node }, Service: { Service: "consul" }, Checks: [{ CheckID: "serfHealth", Status: serf }] });
    const fake = fakeApi({
      "GET /v1/agent/self": () => ({ json: { Config: { PrimaryDatacenter: "dc1" } } }),
      "GET /v1/agent/members": () => ({ json: null }),
      "GET /v1/coordinate/datacenters": () => ({ json: [] }),
      "GET /v1/internal/federation-states": () => ({ json: [] }),
      "GET /v1/status/leader": () => ({ json: "10.0.0.1:8300" }),
      "GET /v1/internal/ui/services": () => ({ json: [] }),
      "GET /v1/health/service/consul": (url) =>
        ({ json: url.searchParams.get("dc") === "dc2" ? [server("a", "passing"), server("b", "critical")] : [server("s1", "passing")] }),
      "GET /v1/acl/replication": () => ({ json: { Enabled: false, Running: false } }),
    });
    const app = createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1", "dc2"], api: fake.api, clock: systemClock() });
    const res = await app.request("/ui/federation");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("dc2: degraded: 1/2 servers alive");
  });
});
