/**
 * Agent-specific types: registrations as the agent endpoints and config files decode them, and the
 * shapes `/v1/agent/services` and `/v1/agent/checks` answer with (Consul's api.AgentService and
 * structs.HealthCheck). Catalog types live in src/model.
 */
import type {
  ConnectProxyConfig,
  HealthCheckDefinition,
  HealthStatus,
  ServiceAddress,
  ServiceKind,
  Weights,
} from "../model/index.ts";

/**
 * How a check is run (Consul's structs.CheckType), decoded and validated. Durations are milliseconds;
 * 0 means unset. The kind follows Consul's CheckType.Type(): gRPC, HTTP, TTL, TCP, alias, Docker
 * (ScriptArgs + DockerContainerID), script (ScriptArgs). The optional fields are absent in records
 * persisted before they existed.
 */
export interface CheckType {
  /** "" lets the agent choose ("service:<id>", or the name for a node check). */
  readonly CheckID: string;
  readonly Name: string;
  /** Initial status; "" means the default (critical). */
  readonly Status: HealthStatus | "";
  readonly Notes: string;
  readonly HTTP: string;
  readonly Header: Readonly<Record<string, readonly string[]>> | undefined;
  readonly Method: string;
  readonly Body: string;
  readonly TLSSkipVerify: boolean;
  readonly TCP: string;
  readonly IntervalMs: number;
  readonly TimeoutMs: number;
  readonly TTLMs: number;
  readonly DeregisterCriticalServiceAfterMs: number;
  /** Consecutive passing results needed before the check reports passing (0 or 1: at once). */
  readonly SuccessBeforePassing: number;
  /** Consecutive failing results needed before the check reports critical (0 or 1: at once). */
  readonly FailuresBeforeCritical: number;
  /** Bytes of output kept; 0 means the agent's default (4 KiB). */
  readonly OutputMaxSize: number;
  /** A script check's command and arguments (`Args`/`ScriptArgs`); run without a shell. */
  readonly ScriptArgs?: readonly string[];
  /** With ScriptArgs: run them inside this Docker container (Docker Engine exec API). */
  readonly DockerContainerID?: string;
  /** A Docker check's shell (Consul keeps it; ScriptArgs are run as given). */
  readonly Shell?: string;
  /** A gRPC check's target: "host:port" or "host:port/service". */
  readonly GRPC?: string;
  /** Dial the gRPC target over TLS (TLSSkipVerify honoured). */
  readonly GRPCUseTLS?: boolean;
  /** Alias check: mirror this node's health (with AliasService: that service on that node), read from the catalog. */
  readonly AliasNode?: string;
  /** Alias check: mirror this service's health (on this agent unless AliasNode is set). */
  readonly AliasService?: string;
}

/** A check registration (`PUT /v1/agent/check/register`, a `checks` block of a config file). */
export interface CheckRegistration extends CheckType {
  /** "" for a node-level check. */
  readonly ServiceID: string;
}

/** A service registration (`PUT /v1/agent/service/register`, a `services` block of a config file), decoded and validated. */
export interface ServiceRegistration {
  readonly Kind: ServiceKind;
  /** "" defaults to Name. */
  readonly ID: string;
  readonly Name: string;
  readonly Tags: readonly string[] | null;
  readonly Address: string;
  readonly TaggedAddresses: Readonly<Record<string, ServiceAddress>> | undefined;
  readonly Meta: Readonly<Record<string, string>> | null;
  readonly Port: number;
  /** undefined means Consul's default {Passing: 1, Warning: 1}. */
  readonly Weights: Weights | undefined;
  readonly EnableTagOverride: boolean;
  readonly Proxy: ConnectProxyConfig | undefined;
  readonly Connect: { readonly Native: boolean; readonly SidecarService?: ServiceRegistration } | undefined;
  /** `Check` and `Checks` of the request, in that order. */
  readonly Checks: readonly CheckType[];
}

/** One service as `GET /v1/agent/services` returns it (Consul's api.AgentService, 1.8). */
export interface AgentService {
  readonly Kind?: ServiceKind;
  readonly ID: string;
  readonly Service: string;
  readonly Tags: readonly string[];
  readonly Meta: Readonly<Record<string, string>>;
  readonly Port: number;
  readonly Address: string;
  readonly TaggedAddresses?: Readonly<Record<string, ServiceAddress>>;
  readonly Weights: Weights;
  readonly EnableTagOverride: boolean;
  /** Set by `GET /v1/agent/service/:id` (hash-based blocking); absent in the list. */
  readonly ContentHash?: string;
  /** Present for connect proxies and gateways. */
  readonly Proxy?: ConnectProxyConfig;
  /** Present when the service is Connect-native. */
  readonly Connect?: { readonly Native: boolean };
}

/** One check as `GET /v1/agent/checks` returns it (structs.HealthCheck, ServiceTags never null). */
export interface AgentCheck {
  readonly Node: string;
  readonly CheckID: string;
  readonly Name: string;
  readonly Status: HealthStatus;
  readonly Notes: string;
  readonly Output: string;
  readonly ServiceID: string;
  readonly ServiceName: string;
  readonly ServiceTags: readonly string[];
  readonly Type: string;
  readonly Definition: HealthCheckDefinition;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** The node-level facts anti-entropy keeps in the catalog. */
export interface NodeInfo {
  readonly nodeId: string;
  readonly address: string;
  readonly taggedAddresses: Readonly<Record<string, string>>;
  readonly meta: Readonly<Record<string, string>>;
}
