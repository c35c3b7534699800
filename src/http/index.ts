export { createHttpApi } from "./app.ts";
export { agentSelfBody } from "./agent.ts";
export type { AgentInfo, CatalogApi, HttpApiDeps, MemberStatus, MembershipApi, MemberView, RaftStatus, StateAccess } from "./deps.ts";
export type { ReadKind, ReadQuery, Reads, ReadValue } from "./reads.ts";
export type { Consistency, QueryMeta, ReadOptions } from "./query_options.ts";
export type { KeyringApi, KeyringPoolResult } from "./keyring.ts";
export type { EventsApi, UserEventView } from "./event.ts";
