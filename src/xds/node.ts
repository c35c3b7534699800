/**
 * Which proxy an ADS stream belongs to. The first request of a stream carries the Envoy `Node`
 * (xDS protocol document: "Only the first request on a stream is guaranteed to carry the node
 * identifier"); `node.id` is the proxy's service ID, as `consul connect envoy` writes it into the
 * bootstrap, and `node.cluster` (the service name) is the fallback when the ID is empty or unknown.
 *
 * The resolver maps the node to the xDS cache key the stream follows. The key is the node ID, except
 * for a proxyless gRPC client whose node ID is a sidecar's proxy ID: the sidecar's key holds Envoy's
 * resources, so the client follows the sidecar's proxyless view under another key (the caller's
 * choice; src/proxycfg/proxyless_manager.ts PROXYLESS_VIEW_PREFIX). Who is Envoy is told by
 * `node.user_agent_name` (Envoy's API, config/core/v3/base.proto: "Free-form string that identifies
 * the entity requesting config. E.g. "envoy" or "grpc""); Envoy before 1.14 leaves it empty.
 */

/** The parts of an Envoy `Node` that identify it. */
export interface NodeIdentity {
  readonly id: string;
  readonly cluster: string;
  /**
   * `node.user_agent_name`: "envoy" for Envoy, "" for Envoy before 1.14 (it sent only `build_version`),
   * "gRPC Go", "gRPC Java", "gRPC Node Pure JS"... for proxyless gRPC clients, "causeway-gateway" for
   * Causeway's own gateway data plane (src/gateway/xds_client.ts).
   */
  readonly userAgentName: string;
}

/**
 * The result of resolving a node: the xDS cache key the stream follows (`nodeId`, which need not equal
 * `node.id`), or why the stream is refused.
 */
export type NodeResolution =
  | { readonly ok: true; readonly nodeId: string }
  | { readonly ok: false; readonly code: "not_found" | "invalid_argument"; readonly message: string };

/** Maps a stream's node to the cache's key. May be async (e.g. a lookup in the agent). */
export type ResolveNode = (node: NodeIdentity | undefined) => NodeResolution | Promise<NodeResolution>;

/** `node.user_agent_name` of Causeway's gateway data plane (src/gateway/xds_client.ts USER_AGENT_NAME). */
export const CAUSEWAY_GATEWAY_USER_AGENT = "causeway-gateway";

/** Whether the node is Envoy: user agent "envoy", or none (Envoy before 1.14). */
export function isEnvoy(node: NodeIdentity): boolean {
  return node.userAgentName === "" || node.userAgentName === "envoy";
}

/**
 * What a node ID names, for {@link resolveByProxyId}:
 * - `true` or `proxyless`: served under the ID itself, whatever the client (a proxyless client's service
 *   ID or identity; any ID of a plain cache);
 * - `connect-proxy`: Envoy is served under the ID; any other client under `proxylessKey`, the key of the
 *   proxy's proxyless view (undefined: the view is unavailable, and such a client is refused);
 * - `mesh-gateway`: Envoy and the causeway gateway only; any other client is refused;
 * - `false` or undefined: not known here.
 */
export type NodeTarget =
  | { readonly kind: "proxyless" }
  | { readonly kind: "connect-proxy"; readonly proxylessKey: string | undefined }
  | { readonly kind: "mesh-gateway" };

/**
 * A resolver over the IDs `lookup` knows: `node.id` if known, else `node.cluster` if known; the known
 * one is then served as its {@link NodeTarget} says for the node's user agent. No node, or neither field
 * set: INVALID_ARGUMENT. Neither known: NOT_FOUND, with a message naming what the proxy sent so an
 * operator can find the bootstrap that is wrong; a client a proxy's kind does not serve: NOT_FOUND saying
 * why. Messages avoid the characters that reach grpc-js clients percent-encoded (see TOO_MANY_STREAMS in
 * ./service.ts).
 */
export function resolveByProxyId(lookup: (id: string) => NodeTarget | boolean | undefined): (node: NodeIdentity | undefined) => NodeResolution {
  return (node) => {
    const id = node?.id ?? "";
    const cluster = node?.cluster ?? "";
    if (!node || (id === "" && cluster === "")) {
      return { ok: false, code: "invalid_argument", message: "xDS request has no node - node.id (the proxy service ID) is required" };
    }
    for (const candidate of [id, cluster]) {
      const target = candidate === "" ? undefined : lookup(candidate);
      if (target) return serve(node, candidate, target);
    }
    return { ok: false, code: "not_found", message: `unknown proxy ${describeNode(node)} - no proxy service with this ID is registered with this agent` };
  };
}

/** The key `id` is served under for `node`'s client, or the refusal. */
function serve(node: NodeIdentity, id: string, target: NodeTarget | true): NodeResolution {
  if (target === true || target.kind === "proxyless" || isEnvoy(node)) return { ok: true, nodeId: id };
  const agent = JSON.stringify(node.userAgentName);
  if (target.kind === "mesh-gateway") {
    if (node.userAgentName === CAUSEWAY_GATEWAY_USER_AGENT) return { ok: true, nodeId: id };
    return {
      ok: false,
      code: "not_found",
      message: `${describeNode(node)} is a mesh gateway - its configuration is served to Envoy and the causeway gateway only` +
        ` and not to user agent ${agent} - a proxyless gRPC client names a service ID or a sidecar proxy ID`,
    };
  }
  if (target.proxylessKey !== undefined) return { ok: true, nodeId: target.proxylessKey };
  return {
    ok: false,
    code: "not_found",
    message: `connect proxy ${describeNode(node)} has no proxyless view for user agent ${agent}` +
      ` - the key it would be kept under is the ID of another service or client identity`,
  };
}

/** `"<id>" (node.cluster "<cluster>")`, for logs and errors. */
export function describeNode(node: Pick<NodeIdentity, "id" | "cluster">): string {
  return `${JSON.stringify(node.id)} (node.cluster ${JSON.stringify(node.cluster)})`;
}
