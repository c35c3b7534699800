/**
 * The routing page's graph laid out left to right, one column per kind that occurs (routers,
 * splitters, resolvers, targets), each column centred vertically. Pure and deterministic: integer
 * coordinates from the graph alone. Contract: boxes never overlap; each edge leaves its source box
 * from its own port on the right side (ports 20 px apart, so their labels, drawn above a straight
 * first run of the edge, never overlap each other or a box) and ends at the middle of the target's
 * left side; an edge that skips a column passes it through a slot of its own between that column's
 * boxes, and between columns edges only bend (so no edge crosses a box); labels and node texts are
 * cut with "…" to fit the space they get.
 */
import { CHAIN_COLUMNS, type ChainEdgeKind, type ChainGraph, type ChainKind } from "./chain_graph.ts";

export const NODE_WIDTH = 180;
/** The room between two columns: enough for the longest label of the edges leaving the left one, within these bounds. */
export const MIN_COLUMN_GAP = 80;
export const MAX_COLUMN_GAP = 200;
export const ROW_GAP = 20;
export const MARGIN = 10;
export const PORT_GAP = 20;
const PADDING = 10;
const LINE_HEIGHT = 16;
/** Lines in a box: kind, name, detail. */
const LINES = 3;
/** Average glyph widths (px) of the 13 px node text and the 12 px label text, generous for wide fonts. */
const NODE_CHAR = 7.6;
const LABEL_CHAR = 7;
/** Room between a label and the next column, where the edge bends. */
const BEND = 36;

export interface BoxLayout {
  readonly id: string;
  readonly kind: ChainKind;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  /** The name and detail lines as drawn (cut to fit). */
  readonly nameText: string;
  readonly detailText: string;
}

export interface EdgeLayout {
  readonly from: string;
  readonly to: string;
  readonly kind: ChainEdgeKind;
  /** The SVG path: a straight run from the source port under the label, then a curve to the target. */
  readonly path: string;
  /** Where the label starts (text-anchor start, baseline y) and the label as drawn (cut to fit). */
  readonly labelX: number;
  readonly labelY: number;
  readonly labelText: string;
  /** The label's estimated box, for overlap checks. */
  readonly labelBox: Rect;
}

export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface ChainLayout {
  readonly width: number;
  readonly height: number;
  readonly boxes: readonly BoxLayout[];
  readonly edges: readonly EdgeLayout[];
}

