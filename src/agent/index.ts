/**
 * Public face of src/agent: the local agent's services and checks, their runners, maintenance modes
 * and anti-entropy to the catalog (Consul's agent, agent/local, agent/checks, agent/ae), plus the pure
 * decode/validate functions behind `/v1/agent/service/register`, `/v1/agent/check/register` and the
 * service/check blocks of config files; user events; and the agent's cache of server data (cache/).
 */
export { createLocalAgent } from "./agent.ts";
export type { AgentPersistence, LocalAgent, LocalAgentOptions, PersistedAgentState, PersistedCheckState, RegisterServiceOptions } from "./agent.ts";
export { aeScaleFactor, createAntiEntropy } from "./anti_entropy.ts";
export type { AntiEntropy, AntiEntropyOptions, AntiEntropyStats } from "./anti_entropy.ts";
export { MIN_CHECK_INTERVAL_MS, REMOTE_SCRIPTS_DISABLED, SCRIPTS_DISABLED } from "./check_runtime.ts";
export { DEFAULT_SIDECAR_PORTS, serviceCheckIds, sidecarId, toNodeService } from "./convert.ts";
export { AgentError, badRequest, notFound } from "./errors.ts";
export { DEFAULT_EXPOSE_PORTS } from "./exposed_checks.ts";
export type { AgentErrorKind } from "./errors.ts";
export { DEFAULT_CHECK_UPDATE_INTERVAL_MS, LocalState } from "./local_state.ts";
export type { LocalCheck, LocalService, LocalStateOptions } from "./local_state.ts";
export { NODE_MAINTENANCE_CHECK_ID, SERVICE_MAINTENANCE_PREFIX } from "./maintenance.ts";
export type { Maintenance, MaintenanceRecord } from "./maintenance.ts";
export { CHECK_BUF_SIZE, truncateOutput } from "./output.ts";
export type {
  CatalogNodeServices, CatalogPort, DockerEngine, DockerResponse, GrpcHealthRequest, GrpcProbe, HttpProbe, HttpProbeRequest,
  HttpProbeResponse, NodeChecksResult, NodeChecksWatch, ProcessOutcome, ProcessSpawner, ProcessSpec, Probes, RunningProcess, TcpProbe,
} from "./ports.ts";
export { definitionsFromConfig, parseCheckRegistration, parseServiceRegistration } from "./registration.ts";
export type { ConfigDefinitions } from "./registration.ts";
export { DEFAULT_CHECK_TIMEOUT_MS, HTTP_CHECK_USER_AGENT } from "./runners.ts";
export { DEFAULT_SCRIPT_TIMEOUT_MS } from "./runners_exec.ts";
export { GRPC_UNHEALTHY } from "./runners_grpc.ts";
export type {
  AgentCheck, AgentService, CheckRegistration, CheckType, NodeInfo, ServiceRegistration,
} from "./types.ts";
export { isValidStatus, portRangeError, validateNodeMeta } from "./validate.ts";
export type { ServicePorts } from "./validate.ts";
export { contentHash, toAgentCheck, toAgentService, toAgentServiceWithHash } from "./views.ts";
export { createMemoryCatalog } from "./memory_catalog.ts";
export type { MemoryCatalog, MemoryCatalogCall } from "./memory_catalog.ts";
export { createEventsApi } from "./user_events.ts";
export type { LocalIdentity, UserEvents } from "./user_events.ts";
export {
  activeSigningKeyId, blockingQueryType, blockingRead, caRootsType, catalogServicesType, compiledChainType, configEntriesType, configEntryType,
  createAgentCache, DATACENTERS_POLL_MS, datacentersType, federationGatewaysType, getLeaf,
  healthServicesType, intentionMatchType, LEAF_UNUSED_TTL_MS, leafCertType, meshGatewaysOverCatalog, meshGatewaysType, NO_CA_CONFIG,
  PREPARED_QUERY_POLL_MS, preparedQueryType,
} from "./cache/index.ts";
export type {
  AgentCache, AgentCacheDeps, CachedLeaf, CacheResult, CacheType, CaRoots, CaRootsRequest, CatalogServicesRequest, CompiledChainRequest,
  ConfigEntriesRequest, ConfigEntryRequest, DatacenterGateways, DatacentersRequest, FederationGatewaysRequest,
  FetchOptions, FetchResult, GetOptions, WatchOptions, HealthServicesRequest, IntentionMatchRequest, LeafRequest, LeafState, MeshGatewaysRequest,
  PreparedQueryRequest, PreparedQueryTypeDeps, StateReader, StateReadOptions, WatchHandlers,
} from "./cache/index.ts";
export { createConnectAccess } from "./connect_signing.ts";
export type { ConnectCaAccess } from "./connect_signing.ts";
export { COORDINATE_SYNC_DEFAULTS, createCoordinateSender, rateScaledIntervalMs } from "./coordinate_sender.ts";
export type { CoordinateSender, CoordinateSenderOptions } from "./coordinate_sender.ts";
