/** Consul's domain types in their wire shape, shared by the state store, the agent and the HTTP API. */
export type * from "./catalog.ts";
export { CONSUL_SERVICE, SERF_CHECK_ID, SERF_CHECK_NAME } from "./catalog.ts";
export type * from "./kv.ts";
export { MAX_KV_VALUE_BYTES } from "./kv.ts";
export type * from "./session.ts";
export { DEFAULT_LOCK_DELAY_NS, MAX_LOCK_DELAY_MS, SESSION_TTL_MAX_MS, SESSION_TTL_MIN_MS } from "./session.ts";
export type * from "./requests.ts";
export type * from "./txn.ts";
export { TXN_MAX_OPS, TXN_READ_VERBS } from "./txn.ts";
export type * from "./config_entry.ts";
export type * from "./intention.ts";
export type * from "./ca.ts";
export type * from "./reads.ts";
export type * from "./event.ts";
export { EMPTY_EVENT_LIST_INDEX, eventIndex, eventListIndex } from "./event.ts";
export type * from "./autopilot.ts";
export { AUTOPILOT_DEFAULTS } from "./autopilot.ts";
export type * from "./prepared_query.ts";
export type * from "./acl.ts";
export {
  ANONYMOUS_TOKEN_ACCESSOR_ID, ANONYMOUS_TOKEN_DESCRIPTION, ANONYMOUS_TOKEN_SECRET, GLOBAL_MANAGEMENT_POLICY_DESCRIPTION, GLOBAL_MANAGEMENT_POLICY_ID,
  GLOBAL_MANAGEMENT_POLICY_NAME, GLOBAL_MANAGEMENT_RULES,
} from "./acl.ts";
export { QUERY_NOT_FOUND, QUERY_TEMPLATE_NAME_PREFIX_MATCH } from "./prepared_query.ts";
export type * from "./coordinate.ts";
export {
  AREA_WAN, COORDINATE_DIMENSIONALITY, coordinateProblem, ERR_INCOMPATIBLE_COORDINATE, ERR_INVALID_COORDINATE, isFiniteCoordinate,
} from "./coordinate.ts";
export { canonical, sameCheck, sameList, sameMap, sameNode, sameService, sameStruct } from "./same.ts";
export type * from "./federation_state.ts";
export { isRfc3339, isSameFederationState, meshGatewaysByDatacenter, ZERO_UPDATED_AT } from "./federation_state.ts";
export { SERVER_PORT_ALPN, serverSni, WAN_GOSSIP_PACKET_ALPN, WAN_GOSSIP_STREAM_ALPN } from "./server_names.ts";
