/** @jsxImportSource hono/jsx */
/**
 * The routing page's "selected node" section (#chain-entry): the chain node's (or target's) fields as
 * formatted JSON, then the config entry behind it (service-router, service-splitter or
 * service-resolver of the node's service) when one exists, else why there is none, in words. Pure.
 */
import type { CompiledDiscoveryChain } from "../connect/index.ts";
import type { ChainGraphNode } from "./chain_graph.ts";
import { nodeTitle } from "./chain_view.tsx";

/** The config entry a node is configured by: its kind and name. */
export interface EntryRef {
  readonly kind: "service-router" | "service-splitter" | "service-resolver";
  readonly name: string;
}

/** What reading the config entry gave: the entry, none (404), or a failure in words. */
export type EntryRead =
  | { readonly state: "found"; readonly entry: unknown }
  | { readonly state: "absent" }
  | { readonly state: "failed"; readonly status: number; readonly message: string };

/** The config entry behind `node` of `chain`: a router's or splitter's own, the resolver of a resolver's or target's service. */
export function entryRefOf(chain: CompiledDiscoveryChain, node: ChainGraphNode): EntryRef | undefined {
  if (node.kind === "router") return { kind: "service-router", name: node.name };
  if (node.kind === "splitter") return { kind: "service-splitter", name: node.name };
  const targetId = node.kind === "target" ? node.name : chain.Nodes[node.id]?.Resolver?.Target;
  const service = targetId === undefined ? undefined : chain.Targets[targetId]?.Service;
  return service === undefined ? undefined : { kind: "service-resolver", name: service };
}

/** The chain's own data for `node`: the chain node, or the target. */
export function chainDataOf(chain: CompiledDiscoveryChain, node: ChainGraphNode): unknown {
  return node.kind === "target" ? chain.Targets[node.name] : chain.Nodes[node.id];
}

export function ChainEntry(props: { readonly chain: CompiledDiscoveryChain; readonly node: ChainGraphNode; readonly ref?: EntryRef | undefined; readonly read?: EntryRead | undefined }) {
  const { chain, node, ref, read } = props;
  return (
    <section id="chain-entry" aria-labelledby="chain-entry-title" class="chain-entry">
      <h2 id="chain-entry-title">{nodeTitle(node)}</h2>
      <p>{node.description}</p>
      <h3>{node.kind === "target" ? "Target in the chain" : "Node in the chain"}</h3>
      <pre class="chain-json" data-json="chain">{JSON.stringify(chainDataOf(chain, node), null, 2)}</pre>
      {ref ? <h3>{`Config entry ${ref.kind} ${ref.name}`}</h3> : null}
      {ref && read?.state === "found" ? <pre class="chain-json" data-json="entry">{JSON.stringify(read.entry, null, 2)}</pre> : null}
      {ref && read?.state === "absent" ? <p id="chain-entry-absent">{`There is no ${ref.kind} config entry for ${ref.name}: the defaults apply.`}</p> : null}
      {ref && read?.state === "failed" ? (
        <p role="alert">{read.status === 403 ? `Your token may not read the ${ref.kind} config entry for ${ref.name}.` : `The agent could not read the ${ref.kind} config entry for ${ref.name}: ${read.message}`}</p>
      ) : null}
    </section>
  );
}

/** The section when ?node= names nothing in the chain (answered 400). */
export function UnknownNode(props: { readonly id: string; readonly service: string }) {
  return (
    <section id="chain-entry" aria-labelledby="chain-entry-title" class="chain-entry">
      <h2 id="chain-entry-title">No such node</h2>
      <p role="alert">{`The node parameter ${JSON.stringify(props.id)} names no node of the discovery chain of ${props.service}. Choose a node in the graph or the table.`}</p>
    </section>
  );
}

export const CHAIN_ENTRY_CSS = `.chain-entry pre.chain-json{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--head);border:1px solid var(--line);border-radius:4px;padding:.6em;font-size:.9em}`;
