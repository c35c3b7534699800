/**
 * Watch topic names. A write fires the topics of what it changed; a query watches the topics of what
 * it read. Index-table entries are topics too ("index:nodes", "index:service.web"), so a query that
 * reports an index entry can watch exactly that entry. Name arguments are already lowercased keys.
 */
export const topic = {
  /** An index-table entry: a table ("nodes", "kvs"...) or "service.<lowercase name>". */
  index: (name: string) => `index:${name}`,
  node: (nodeKey: string) => `node:${nodeKey}`,
  nodeServices: (nodeKey: string) => `node-services:${nodeKey}`,
  nodeChecks: (nodeKey: string) => `node-checks:${nodeKey}`,
  /** Instances a Connect query for this service finds (its proxies and native instances). */
  connect: (serviceKey: string) => `connect:${serviceKey}`,
  serviceChecks: (serviceKey: string) => `service-checks:${serviceKey}`,
  status: (status: string) => `status:${status}`,
  session: (sessionKey: string) => `session:${sessionKey}`,
  nodeSessions: (nodeKey: string) => `node-sessions:${nodeKey}`,
  /** One config entry, by its table key (configEntryKey). */
  configEntry: (entryKey: string) => `config-entry:${entryKey}`,
  /** One intention, by lowercase ID. */
  intention: (idKey: string) => `intention:${idKey}`,
} as const;

/** Consul's index-table entry names. */
export const INDEX = {
  nodes: "nodes",
  services: "services",
  checks: "checks",
  sessions: "sessions",
  kvs: "kvs",
  tombstones: "tombstones",
  /** Consul's configTableName. */
  configEntries: "config-entries",
  /** Consul's intentionsTableName. */
  intentions: "connect-intentions",
  /** Consul's caRootTableName. */
  caRoots: "connect-ca-roots",
  /** Consul's caConfigTableName. */
  caConfig: "connect-ca-config",
  /** Consul's prepared-queries table. */
  preparedQueries: "prepared-queries",
  /** Consul's autopilot-config table. */
  autopilotConfig: "autopilot-config",
  /** Consul's coordinates table. */
  coordinates: "coordinates",
  /** Consul's tableFederationStates. */
  federationStates: "federation-states",
  /** Consul's ACL tables. */
  aclTokens: "acl-tokens",
  aclPolicies: "acl-policies",
  aclRoles: "acl-roles",
  aclAuthMethods: "acl-auth-methods",
  aclBindingRules: "acl-binding-rules",
  /** The Raft index at which ACLs were bootstrapped (Consul's "acl-token-bootstrap" entry): set, bootstrap is used up. */
  aclBootstrap: "acl-token-bootstrap",
  /** Raft index of the last deregistration of a service's last instance (Consul's service_last_extinction). */
  serviceExtinction: "service_last_extinction",
  /** Per-service entry: bumped by any change to the service's instances, their checks or their nodes. */
  service: (serviceKey: string) => `service.${serviceKey}`,
  /** Per-kind entry ("typical" for ""): bumped by any change to services of that kind, their checks or nodes. */
  serviceKind: (kind: string) => `service_kind.${kind || "typical"}`,
} as const;
