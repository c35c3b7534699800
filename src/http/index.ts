export { createHttpApi } from "./app.ts";
export { agentSelfBody } from "./agent.ts";
export type { AgentInfo, AutopilotHealthApi, CatalogApi, CoordinateApi, HttpApiDeps, MemberStatus, MembershipApi, MemberView, RaftStatus, StateAccess } from "./deps.ts";
export type { ReadKind, ReadQuery, Reads, ReadValue } from "../model/index.ts";
export type { Consistency, QueryMeta, ReadOptions } from "./query_options.ts";
export type { EventsApi, KeyringApi, KeyringPoolResult, MetricsApi, MonitorApi } from "./deps.ts";
export type { UserEventView } from "../model/index.ts";
export { BODY_LIMITS, MAX_REQUEST_BODY_BYTES } from "./body.ts";
