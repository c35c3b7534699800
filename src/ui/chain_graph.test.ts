import { describe, expect, test } from "bun:test";
import { chainGraph, isDefaultChain, routeMatchText, weightText, type ChainGraph } from "./chain_graph.ts";
import { compiledChain, ROUTED_ENTRIES } from "./chain_fixtures.test.ts";
import { fit, layoutChain, NODE_WIDTH, overlaps, PORT_GAP, type Rect } from "./chain_layout.ts";

describe("the routing page's chain graph", () => {
  test("a routed chain: every chain node once, breadth first from the start, then the targets as the resolvers use them", () => {
    const chain = compiledChain("web", ROUTED_ENTRIES);
    const g = chainGraph(chain);
    const chainNodes = g.nodes.filter((n) => n.kind !== "target");
    expect(chainNodes.map((n) => n.id).sort()).toEqual(Object.keys(chain.Nodes).sort());
    expect(g.nodes.map((n) => n.id)).toEqual([
      "router:web", "resolver:web-admin.default.dc1", "splitter:web", "resolver:v1.web.default.dc1", "resolver:v2.web.default.dc1",
      "target:web-admin.default.dc1", "target:v1.web.default.dc1", "target:v1.web.default.dc2", "target:v1.web.default.dc3",
      "target:v2.web.default.dc1", "target:v2.web.default.dc2", "target:v2.web.default.dc3",
    ]);
    expect(g.nodes.filter((n) => n.kind === "target").map((n) => n.name).sort()).toEqual(Object.keys(chain.Targets).sort());
    expect(g.edges.map((e) => [e.from, e.to, e.label, e.kind])).toEqual([
      ["router:web", "resolver:web-admin.default.dc1", "path prefix /admin", "route"],
      ["router:web", "splitter:web", "path prefix /", "route"],
      ["resolver:web-admin.default.dc1", "target:web-admin.default.dc1", "primary", "primary"],
      ["splitter:web", "resolver:v1.web.default.dc1", "90%", "split"],
      ["splitter:web", "resolver:v2.web.default.dc1", "10%", "split"],
      ["resolver:v1.web.default.dc1", "target:v1.web.default.dc1", "primary", "primary"],
      ["resolver:v1.web.default.dc1", "target:v1.web.default.dc2", "failover 1", "failover"],
      ["resolver:v1.web.default.dc1", "target:v1.web.default.dc3", "failover 2", "failover"],
      ["resolver:v2.web.default.dc1", "target:v2.web.default.dc1", "primary", "primary"],
      ["resolver:v2.web.default.dc1", "target:v2.web.default.dc2", "failover 1", "failover"],
      ["resolver:v2.web.default.dc1", "target:v2.web.default.dc3", "failover 2", "failover"],
    ]);
    const v1 = g.nodes.find((n) => n.id === "resolver:v1.web.default.dc1")!;
    expect(v1.description).toBe("resolver v1.web.default.dc1, failover to dc2 then dc3");
    expect(v1.detail).toBe("failover: dc2, dc3");
    expect(g.nodes.find((n) => n.id === "splitter:web")!.description).toBe("splitter web, 2 splits: 90%, 10%");
    expect(g.nodes.find((n) => n.id === "target:v2.web.default.dc3")!.description).toBe("target v2.web.default.dc3: service web, subset v2, in dc3");
    expect(isDefaultChain(chain)).toBe(false);
    expect(chainGraph(chain)).toEqual(g);
  });

  test("no config entries: one default resolver and its one target", () => {
    const chain = compiledChain("db");
    const g = chainGraph(chain);
    expect(isDefaultChain(chain)).toBe(true);
    expect(g.nodes.map((n) => [n.id, n.kind, n.detail])).toEqual([["resolver:db.default.dc1", "resolver", "default resolver"], ["target:db.default.dc1", "target", "in dc1"]]);
    expect(g.edges).toEqual([{ from: "resolver:db.default.dc1", to: "target:db.default.dc1", label: "primary", kind: "primary" }]);
    expect(g.nodes[0]!.description).toBe("resolver db.default.dc1, no failover");
  });

  test("failover to another service is named by its target ID", () => {
    const chain = compiledChain("api", [{ Kind: "service-resolver", Name: "api", Failover: { "*": { Service: "api-backup" } } }]);
    expect(chainGraph(chain).nodes[0]!.description).toBe("resolver api.default.dc1, failover to api-backup.default.dc1");
  });

  test("route matches and weights in words", () => {
    expect(routeMatchText({})).toBe("any request");
    expect(routeMatchText({ Match: { HTTP: { PathExact: "/x", Methods: ["GET", "PUT"] } } })).toBe("path /x, methods GET PUT");
    expect(routeMatchText({ Match: { HTTP: { Header: [{ Name: "x-beta", Present: true }, { Name: "x-env", Exact: "qa", Invert: true }], QueryParam: [{ Name: "debug", Exact: "1" }] } } }))
      .toBe("header x-beta present, header x-env not = qa, query debug = 1");
    expect(weightText(90)).toBe("90%");
    expect(weightText(33.333)).toBe("33.33%");
  });
});

