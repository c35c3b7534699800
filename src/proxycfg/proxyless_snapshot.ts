/**
 * The readonly snapshot a proxyless gRPC client's xDS resources are built from. Consul 1.8 has no
 * proxyless clients; this is Causeway's own: a gRPC application with an xDS bootstrap naming this agent
 * resolves `xds:///<name>` and gets, per upstream, the compiled discovery chain and the instances of
 * every target the chain names. The instances are the services themselves (not their sidecars): a
 * proxyless client dials the backend directly, in plaintext, so nothing here needs CA roots or a leaf.
 */
import type { CompiledDiscoveryChain } from "../connect/index.ts";
import type { CheckServiceNode } from "../model/index.ts";

/** One name the client can resolve. */
export interface ProxylessUpstream {
  /**
   * The name the client resolves (`xds:///<Name>`): the upstream identifier (`upstreamIdentifier`), which
   * for a service in the local datacenter is just the service name. Listener, route configuration and
   * virtual host carry this name.
   */
  readonly Name: string;
  readonly Chain: CompiledDiscoveryChain;
  /**
   * Target ID -> the target service's instances in its datacenter, through the target's subset filter,
   * passing or not (health is carried to the client, never filtered). A missing target is not fetched yet.
   */
  readonly TargetEndpoints: Readonly<Record<string, readonly CheckServiceNode[]>>;
}

/** A proxyless gRPC client's snapshot. */
export interface ProxylessSnapshot {
  readonly Kind: "proxyless-grpc";
  /** The client's node ID (a local service ID or a configured client identity; for a sidecar's proxyless view, the proxy ID). */
  readonly NodeID: string;
  /** The agent's datacenter: instances elsewhere are reached on their WAN addresses. */
  readonly Datacenter: string;
  /** By name; an upstream whose chain is not fetched yet is absent. */
  readonly Upstreams: Readonly<Record<string, ProxylessUpstream>>;
}
