/**
 * The replicated state store (Consul's memdb state store and FSM for catalog, health, KV, sessions,
 * config entries, intentions, the Connect CA, prepared queries, coordinates and federation states).
 *
 * Writes: build a StateCommand, check `lockDelayRejection` (leader side), `encodeCommand` and propose it;
 * the Raft driver applies it through `createStateMachine(store)` and hands back a StateResult.
 * Reads: call a query with a fresh WatchSet, or wrap it in `blockingQuery` for `?index=` requests.
 */
export type { AclAuthMethodWrite, AclBindingRuleWrite, AclPolicyWrite, AclRoleWrite, AclTokenWrite, PreparedQueryWrite, RestoreStageCommand, SessionCreate, StateCommand, StateCommandType, StateResult } from "./commands.ts";
export type { StagedRestoreInfo } from "./restore_staging.ts";
export { StateCommandError } from "./commands.ts";
export { decodeCommand, encodeCommand } from "./codec.ts";
export { createStateStore, StateStore, type ConfigEntryChange, type StateStoreOptions } from "./store.ts";
export { createStateMachine, type ReplicatedStateMachine } from "./state_machine.ts";
export { acquiresLock, lockDelayRejection, type LockDelaySource } from "./lock_delay.ts";
export { createTombstoneGc, type TombstoneGc, type TombstoneGcOptions } from "./tombstone_gc.ts";
export {
  blockingQuery,
  waitFor,
  WatchSet,
  type BlockingQueryOptions,
  type QueryResult,
  type WaitOptions,
  type WaitOutcome,
} from "./watch.ts";
export {
  catalogNode,
  catalogNodes,
  catalogNodeServices,
  catalogServiceNodes,
  catalogServiceNodesByAddress,
  catalogServices,
  type NodeMetaFilter,
  type ServiceNodesOptions,
} from "./queries_catalog.ts";
export {
  healthChecksInState,
  healthNodeChecks,
  healthServiceChecks,
  healthServiceNodes,
  healthServicesOfKind,
  uiNodes,
  uiServiceSummaries,
  type HealthServiceOptions,
} from "./queries_health.ts";
export { kvGet, kvKeys, kvList, kvReadTxn, sessionGet, sessionList, sessionsForNode } from "./queries_kv.ts";
export { caRoots, configEntryGet, configEntryList, intentionGet, intentionList } from "./queries_connect.ts";
export { stateUsage, type StateUsage } from "./queries_usage.ts";
export {
  aclAuthMethodGet, aclAuthMethodList, aclBindingRuleGet, aclBindingRuleList, aclBootstrapState, aclPolicyGet, aclPolicyGetByName, aclPolicyList, aclRoleGet,
  aclRoleGetByName, aclRoleList, aclTokenGetByAccessor, aclTokenGetBySecret, aclTokenList, withLinkNames, type AclTokenFilter,
} from "./queries_acl.ts";
export { ACL_AUTH_READ_TYPES, isAclAuthRead, runAclAuthRead, type AclAuthQuery } from "./queries_acl_auth.ts";
export { autopilotConfigGet, preparedQueryGet, preparedQueryList, preparedQueryResolve, type PreparedQueryResolution } from "./queries_prepared.ts";
export { ERR_MISSING_QUERY_ID, isUuid } from "./prepared_query_write.ts";
export { coordinateList, coordinateNode } from "./queries_coordinate.ts";
export { federationStateGet, federationStateList } from "./queries_federation.ts";
export { SNAPSHOT_FORMAT_VERSION, writeSnapshotArchive, writeSnapshotArchiveAsync } from "./snapshot_archive.ts";
export {
  MAX_SNAPSHOT_STATE_BYTES, readSnapshotArchive, readSnapshotArchiveStreaming, SnapshotArchiveError, type ReadLimits,
} from "./snapshot_archive_read.ts";
export { checkSnapshot, InvalidSnapshotError, type SnapshotCheckOptions } from "./snapshot_check.ts";
export type { SnapshotMeta } from "./snapshot_archive.ts";
