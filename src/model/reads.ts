/**
 * The reads of the replicated state, as data: a discriminated union that travels to whichever server
 * serves the read (the local one, the leader, or one in another datacenter), where src/server runs it
 * against the state store. The HTTP API and the agent's cache ask them; `ReadValue` maps each read to
 * its result type.
 */
import type { CAConfiguration, CARoot } from "./ca.ts";
import type {
  CheckServiceNode, HealthCheck, HealthStateFilter, Node, NodeInfo, NodeServices, ServiceKind, ServiceNode, ServiceSummary, ServiceTagsMap,
} from "./catalog.ts";
import type { ConfigEntry } from "./config_entry.ts";
import type { Intention } from "./intention.ts";
import type { DirEntry } from "./kv.ts";
import type { Session } from "./session.ts";
import type { TxnError, TxnOp, TxnResult } from "./txn.ts";
import type { AutopilotConfig } from "./autopilot.ts";
import type { CoordinateEntry } from "./coordinate.ts";
import type { PreparedQuery, PreparedQueryExecuteResult, PreparedQueryOutcome, QuerySource } from "./prepared_query.ts";
import type { DatacenterMeshGateways, FederationState } from "./federation_state.ts";
import type { AclAuthMethod, AclBindingRule, AclPolicy, AclRole, AclTokenRecord } from "./acl.ts";

export type NodeMetaFilter = Readonly<Record<string, string>>;

/**
 * `near` (catalog-nodes, catalog-service-nodes, health-service-checks, health-state, health-service-nodes):
 * a node name (the asking agent resolves "_agent"); the serving server sorts the result by estimated
 * round-trip time from that node's coordinate, nodes without one last (stable), or leaves the order as
 * it is when the node has no coordinate (Consul's sortNodesByDistanceFrom).
 */
