/**
 * The agent's `acl` block (Consul 1.8's names; `initial_management` and `agent_recovery` are accepted as
 * the newer aliases of `tokens.master` and `tokens.agent_master`), and the legacy flat `acl_*` keys
 * 1.8 still reads. config.ts parses them with `parseAclBlock` / `parseLegacyAclKey`; no I/O here.
 */
import { nonNegativeDurationMs as durationMs, ownEntry } from "../lib/index.ts";

export type AclDefaultPolicy = "allow" | "deny";
export type AclDownPolicy = "allow" | "deny" | "extend-cache" | "async-cache";

export interface AclTokens {
  /** `tokens.master`: made the global-management token by the primary's leader (uses up bootstrap). */
  readonly master: string;
  /** `tokens.agent`: the agent's own token for anti-entropy (falls back to `default`). */
  readonly agent: string;
  /** `tokens.agent_master`: a local-only token with write on this agent. */
  readonly agentMaster: string;
  /** `tokens.replication`: what a secondary's leader replicates with. */
  readonly replication: string;
  /** `tokens.default`: for requests that carry no token ("" is the anonymous token). */
  readonly default: string;
}

export interface AclSettings {
  readonly enabled: boolean;
  readonly defaultPolicy: AclDefaultPolicy;
  readonly downPolicy: AclDownPolicy;
  readonly enableTokenPersistence: boolean;
  readonly enableKeyListPolicy: boolean;
  readonly enableTokenReplication: boolean;
  /** Cache times of a non-authoritative resolver, ms (default 30 s each). */
  readonly tokenTtlMs: number;
  readonly policyTtlMs: number;
  readonly roleTtlMs: number;
  readonly tokens: AclTokens;
}

export const DEFAULT_ACL: AclSettings = {
  enabled: false, defaultPolicy: "allow", downPolicy: "extend-cache", enableTokenPersistence: false, enableKeyListPolicy: false, enableTokenReplication: false,
  tokenTtlMs: 30_000, policyTtlMs: 30_000, roleTtlMs: 30_000, tokens: { master: "", agent: "", agentMaster: "", replication: "", default: "" },
};

/** What one source sets: a partial block, tokens merged key by key. */
export type AclSource = Partial<Omit<AclSettings, "tokens">> & { tokens?: Partial<AclTokens> };

const BOOLS: Readonly<Record<string, keyof AclSettings>> = {
  enabled: "enabled", enable_token_persistence: "enableTokenPersistence", enable_key_list_policy: "enableKeyListPolicy", enable_token_replication: "enableTokenReplication",
};
const DURATIONS: Readonly<Record<string, keyof AclSettings>> = { token_ttl: "tokenTtlMs", policy_ttl: "policyTtlMs", role_ttl: "roleTtlMs" };
const TOKENS: Readonly<Record<string, keyof AclTokens>> = {
  master: "master", initial_management: "master", agent: "agent", agent_master: "agentMaster", agent_recovery: "agentMaster", replication: "replication", default: "default",
};
const DEFAULT_POLICIES: readonly string[] = ["allow", "deny"];
const DOWN_POLICIES: readonly string[] = ["allow", "deny", "extend-cache", "async-cache"];

/** The settings of one `acl` block, or a message naming the key (`acl.` in front) that is wrong. */
export function parseAclBlock(block: Readonly<Record<string, unknown>>): AclSource | string {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(block)) {
    const name = `acl.${key}`;
    const bool = ownEntry(BOOLS, key);
    const duration = ownEntry(DURATIONS, key);
    if (bool) {
      if (typeof v !== "boolean") return `${name} must be true or false, got ${JSON.stringify(v)}`;
      out[bool] = v;
    } else if (duration) {
      const ms = typeof v === "string" ? durationMs(v) : undefined;
      if (ms === undefined) return `${name} must be a duration such as "30s", got ${JSON.stringify(v)}`;
      out[duration] = ms;
    } else if (key === "default_policy" || key === "down_policy") {
      const allowed = key === "default_policy" ? DEFAULT_POLICIES : DOWN_POLICIES;
      if (typeof v !== "string" || !allowed.includes(v)) return `${name} must be one of ${allowed.map((x) => `"${x}"`).join(", ")}, got ${JSON.stringify(v)}`;
      out[key === "default_policy" ? "defaultPolicy" : "downPolicy"] = v;
    } else if (key === "tokens") {
      if (typeof v !== "object" || v === null || Array.isArray(v)) return `${name} must be an object`;
      const tokens: Record<string, string> = {};
      for (const [tk, tv] of Object.entries(v)) {
        const field = ownEntry(TOKENS, tk);
        if (!field) return `invalid config key ${name}.${tk}`;
        if (typeof tv !== "string") return `${name}.${tk} must be a string`;
        if (tokens[field] !== undefined && tokens[field] !== tv) return `${name}.${tk} and its alias are both set, to different tokens`;
        tokens[field] = tv;
      }
      out.tokens = tokens;
    } else return `invalid config key ${name}`;
  }
  return out as AclSource;
}

/** The legacy flat keys 1.8 still reads, by name, as what they set (`acl_datacenter` also turns ACLs on). */
const LEGACY: Readonly<Record<string, (v: string) => AclSource | string>> = {
  acl_default_policy: (v) => (DEFAULT_POLICIES.includes(v) ? { defaultPolicy: v as AclDefaultPolicy } : `acl_default_policy must be "allow" or "deny", got ${JSON.stringify(v)}`),
  acl_down_policy: (v) => (DOWN_POLICIES.includes(v) ? { downPolicy: v as AclDownPolicy } : `acl_down_policy must be one of ${DOWN_POLICIES.join(", ")}, got ${JSON.stringify(v)}`),
  acl_master_token: (v) => ({ tokens: { master: v } }),
  acl_agent_token: (v) => ({ tokens: { agent: v } }),
  acl_agent_master_token: (v) => ({ tokens: { agentMaster: v } }),
  acl_token: (v) => ({ tokens: { default: v } }),
  acl_replication_token: (v) => ({ tokens: { replication: v } }),
  acl_ttl: (v) => {
    const ms = durationMs(v);
    return ms === undefined ? `acl_ttl must be a duration such as "30s", got ${JSON.stringify(v)}` : { tokenTtlMs: ms, policyTtlMs: ms, roleTtlMs: ms };
  },
};

/** Whether `key` is a legacy flat ACL key (`acl_datacenter` is handled by config.ts: it is also primary_datacenter). */
export const isLegacyAclKey = (key: string): boolean => Object.hasOwn(LEGACY, key);

/** What legacy key `key` sets to `v`, or a message naming the key that is unknown or wrong. */
export function parseLegacyAclKey(key: string, v: unknown): AclSource | string {
  const parse = ownEntry(LEGACY, key);
  if (!parse) return `invalid config key ${key}`;
  if (typeof v !== "string") return `${key} must be a string, got ${JSON.stringify(v)}`;
  return parse(v);
}

/** `over` on top of `base`, tokens key by key. */
export function mergeAcl(base: AclSettings, over: AclSource | undefined): AclSettings {
  if (!over) return base;
  return { ...base, ...over, tokens: { ...base.tokens, ...over.tokens } };
}
