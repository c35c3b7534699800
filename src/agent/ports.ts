/**
 * What the local agent needs from outside: probes for HTTP and TCP checks, and the catalog it keeps
 * in sync. src/main provides them (src/platform/probes.ts has the production probes); tests pass fakes.
 */
import type { DeregisterRequest, HealthCheck, Node, NodeService, RegisterRequest } from "../model/index.ts";
import type { HealthHttpRequest, HealthHttpResponse } from "../platform/index.ts";

/** One HTTP check request and its answer: the platform's probe types (src/platform/probes.ts). */
export type { HealthHttpRequest as HttpProbeRequest, HealthHttpResponse as HttpProbeResponse } from "../platform/index.ts";

/**
 * Performs one HTTP request, following redirects as Go's default client does (Consul 1.8 checks do):
 * resolves with the final response whatever its status; rejects with an Error whose message says why no response came (refused, TLS, timeout).
 * Must give up after `timeoutMs` (the runner also stops waiting then).
 */
export type HttpProbe = (req: HealthHttpRequest) => Promise<HealthHttpResponse>;

/**
 * Opens a TCP connection to `addr` ("host:port", IPv6 as "[::1]:80") and closes it. Resolves on
 * connect; rejects with an Error (message like Go's "dial tcp 127.0.0.1:1: connect: connection refused")
 * otherwise. Must give up after `timeoutMs`.
 */
export type TcpProbe = (addr: string, timeoutMs: number) => Promise<void>;

/** The probes a check runner may use. */
export interface Probes {
  readonly http: HttpProbe;
  readonly tcp: TcpProbe;
}

/** The catalog's view of one node (Consul's Catalog.NodeServices answer). */
export interface CatalogNodeServices {
  /** The catalog's index the answer was read at. */
  readonly index: number;
  /** The node's own record: anti-entropy compares its ID, Address, TaggedAddresses and Meta. */
  readonly node: Node;
  readonly services: readonly NodeService[];
}

/**
 * The catalog as anti-entropy uses it (Consul's Catalog.NodeServices, Health.NodeChecks,
 * Catalog.Register and Catalog.Deregister RPCs). Reads may be stale by a little.
 *
 * Errors: any rejection counts as a failed sync and is retried with back-off, except a message
 * containing "Unknown service" / "Unknown check" on deregister (already gone: success) and
 * "Permission denied" (blocked by ACLs: the entry is marked in sync until the next full sync),
 * as Consul's agent/local does.
 */
export interface CatalogPort {
  /** The node and its services; undefined when the catalog has no such node. */
  nodeServices(node: string): Promise<CatalogNodeServices | undefined>;
  /** The node's checks; [] when none or no such node. */
  nodeChecks(node: string): Promise<readonly HealthCheck[]>;
  register(req: RegisterRequest): Promise<void>;
  deregister(req: DeregisterRequest): Promise<void>;
}