/** A layout path ("M x y", "H x", "C x y x y x y") as its pieces: horizontal runs at y, and bends from x1 to x2. */
function segments(path: string): { horizontal: boolean; x1: number; x2: number; y: number }[] {
  const out: { horizontal: boolean; x1: number; x2: number; y: number }[] = [];
  let x = 0;
  let y = 0;
  for (const [, op, args] of path.matchAll(/([MHC])([^MHC]*)/g)) {
    const n = args!.trim().split(/\s+/).map(Number);
    if (op === "M") [x, y] = n as [number, number];
    else if (op === "H") {
      out.push({ horizontal: true, x1: x, x2: n[0]!, y });
      x = n[0]!;
    } else {
      out.push({ horizontal: false, x1: x, x2: n[4]!, y });
      [x, y] = [n[4]!, n[5]!];
    }
  }
  return out;
}

describe("the chain's layout", () => {
  const all = (l: ReturnType<typeof layoutChain>): Rect[] => [...l.boxes, ...l.edges.map((e) => e.labelBox)];

  test("columns left to right, nothing overlaps, everything inside the picture, deterministic", () => {
    const g = chainGraph(compiledChain("web", ROUTED_ENTRIES));
    const l = layoutChain(g);
    const xOf = (kind: string) => [...new Set(l.boxes.filter((b) => b.kind === kind).map((b) => b.x))];
    const [router, splitter, resolver, target] = ["router", "splitter", "resolver", "target"].map(xOf);
    expect([router, splitter, resolver, target].map((xs) => xs!.length)).toEqual([1, 1, 1, 1]);
    expect(router![0]! < splitter![0]! && splitter![0]! < resolver![0]! && resolver![0]! < target![0]!).toBe(true);
    const rects = all(l);
    for (let i = 0; i < rects.length; i++) {
      for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i]!, rects[j]!)).toBe(false);
    }
    for (const r of l.boxes) expect(r.x >= 0 && r.y >= 0 && r.x + r.width <= l.width && r.y + r.height <= l.height).toBe(true);
    for (const r of [...l.boxes, ...l.edges.map((e) => e.labelBox)]) expect([r.x, r.y, r.width, r.height].every(Number.isInteger)).toBe(true);
    expect(layoutChain(g)).toEqual(l);
    expect(l.edges).toHaveLength(g.edges.length);
  });

  test("each edge leaves its own port and ends at its target's left middle; failover labels in order", () => {
    const l = layoutChain(chainGraph(compiledChain("web", ROUTED_ENTRIES)));
    const box = (id: string) => l.boxes.find((b) => b.id === id)!;
    const from = l.edges.filter((e) => e.from === "resolver:v1.web.default.dc1");
    const starts = from.map((e) => /^M(\d+) (\d+)/.exec(e.path)!.slice(1).map(Number));
    expect(starts.map(([x]) => x)).toEqual([box("resolver:v1.web.default.dc1").x + NODE_WIDTH, box("resolver:v1.web.default.dc1").x + NODE_WIDTH, box("resolver:v1.web.default.dc1").x + NODE_WIDTH]);
    expect(starts[1]![1]! - starts[0]![1]!).toBe(PORT_GAP);
    expect(from.map((e) => e.labelText)).toEqual(["primary", "failover 1", "failover 2"]);
    for (const e of l.edges) {
      const t = box(e.to);
      expect(e.path.endsWith(`${t.x} ${t.y + Math.round(t.height / 2)}`)).toBe(true);
    }
  });

  test("the default chain: two columns; long names and labels are cut with an ellipsis", () => {
    const l = layoutChain(chainGraph(compiledChain("db")));
    expect(l.boxes.map((b) => b.kind)).toEqual(["resolver", "target"]);
    expect(l.boxes[0]!.y).toBe(l.boxes[1]!.y);
    expect(fit("abcdef", 4)).toBe("abc…");
    expect(fit("abc", 4)).toBe("abc");
    const long = layoutChain({ nodes: [{ id: "router:x", kind: "router", name: "x".repeat(60), detail: "", description: "" }, { id: "resolver:y", kind: "resolver", name: "y", detail: "", description: "" }], edges: [{ from: "router:x", to: "resolver:y", label: "header x-a-very-long-header-name present", kind: "route" }] });
    expect(long.boxes[0]!.nameText.endsWith("…")).toBe(true);
    expect(long.edges[0]!.labelText.endsWith("…")).toBe(true);
    expect(long.edges[0]!.labelBox.x + long.edges[0]!.labelBox.width < long.boxes[1]!.x).toBe(true);
  });

  test("no edge crosses a box: skipped columns are passed through slots between their boxes; a large chain too", () => {
    const wide: ChainGraph = {
      nodes: [
        { id: "router:r", kind: "router", name: "r", detail: "", description: "" },
        { id: "splitter:s", kind: "splitter", name: "s", detail: "", description: "" },
        ...[0, 1, 2, 3, 4, 5].map((i) => ({ id: `resolver:${i}`, kind: "resolver" as const, name: `${i}`, detail: "", description: "" })),
        ...[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => ({ id: `target:${i}`, kind: "target" as const, name: `${i}`, detail: "", description: "" })),
      ],
      edges: [
        ...[0, 1, 2, 3].map((i) => ({ from: "router:r", to: `resolver:${i}`, label: `path prefix /${i}`, kind: "route" as const })),
        { from: "router:r", to: "splitter:s", label: "any request", kind: "route" },
        { from: "router:r", to: "target:9", label: "odd", kind: "route" },
        { from: "splitter:s", to: "resolver:4", label: "50%", kind: "split" },
        { from: "splitter:s", to: "resolver:5", label: "50%", kind: "split" },
        ...[0, 1, 2, 3, 4, 5].flatMap((i) => [
          { from: `resolver:${i}`, to: `target:${i}`, label: "primary", kind: "primary" as const },
          { from: `resolver:${i}`, to: `target:${(i + 1) % 9}`, label: "failover 1", kind: "failover" as const },
          { from: `resolver:${i}`, to: `target:${(i + 2) % 9}`, label: "failover 2", kind: "failover" as const },
        ]),
      ],
    };
    for (const g of [chainGraph(compiledChain("web", ROUTED_ENTRIES)), wide]) {
      const l = layoutChain(g);
      const rects = all(l);
      for (let i = 0; i < rects.length; i++) {
        for (let j = i + 1; j < rects.length; j++) expect(overlaps(rects[i]!, rects[j]!)).toBe(false);
      }
      for (const e of l.edges) {
        for (const seg of segments(e.path)) {
          for (const b of l.boxes) {
            const inX = seg.x1 < b.x + b.width && b.x < seg.x2;
            if (seg.horizontal) expect(inX && seg.y > b.y && seg.y < b.y + b.height).toBe(false);
            else expect(inX).toBe(false); // a bend lies wholly between two columns
          }
        }
      }
    }
    const router = layoutChain(chainGraph(compiledChain("web", ROUTED_ENTRIES))).edges[0]!;
    expect(segments(router.path).filter((s) => s.horizontal)).toHaveLength(2); // the run under its label, and through the splitter column
  });

  test("an empty graph is an empty picture", () => {
    expect(layoutChain({ nodes: [], edges: [] })).toEqual({ width: 20, height: 20, boxes: [], edges: [] });
  });
});
