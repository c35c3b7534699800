/**
 * Which proxy an ADS stream belongs to. The first request of a stream carries the Envoy `Node`
 * (xDS protocol document: "Only the first request on a stream is guaranteed to carry the node
 * identifier"); `node.id` is the proxy's service ID, as `consul connect envoy` writes it into the
 * bootstrap, and `node.cluster` (the service name) is the fallback when the ID is empty or unknown.
 */

/** The parts of an Envoy `Node` that identify it. */
export interface NodeIdentity {
  readonly id: string;
  readonly cluster: string;
}

/** The result of resolving a node: the cache's node ID, or why the stream is refused. */
export type NodeResolution =
  | { readonly ok: true; readonly nodeId: string }
  | { readonly ok: false; readonly code: "not_found" | "invalid_argument"; readonly message: string };

/** Maps a stream's node to the cache's node ID. May be async (e.g. a lookup in the agent). */
export type ResolveNode = (node: NodeIdentity | undefined) => NodeResolution | Promise<NodeResolution>;

/**
 * A resolver over a set of known proxy IDs: `node.id` if known, else `node.cluster` if known.
 * No node, or neither field set: INVALID_ARGUMENT. Neither known: NOT_FOUND, with a message naming
 * what the proxy sent so an operator can find the bootstrap that is wrong. Messages avoid the
 * characters that reach grpc-js clients percent-encoded (see TOO_MANY_STREAMS in ./service.ts).
 */
export function resolveByProxyId(isKnown: (proxyId: string) => boolean): ResolveNode {
  return (node) => {
    const id = node?.id ?? "";
    const cluster = node?.cluster ?? "";
    if (id === "" && cluster === "") {
      return { ok: false, code: "invalid_argument", message: "xDS request has no node - node.id (the proxy service ID) is required" };
    }
    if (id !== "" && isKnown(id)) return { ok: true, nodeId: id };
    if (cluster !== "" && isKnown(cluster)) return { ok: true, nodeId: cluster };
    return { ok: false, code: "not_found", message: `unknown proxy ${describeNode(node!)} - no proxy service with this ID is registered with this agent` };
  };
}

/** `"<id>" (node.cluster "<cluster>")`, for logs and errors. */
export function describeNode(node: NodeIdentity): string {
  return `${JSON.stringify(node.id)} (node.cluster ${JSON.stringify(node.cluster)})`;
}
