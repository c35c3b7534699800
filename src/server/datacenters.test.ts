import { describe, expect, test } from "bun:test";
import { datacenterMaps, datacentersByCoordinates, datacentersByDistance, wanCoordinates } from "./datacenters.ts";

describe("datacentersByDistance", () => {
  test("local first, then by median RTT of alive servers, unmeasured last, ties by name", () => {
    const servers = [
      { datacenter: "dc1", status: "alive" },
      { datacenter: "far", status: "alive", rttMs: 90 },
      { datacenter: "far", status: "alive", rttMs: 110 },
      { datacenter: "near", status: "alive", rttMs: 5 },
      { datacenter: "near", status: "failed", rttMs: 500 },
      { datacenter: "unknown-b", status: "alive" },
      { datacenter: "unknown-a", status: "failed", rttMs: 1 },
      { datacenter: "mid", status: "alive", rttMs: 40 },
    ];
    expect(datacentersByDistance("dc1", servers)).toEqual(["dc1", "near", "mid", "far", "unknown-a", "unknown-b"]);
  });

  test("a server alone in its pool knows its own datacenter", () => {
    expect(datacentersByDistance("dc1", [])).toEqual(["dc1"]);
  });
});

/** A coordinate `ms` milliseconds from the origin along the first axis (height 0: distances are exact). */
const at = (ms: number) => ({ Vec: [ms / 1000, 0, 0, 0, 0, 0, 0, 0], Error: 0.2, Adjustment: 0, Height: 0 });
const srv = (name: string, datacenter: string, ms?: number, status = "alive") => ({ name: `${name}.${datacenter}`, datacenter, status, coordinate: ms === undefined ? undefined : at(ms) });

describe("datacentersByCoordinates (Consul's getDatacentersByDistance)", () => {
  test.each([
    ["median (upper for an even count) of distances from this server; local 0; name order for ties",
      [srv("s1", "dc1", 0), srv("s2", "dc1", 400), srv("a", "far", 90), srv("b", "far", 110), srv("c", "far", 100), srv("x", "near", 5), srv("y", "near", 50),
        srv("m", "mid", 40), srv("n", "tie", 40)],
      ["dc1", "mid", "tie", "near", "far"]],
    ["servers without a coordinate count as Infinity; a datacenter with none goes last, by name",
      [srv("s1", "dc1", 0), srv("a", "zz", 1), srv("b", "unknown-b"), srv("c", "unknown-a"), srv("d", "half", 10), srv("e", "half")],
      ["dc1", "zz", "half", "unknown-a", "unknown-b"]],
    ["servers that left are skipped (a datacenter of only those disappears)",
      [srv("s1", "dc1", 0), srv("a", "gone", 1, "left"), srv("b", "mixed", 500), srv("c", "mixed", 1, "left")],
      ["dc1", "mixed"]],
    ["a server alone knows its own datacenter", [], ["dc1"]],
  ])("%s", (_what, servers, want) => {
    expect(datacentersByCoordinates("dc1", at(0), servers)).toEqual(want);
  });

  test("without its own coordinate, every other datacenter is at Infinity: local first, then by name", () => {
    expect(datacentersByCoordinates("dc2", undefined, [srv("a", "dc3", 1), srv("b", "dc1", 100), srv("c", "dc2")])).toEqual(["dc2", "dc1", "dc3"]);
  });
});

describe("datacenterMaps (Consul's ListDatacenters)", () => {
  test("per datacenter by name, servers with coordinates by node name, the .dc suffix stripped, area wan", () => {
    expect(datacenterMaps([srv("s2", "dc1", 3), srv("s1", "dc1", 1), srv("x", "dc0"), srv("a", "dc2", 7), srv("z", "dc2", 9, "left")])).toEqual([
      { Datacenter: "dc1", AreaID: "wan", Coordinates: [{ Node: "s1", Segment: "", Coord: at(1) }, { Node: "s2", Segment: "", Coord: at(3) }] },
      { Datacenter: "dc2", AreaID: "wan", Coordinates: [{ Node: "a", Segment: "", Coord: at(7) }] },
    ]);
  });

  test("wanCoordinates reads the pool: Consul servers only, cached coordinates by member name", () => {
    const tags = (dc: string) => ({ role: "consul", dc, port: "8300", vsn: "2", build: "1.8.0:abc", id: "x" });
    const members = [
      { name: "s1.dc1", addr: "10.0.0.1", port: 8302, tags: tags("dc1"), status: "alive" as const },
      { name: "s2.dc2", addr: "10.0.0.2", port: 8302, tags: tags("dc2"), status: "alive" as const },
      { name: "client", addr: "10.0.0.3", port: 8302, tags: { role: "node", dc: "dc3" }, status: "alive" as const },
    ];
    const cached: Record<string, ReturnType<typeof at>> = { "s1.dc1": at(0), "s2.dc2": at(20), client: at(1) };
    const w = wanCoordinates("dc1", { members: () => members, coordinate: () => at(0), cachedCoordinate: (n) => cached[n] });
    expect(w.datacenters()).toEqual(["dc1", "dc2"]);
    expect(w.datacenterMaps().map((m) => [m.Datacenter, m.Coordinates.map((c) => c.Node)])).toEqual([["dc1", ["s1"]], ["dc2", ["s2"]]]);
  });
});