/** `text` cut to `max` characters, the last one an ellipsis when cut. */
export function fit(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, Math.max(0, max - 1)).join("")}…`;
}

/** Whether two rectangles share any interior point. */
export function overlaps(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

const NODE_CHARS = Math.floor((NODE_WIDTH - 2 * PADDING) / NODE_CHAR);
const LABEL_CHARS = Math.floor((MAX_COLUMN_GAP - 16 - BEND) / LABEL_CHAR);
const labelWidth = (text: string) => Math.ceil([...text].length * LABEL_CHAR);

/** A curve from (xa, ya) to (xb, yb), xa < xb, leaving and arriving horizontally: it stays between xa and xb. */
const bend = (xa: number, ya: number, xb: number, yb: number) => {
  const mid = Math.round((xa + xb) / 2);
  return `C${mid} ${ya} ${mid} ${yb} ${xb} ${yb}`;
};

/** A column's entry: a node's box, or the slot an edge passes through when it skips the column. */
interface Item {
  readonly id: string;
  readonly height: number;
  /** Position in the column: the node's index in the graph, or the skipping edge's target's. */
  readonly rank: number;
}

export function layoutChain(graph: ChainGraph): ChainLayout {
  const outgoing = new Map<string, number>();
  for (const e of graph.edges) outgoing.set(e.from, (outgoing.get(e.from) ?? 0) + 1);
  const kinds = CHAIN_COLUMNS.filter((kind) => graph.nodes.some((n) => n.kind === kind));
  const nodeIndex = new Map(graph.nodes.map((n, i) => [n.id, i]));
  const columnOf = new Map(graph.nodes.map((n) => [n.id, kinds.indexOf(n.kind)]));
  const items: Item[][] = kinds.map((kind) => graph.nodes.filter((n) => n.kind === kind).map((n) => ({
    id: n.id, rank: nodeIndex.get(n.id)!,
    height: Math.max(2 * PADDING + LINES * LINE_HEIGHT, PADDING + (outgoing.get(n.id) ?? 0) * PORT_GAP),
  })));
  // An edge skipping columns gets a slot in each of them, so that it passes between boxes, never over one.
  graph.edges.forEach((e, k) => {
    const a = columnOf.get(e.from);
    const b = columnOf.get(e.to);
    if (a === undefined || b === undefined) return;
    for (let c = a + 1; c < b; c++) items[c]!.push({ id: `edge:${k}:${c}`, height: PORT_GAP, rank: nodeIndex.get(e.to)! });
  });
  for (const column of items) column.sort((x, y) => x.rank - y.rank);
  const columnHeight = (c: readonly Item[]) => c.reduce((sum, n) => sum + n.height, 0) + (c.length - 1) * ROW_GAP;
  const inner = Math.max(0, ...items.map(columnHeight));
  // Each gap fits the labels (drawn from 8 px after the source, then 8 px and a bend before the next column).
  const gaps = kinds.map((_, i) => {
    const widest = Math.max(0, ...graph.edges.filter((e) => columnOf.get(e.from) === i).map((e) => labelWidth(fit(e.label, LABEL_CHARS))));
    return Math.min(MAX_COLUMN_GAP, Math.max(MIN_COLUMN_GAP, 16 + widest + BEND));
  });
  const columnX: number[] = [];
  kinds.forEach((_, i) => columnX.push(i === 0 ? MARGIN : columnX[i - 1]! + NODE_WIDTH + gaps[i - 1]!));
  const placed = new Map<string, Rect>();
  items.forEach((column, i) => {
    const x = columnX[i]!;
    let y = MARGIN + Math.floor((inner - columnHeight(column)) / 2);
    for (const item of column) {
      placed.set(item.id, { x, y, width: NODE_WIDTH, height: item.height });
      y += item.height + ROW_GAP;
    }
  });
  const boxes: BoxLayout[] = graph.nodes.map((n) => ({ id: n.id, kind: n.kind, ...placed.get(n.id)!, nameText: fit(n.name, NODE_CHARS), detailText: fit(n.detail, NODE_CHARS) }));
  const used = new Map<string, number>();
  const edges: EdgeLayout[] = [];
  graph.edges.forEach((e, k) => {
    const a = placed.get(e.from);
    const b = placed.get(e.to);
    if (!a || !b) return;
    const port = used.get(e.from) ?? 0;
    used.set(e.from, port + 1);
    const count = outgoing.get(e.from) ?? 1;
    // Ports are spread evenly down the right side, PORT_GAP apart, centred.
    const x1 = a.x + a.width;
    const y1 = a.y + Math.round(a.height / 2 + (port - (count - 1) / 2) * PORT_GAP);
    const x2 = b.x;
    const y2 = b.y + Math.round(b.height / 2);
    const labelText = fit(e.label, LABEL_CHARS);
    const width = labelWidth(labelText);
    const run = Math.min(x1 + 8 + width + 8, x1 + gaps[columnOf.get(e.from)!]! - BEND);
    let path = `M${x1} ${y1}H${run}`;
    let at = { x: run, y: y1 };
    for (let c = columnOf.get(e.from)! + 1; c < columnOf.get(e.to)!; c++) {
      const slot = placed.get(`edge:${k}:${c}`)!;
      const y = slot.y + Math.round(slot.height / 2);
      path += `${bend(at.x, at.y, slot.x, y)}H${slot.x + slot.width}`;
      at = { x: slot.x + slot.width, y };
    }
    path += bend(at.x, at.y, x2, y2);
    edges.push({
      from: e.from, to: e.to, kind: e.kind, path,
      labelX: x1 + 8, labelY: y1 - 5, labelText,
      labelBox: { x: x1 + 8, y: y1 - 17, width, height: 14 },
    });
  });
  const width = kinds.length === 0 ? 2 * MARGIN : columnX[kinds.length - 1]! + NODE_WIDTH + MARGIN;
  return { width, height: inner + 2 * MARGIN, boxes, edges };
}