export interface Reads {
  "kv-get": { args: { key: string }; value: DirEntry | null };
  "kv-list": { args: { prefix: string }; value: readonly DirEntry[] };
  "kv-keys": { args: { prefix: string; separator: string }; value: readonly string[] };
  "catalog-nodes": { args: { nodeMeta?: NodeMetaFilter; near?: string }; value: readonly Node[] };
  "catalog-services": { args: { nodeMeta?: NodeMetaFilter }; value: ServiceTagsMap };
  "catalog-service-nodes": { args: { service: string; tags?: readonly string[]; nodeMeta?: NodeMetaFilter; connect: boolean; near?: string }; value: readonly ServiceNode[] };
  "catalog-node-services": { args: { node: string }; value: NodeServices | null };
  /** Instances of any service registered with exactly this address (DNS reverse lookups; Consul's ServiceNodes with ServiceAddress), in memdb order. */
  "catalog-service-nodes-by-address": { args: { address: string }; value: readonly ServiceNode[] };
  "health-node-checks": { args: { node: string }; value: readonly HealthCheck[] };
  "health-service-checks": { args: { service: string; nodeMeta?: NodeMetaFilter; near?: string }; value: readonly HealthCheck[] };
  "health-state": { args: { state: HealthStateFilter; nodeMeta?: NodeMetaFilter; near?: string }; value: readonly HealthCheck[] };
  "health-service-nodes": {
    args: { service: string; tags?: readonly string[]; nodeMeta?: NodeMetaFilter; passingOnly: boolean; connect: boolean; near?: string };
    value: readonly CheckServiceNode[];
  };
  /** Consul's /v1/internal/ui/services: a summary per service name (the web UI's services list). */
  "ui-services": { args: Record<never, never>; value: readonly ServiceSummary[] };
  /** Consul's /v1/internal/ui/nodes: every node with its services and checks (the web UI's nodes list). */
  "ui-nodes": { args: Record<never, never>; value: readonly NodeInfo[] };
  /** Every instance of a service kind ("mesh-gateway", ...) with its node and checks (Consul's Internal.ServiceDump by kind). */
  "health-service-kind-nodes": { args: { kind: ServiceKind }; value: readonly CheckServiceNode[] };
  "session-info": { args: { id: string }; value: readonly Session[] };
  "session-list": { args: Record<never, never>; value: readonly Session[] };
  "session-node": { args: { node: string }; value: readonly Session[] };
  /** A transaction of read-only KV operations (no Raft round): Consul's Txn.Read. */
  "txn-read": {
    args: { ops: readonly TxnOp[] };
    /** Consul's TxnReadResponse: Results (Errors null) or Errors (Results null). */
    value: { readonly Results: readonly TxnResult[] | null; readonly Errors: readonly TxnError[] | null };
  };
  /** One config entry by kind and name (null when absent). */
  "config-entry-get": { args: { kind: string; name: string }; value: ConfigEntry | null };
  /** Config entries of one kind, or of every kind when `kind` is absent; sorted by kind, then name. */
  "config-entry-list": { args: { kind?: string }; value: readonly ConfigEntry[] };
  /** Every intention, highest precedence first (Consul's IntentionList order). */
  "intention-list": { args: Record<never, never>; value: readonly Intention[] };
  "intention-get": { args: { id: string }; value: Intention | null };
  /** The CA roots without private keys, with the trust domain and the active root's ID ("" before the CA exists). */
  "ca-roots": { args: Record<never, never>; value: { readonly roots: readonly CARoot[]; readonly trustDomain: string; readonly activeRootId: string } };
  /** The CA configuration (private key redacted as Consul does), or null before the CA exists. */
  "ca-config": { args: Record<never, never>; value: CAConfiguration | null };
  /** Every prepared query, by ID (Consul's PreparedQueryList). */
  "prepared-query-list": { args: Record<never, never>; value: readonly PreparedQuery[] };
  /** One prepared query by ID (case-insensitive), or null. */
  "prepared-query-get": { args: { id: string }; value: PreparedQuery | null };
  /**
   * The query an ID or name resolves to (Consul's PreparedQueryResolve): by ID (not a template), by exact
   * name, else the template with the longest matching name prefix, rendered for the name and `agent`.
   */
  "prepared-query-explain": { args: { idOrName: string; agent: QuerySource }; value: PreparedQueryOutcome<null> };
  /**
   * Consul's Execute in the serving datacenter, without the failover: resolve, run, shuffle, sort near
   * `source` (its Node already "_agent"-resolved by the asking agent), cut to `limit`; `connect` asks for
   * Connect-capable instances. The failover is the caller's (src/connect executePreparedQuery).
   */
  "prepared-query-execute": {
    args: { idOrName: string; agent: QuerySource; source: QuerySource; limit: number; connect: boolean };
    value: PreparedQueryOutcome<PreparedQueryExecuteResult>;
  };
  /** Consul's ExecuteRemote: runs the given (already resolved) query in the serving datacenter; shuffled, cut to `limit`. */
  "prepared-query-execute-remote": { args: { query: PreparedQuery; limit: number; connect: boolean }; value: PreparedQueryExecuteResult };
  /** The autopilot configuration stored in the replicated state, or null before any was set. */
  "autopilot-config": { args: Record<never, never>; value: AutopilotConfig | null };
  /** Every node's LAN coordinates, by node name then segment (Consul's Coordinate.ListNodes). */
  "coordinate-nodes": { args: Record<never, never>; value: readonly CoordinateEntry[] };
  /** One node's LAN coordinates (node matched case-insensitively), one per segment, by segment (Coordinate.Node). */
  "coordinate-node": { args: { node: string }; value: readonly CoordinateEntry[] };
  /**
   * One datacenter's federation state (`datacenter` matched case-insensitively), or null (Consul's
   * FederationState.Get; which server answers is the read options' datacenter). Index: the
   * federation-states table.
   */
  "federation-state-get": { args: { datacenter: string }; value: FederationState | null };
  /** Every federation state, by datacenter (FederationState.List). Index: the federation-states table. */
  "federation-state-list": { args: Record<never, never>; value: readonly FederationState[] };
  /**
   * The mesh gateways of every federation state that has any, by datacenter (FederationState.ListMeshGateways).
   * Index: the federation-states table.
   */
  "federation-state-mesh-gateways": { args: Record<never, never>; value: DatacenterMeshGateways };
  /** A token by accessor, links named, or null (missing or expired). */
  "acl-token-get": { args: { accessor: string }; value: AclTokenRecord | null };
  /** A token by its secret (GET /v1/acl/token/self: holding the secret is enough), or null. */
  "acl-token-self": { args: { secret: string }; value: AclTokenRecord | null };
  /** Unexpired tokens by accessor, links named, filtered by exact policy or role ID or auth method name. */
  "acl-token-list": { args: { policy?: string; role?: string; authMethod?: string }; value: readonly AclTokenRecord[] };
  "acl-policy-get": { args: { id?: string; name?: string }; value: AclPolicy | null };
  "acl-policy-list": { args: Record<never, never>; value: readonly AclPolicy[] };
  "acl-role-get": { args: { id?: string; name?: string }; value: AclRole | null };
  "acl-role-list": { args: { policy?: string }; value: readonly AclRole[] };
  /**
   * What a token, policy or role write is checked against (src/acl's builders): every policy, role and
   * auth method, and the tokens whose accessor or secret is one of `ids`.
   */
  "acl-write-context": {
    args: { ids: readonly string[] };
    value: { readonly policies: readonly AclPolicy[]; readonly roles: readonly AclRole[]; readonly authMethods: readonly AclAuthMethod[]; readonly tokens: readonly AclTokenRecord[] };
  };
  /**
   * What an agent needs to build a token's authorizer itself (Consul's ACL.TokenRead plus
   * PolicyResolve and RoleResolve): the token by its secret, the roles it links and the policies it
   * links directly or through them; null when the secret is unknown or expired. Holding the secret is enough.
   */
  "acl-token-resolve": { args: { secret: string }; value: { readonly token: AclTokenRecord; readonly policies: readonly AclPolicy[]; readonly roles: readonly AclRole[] } | null };
  /*
   * Auth methods and binding rules (served by src/state runAclAuthRead). Their names have no `acl-`
   * prefix: the server's runAclRead serves exactly the `acl-*` reads.
   */
  /** An auth method by name (case-insensitive), or null. Index: the auth-methods table. Needs acl:read. */
  "auth-method-get": { args: { name: string }; value: AclAuthMethod | null };
  /** Every auth method, by name. Index: the auth-methods table. Needs acl:read. */
  "auth-method-list": { args: Record<never, never>; value: readonly AclAuthMethod[] };
  /** A binding rule by ID, or null. Index: the binding-rules table. Needs acl:read. */
  "binding-rule-get": { args: { id: string }; value: AclBindingRule | null };
  /** Binding rules by ID, those of `authMethod` (by name) only when given. Index: the binding-rules table. Needs acl:read. */
  "binding-rule-list": { args: { authMethod?: string }; value: readonly AclBindingRule[] };
  /** What `POST /v1/acl/login` needs of a method: its Name and Type only (never its Config), or null. Needs no ACL. */
  "auth-method-login": { args: { name: string }; value: { readonly Name: string; readonly Type: string } | null };
  /** Whether ACL bootstrap is still allowed, and the index it was used up at. */
  "acl-bootstrap-state": { args: Record<never, never>; value: { readonly allowed: boolean; readonly resetIndex: number } };
  /**
   * `/v1/acl/replication` (structs.ACLReplicationStatus) as the serving server's leader duties know it;
   * served by the state backend (not from the store), on the leader. Needs no token, as in Consul 1.8.
   */
  "acl-replication-status": {
    args: Record<never, never>;
    value: {
      readonly Enabled: boolean; readonly Running: boolean; readonly SourceDatacenter: string; readonly ReplicationType: string; readonly ReplicatedIndex: number;
      readonly ReplicatedRoleIndex: number; readonly ReplicatedTokenIndex: number; readonly LastSuccess: string; readonly LastError: string;
    };
  };
  /** The whole state as of `index` (for /v1/snapshot), with the Raft term of the serving server. */
  /** The state in parts (joined: the state store's snapshot bytes), so that no step needs one 150 MB buffer. */
  "snapshot": { args: Record<never, never>; value: { readonly state: readonly Uint8Array[]; readonly index: number; readonly term: number } };
}

export type ReadKind = keyof Reads;

/** One read: `{ type: "kv-get", key: "a/b" }`. */
export type ReadQuery = { [K in ReadKind]: { readonly type: K } & Readonly<Reads[K]["args"]> }[ReadKind];

/** The result type of a read. */
export type ReadValue<Q extends ReadQuery> = Reads[Q["type"]]["value"];
