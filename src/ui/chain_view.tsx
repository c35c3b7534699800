/** @jsxImportSource hono/jsx */
/**
 * The discovery chain drawn (an inline SVG, role="group" named by a visible caption) and told (a table
 * of its nodes and one of its edges with the same content). Each node is an SVG link to the page's
 * `?node=<id>#chain-entry` (focusable with Tab, followed with Enter, no script needed) named in words;
 * failover edges are dashed and labelled "failover N", so text, not colour, says which they are.
 * Pure: graph in, JSX out.
 */
import type { ChainGraph, ChainGraphNode, ChainKind } from "./chain_graph.ts";
import { layoutChain } from "./chain_layout.ts";

const KIND_TITLE: Record<ChainKind, string> = { router: "Router", splitter: "Splitter", resolver: "Resolver", target: "Target" };
const EDGE_KIND: Record<string, string> = { route: "route", split: "split", primary: "primary target", failover: "failover target" };

export interface ChainViewProps {
  readonly graph: ChainGraph;
  /** The caption's words, e.g. "Discovery chain of web in dc1". */
  readonly caption: string;
  /** The URL showing node `id` (the page with ?node=<id>#chain-entry). */
  readonly nodeHref: (id: string) => string;
  /** The id of the node whose config the page shows, if any. */
  readonly selected?: string | undefined;
}

/** A node's name as the tables show it: "resolver v1.web.default.dc1". */
export function nodeTitle(n: ChainGraphNode): string {
  return `${n.kind} ${n.name}`;
}

export function ChainSvg(props: ChainViewProps) {
  const { graph, nodeHref, selected } = props;
  const layout = layoutChain(graph);
  const nodeById = new Map(graph.nodes.map((n) => [n.id, n]));
  return (
    <svg class="chain-graph" role="group" aria-labelledby="chain-caption" xmlns="http://www.w3.org/2000/svg"
      width={String(layout.width)} height={String(layout.height)} viewBox={`0 0 ${layout.width} ${layout.height}`}>
      <defs>
        <marker id="chain-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto">
          <path d="M0 0L10 5L0 10z" class="chain-arrowhead" />
        </marker>
      </defs>
      <g class="chain-edges" aria-hidden="true">
        {layout.edges.map((e) => (
          <g class={`chain-edge chain-edge-${e.kind}`} data-edge-from={e.from} data-edge-to={e.to} data-edge-kind={e.kind}>
            <path d={e.path} marker-end="url(#chain-arrow)" stroke-dasharray={e.kind === "failover" ? "7 5" : undefined} />
            <text x={String(e.labelX)} y={String(e.labelY)}>{e.labelText}</text>
          </g>
        ))}
      </g>
      {layout.boxes.map((b) => {
        const n = nodeById.get(b.id)!;
        const attr = n.kind === "target" ? { "data-target-id": n.name } : { "data-node-id": n.id };
        return (
          <g class={`chain-node chain-${n.kind}${b.id === selected ? " chain-selected" : ""}`} {...attr}>
            <a href={nodeHref(n.id)} aria-label={n.description} aria-current={b.id === selected ? "true" : undefined}>
              <rect x={String(b.x)} y={String(b.y)} width={String(b.width)} height={String(b.height)} rx="6" />
              <text x={String(b.x + 10)} y={String(b.y + 22)} class="chain-kind">{KIND_TITLE[n.kind]}</text>
              <text x={String(b.x + 10)} y={String(b.y + 40)} class="chain-name">{b.nameText}</text>
              <text x={String(b.x + 10)} y={String(b.y + 57)} class="chain-detail">{b.detailText}</text>
            </a>
          </g>
        );
      })}
    </svg>
  );
}

/** The same chain as two tables: its nodes (each a link to its config) and its edges. */
export function ChainTables(props: ChainViewProps) {
  const { graph, nodeHref, caption } = props;
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const title = (id: string) => (byId.get(id) ? nodeTitle(byId.get(id)!) : id);
  return (
    <>
      <table id="chain-nodes">
        <caption>{`${caption}: ${graph.nodes.length} nodes`}</caption>
        <thead><tr><th scope="col">Node</th><th scope="col">Kind</th><th scope="col">Details</th></tr></thead>
        <tbody>
          {graph.nodes.map((n) => (
            <tr data-row-node={n.id}>
              <th scope="row"><a href={nodeHref(n.id)}>{n.name}</a></th>
              <td>{n.kind}</td>
              <td>{n.description}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table id="chain-edges">
        <caption>{`${caption}: ${graph.edges.length} edges`}</caption>
        <thead><tr><th scope="col">From</th><th scope="col">To</th><th scope="col">Label</th><th scope="col">Kind</th></tr></thead>
        <tbody>
          {graph.edges.map((e) => (
            <tr data-row-from={e.from} data-row-to={e.to}>
              <td>{title(e.from)}</td>
              <td>{title(e.to)}</td>
              <td>{e.label}</td>
              <td>{EDGE_KIND[e.kind]}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The figure (caption, graph) followed by the tables. */
export function ChainView(props: ChainViewProps) {
  return (
    <>
      <figure class="chain">
        <figcaption id="chain-caption">{`${props.caption}, left to right: routers, splitters, resolvers, targets. Dashed lines lead to failover targets. The tables below list the same nodes and edges.`}</figcaption>
        <div class="chain-scroll"><ChainSvg {...props} /></div>
      </figure>
      <ChainTables {...props} />
    </>
  );
}

/** The graph's CSS: theme colours through the shared variables, so both themes keep their contrast. */
export const CHAIN_CSS = `figure.chain{margin:0 0 1em}figure.chain figcaption{color:var(--muted);margin-bottom:.4em}
.chain-scroll{overflow-x:auto}.chain-graph{display:block;color:var(--fg);font-size:12px}
.chain-graph rect{fill:var(--head);stroke:var(--muted);stroke-width:1.5px}
.chain-graph .chain-kind{font-weight:700;font-size:12px;fill:var(--muted)}.chain-graph .chain-name{font-size:13px;fill:var(--fg)}.chain-graph .chain-detail{font-size:12px;fill:var(--fg)}
.chain-graph a{cursor:pointer}.chain-graph a:focus{outline:none}.chain-graph a:focus-visible rect,.chain-graph a:hover rect{stroke:var(--accent);stroke-width:3px}
.chain-graph .chain-selected rect{stroke:var(--accent);stroke-width:3px}
.chain-edge path{fill:none;stroke:var(--muted);stroke-width:1.5px}.chain-edge-failover path{stroke:var(--warn)}
.chain-edge text{fill:var(--fg);paint-order:stroke;stroke:var(--bg);stroke-width:3px;stroke-linejoin:round}
.chain-arrowhead{fill:var(--muted)}
#chain-nodes,#chain-edges{margin-bottom:1em}`;
