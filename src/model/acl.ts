/**
 * Consul 1.8's ACL objects in their wire shape (`agent/structs/acl.go`): tokens, policies, roles, auth
 * methods and binding rules, and the links between them. Links are stored by ID; their `Name` is filled
 * in at read time and links to deleted objects are dropped then.
 */

/** A link to a policy or role: exactly `{ID, Name}` on the wire. */
export interface AclLink {
  readonly ID: string;
  readonly Name: string;
}

/** A service identity: `service "<name>"` write (and its sidecar), read on everything else; optionally scoped to datacenters. */
export interface AclServiceIdentity {
  readonly ServiceName: string;
  readonly Datacenters?: readonly string[];
}

/** A node identity (1.8.1): `node "<name>"` write in one datacenter. */
export interface AclNodeIdentity {
  readonly NodeName: string;
  readonly Datacenter: string;
}

export interface AclToken {
  readonly AccessorID: string;
  readonly SecretID: string;
  readonly Description: string;
  readonly Policies?: readonly AclLink[];
  readonly Roles?: readonly AclLink[];
  readonly ServiceIdentities?: readonly AclServiceIdentity[];
  readonly NodeIdentities?: readonly AclNodeIdentity[];
  /** Legacy tokens only: their rules, in the legacy syntax. */
  readonly Rules?: string;
  readonly Local: boolean;
  readonly AuthMethod?: string;
  /** RFC 3339; absent: never expires. */
  readonly ExpirationTime?: string;
  /** RFC 3339 with nanoseconds, as Go writes time.Time. */
  readonly CreateTime: string;
  /** Base64 of the token's hash (blake2b-256 of its fields, as Consul's SetHash). */
  readonly Hash: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/**
 * A token as the state stores it: the wire token plus its legacy `Type` (Consul's `json:"-"` field:
 * "client" or "management" for tokens made through the legacy API, absent otherwise).
 */
export type AclTokenRecord = AclToken & { readonly Type?: "client" | "management" };

/** `GET /v1/acl/tokens` entries: no SecretID or Rules in 1.8; `Legacy` when the token has Rules. */
export type AclTokenStub = Omit<AclToken, "SecretID" | "Rules"> & { readonly Legacy: boolean };

export interface AclPolicy {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Rules: string;
  /** Non-empty: the policy applies only in these datacenters. */
  readonly Datacenters?: readonly string[];
  readonly Hash: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface AclRole {
  readonly ID: string;
  readonly Name: string;
  readonly Description: string;
  readonly Policies?: readonly AclLink[];
  readonly ServiceIdentities?: readonly AclServiceIdentity[];
  readonly NodeIdentities?: readonly AclNodeIdentity[];
  readonly Hash: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface AclAuthMethod {
  readonly Name: string;
  readonly Type: string;
  readonly DisplayName?: string;
  readonly Description: string;
  readonly MaxTokenTTL?: string;
  readonly TokenLocality?: "local" | "global" | "";
  readonly Config?: Readonly<Record<string, unknown>>;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

export interface AclBindingRule {
  readonly ID: string;
  readonly Description: string;
  readonly AuthMethod: string;
  readonly Selector: string;
  readonly BindType: "service" | "role" | "node";
  readonly BindName: string;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** The built-in global-management policy and anonymous token (agent/structs/acl.go). */
export const GLOBAL_MANAGEMENT_POLICY_ID = "00000000-0000-0000-0000-000000000001";
export const GLOBAL_MANAGEMENT_POLICY_NAME = "global-management";
export const GLOBAL_MANAGEMENT_POLICY_DESCRIPTION = "Builtin Policy that grants unlimited access";
/** The built-in policy's Rules, as Consul stores them (acl.go ACLPolicyGlobalManagement). */
export const GLOBAL_MANAGEMENT_RULES = `
acl = "write"
agent_prefix "" {
	policy = "write"
}
event_prefix "" {
	policy = "write"
}
key_prefix "" {
	policy = "write"
}
keyring = "write"
node_prefix "" {
	policy = "write"
}
operator = "write"
query_prefix "" {
	policy = "write"
}
service_prefix "" {
	policy = "write"
	intentions = "write"
}
session_prefix "" {
	policy = "write"
}`;

export const ANONYMOUS_TOKEN_ACCESSOR_ID = "00000000-0000-0000-0000-000000000002";
export const ANONYMOUS_TOKEN_SECRET = "anonymous";
export const ANONYMOUS_TOKEN_DESCRIPTION = "Anonymous Token";
