/**
 * What the local agent needs from outside: probes for HTTP, TCP and gRPC checks, a process spawner
 * for script checks, the Docker Engine API for Docker checks, blocking catalog reads for alias checks
 * of other nodes, and the catalog it keeps in sync. src/main provides them (src/platform has the
 * production implementations); tests pass fakes.
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

/** One run of a script check's command (no shell: args[0] is looked up in PATH). */
export interface ProcessSpec {
  readonly args: readonly string[];
  /** Only the last this-many bytes of output (stdout and stderr interleaved) are kept. */
  readonly maxOutputBytes: number;
}

/** How a process ended. */
export interface ProcessOutcome {
  /** The exit code; null when a signal ended it. */
  readonly code: number | null;
  /** The last `maxOutputBytes` of its output. */
  readonly output: string;
  /** Bytes it wrote in all. */
  readonly totalBytes: number;
}

/** A started process. */
export interface RunningProcess {
  /** Resolves when it has exited; rejects with Go's wording when it could not start ("exec: \"x\": executable file not found in $PATH"). */
  readonly done: Promise<ProcessOutcome>;
  /** Kills it and every process in its group (Consul's KillCommandSubtree). Idempotent; no-op once exited. */
  kill(): void;
}

/** Starts a process in a process group of its own (Consul's exec.SetSysProcAttr). */
export type ProcessSpawner = (spec: ProcessSpec) => RunningProcess;

/** One gRPC health probe (grpc.health.v1.Health/Check). */
export interface GrpcHealthRequest {
  /** "host:port". */
  readonly target: string;
  /** HealthCheckRequest.service; "" asks about the server as a whole. */
  readonly service: string;
  readonly useTls: boolean;
  readonly tlsSkipVerify: boolean;
  readonly timeoutMs: number;
}

/**
 * Calls Health/Check and resolves with the response's status enum (0 UNKNOWN, 1 SERVING, 2 NOT_SERVING,
 * 3 SERVICE_UNKNOWN). Rejects with grpc-go's wording: "rpc error: code = Unavailable desc = ...",
 * "rpc error: code = DeadlineExceeded desc = context deadline exceeded" after `timeoutMs`.
 */
export type GrpcProbe = (req: GrpcHealthRequest) => Promise<number>;

/** A Docker Engine API answer: status code and the last `maxBytes` of the body. */
export interface DockerResponse {
  readonly status: number;
  readonly body: string;
  readonly totalBytes: number;
}

/** The Docker Engine API as Docker checks use it (Consul's DockerClient, over DOCKER_HOST or /var/run/docker.sock). */
export interface DockerEngine {
  /** Why Docker checks cannot run here (no socket), or undefined when they can. Asked at each registration. */
  unavailable(): string | undefined;
  /** One API call with an optional JSON body; rejects with the transport error. */
  call(method: "GET" | "POST", path: string, body: unknown, maxBytes: number): Promise<DockerResponse>;
}

/** A node's checks as a blocking catalog read answers them (Consul's Health.NodeChecks). */
export interface NodeChecksResult {
  readonly index: number;
  readonly checks: readonly HealthCheck[];
}

/**
 * A blocking, stale-allowed read of a node's checks: answers once the catalog's index passes `minIndex`
 * or after about `maxWaitMs`. Rejects when no server answers.
 */
export type NodeChecksWatch = (node: string, minIndex: number, maxWaitMs: number) => Promise<NodeChecksResult>;

/**
 * The outside world a check runner may use. HTTP and TCP are always there; a check kind whose port is
 * absent is refused at registration with a clear message.
 */
export interface Probes {
  readonly http: HttpProbe;
  readonly tcp: TcpProbe;
  readonly grpc?: GrpcProbe;
  readonly process?: ProcessSpawner;
  readonly docker?: DockerEngine;
  /** Alias checks of another node (AliasNode). */
  readonly nodeChecks?: NodeChecksWatch;
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
  /**
   * Writes with `token`: a service's or check's registration token ("" for the agent's default token),
   * or, when undefined, the agent's own token (node info), as Consul's anti-entropy chooses them.
   */
  register(req: RegisterRequest, token?: string): Promise<void>;
  deregister(req: DeregisterRequest, token?: string): Promise<void>;
}
