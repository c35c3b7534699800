/**
 * The agent's ACL tokens at run time (Consul 1.8 agent/token.Store): `acl.tokens.{default, agent,
 * agent_master, replication}` from the config, replaceable through `PUT /v1/agent/token/<name>`. With
 * `acl.enable_token_persistence` a token set through the API is written to `<data_dir>/acl-tokens.json`
 * (Consul's file and keys) before it takes effect, and at start a persisted token takes precedence over
 * the config's, as in Consul's loadTokens. `agent` falls back to `default` when empty.
 */
import { join } from "node:path";
import { readFileIfExists, writeFileDurably, type Logger } from "../platform/index.ts";
import type { AclTokens } from "./acl_config.ts";
import type { RuntimeConfig } from "./config.ts";

export type AgentTokenValues = Pick<AclTokens, "default" | "agent" | "agentMaster" | "replication">;

/** Keys of acl-tokens.json (Consul's persistedTokens). */
const FILE_KEYS: Readonly<Record<keyof AgentTokenValues, string>> = { default: "default", agent: "agent", agentMaster: "agent_master", replication: "replication" };

export interface AgentTokenFile {
  /** The file's bytes, or undefined when there is none. */
  read(): Uint8Array | undefined;
  /** Replaces the file atomically and durably, readable by the owner only; throws on failure. */
  write(text: string): void;
}

export interface AgentTokens {
  /** For requests that carry no token ("" is the anonymous token). */
  default(): string;
  /** The agent's own token (anti-entropy of the node, coordinates): `agent`, else `default`. */
  agent(): string;
  agentMaster(): string;
  replication(): string;
  /** Sets one token; persisted first when persistence is on (a failed write changes nothing and throws). */
  set(name: keyof AgentTokenValues, secret: string): void;
  /**
   * The config's tokens again (a reload, Consul's token.Store.Load): each replaces the running one unless
   * a token set through the API was persisted for that name, which still wins.
   */
  reloadConfigured(configured: AgentTokenValues): void;
}

/**
 * The tokens from `configured`, with what `file` holds on top when persistence is on; a file that
 * cannot be parsed is reported through `warn` and ignored.
 */
export function createAgentTokens(configured: AgentTokenValues, file: AgentTokenFile | undefined, warn: (message: string) => void): AgentTokens {
  const values: Record<keyof AgentTokenValues, string> = { default: configured.default, agent: configured.agent, agentMaster: configured.agentMaster, replication: configured.replication };
  /** Only the tokens set through the API are written, as Consul persists only those. */
  const persisted: Partial<Record<keyof AgentTokenValues, string>> = {};
  if (file) {
    const bytes = file.read();
    if (bytes) {
      try {
        const doc = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
        if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new Error("not a JSON object");
        for (const [name, key] of Object.entries(FILE_KEYS) as [keyof AgentTokenValues, string][]) {
          const v = (doc as Record<string, unknown>)[key];
          if (typeof v === "string" && v !== "") values[name] = persisted[name] = v;
        }
      } catch (err) {
        warn(`acl-tokens.json: ignoring the persisted tokens: ${(err as Error).message}`);
      }
    }
  }
  return {
    default: () => values.default,
    agent: () => values.agent || values.default,
    agentMaster: () => values.agentMaster,
    replication: () => values.replication,
    set(name, secret) {
      if (file) {
        const next = { ...persisted, [name]: secret };
        file.write(JSON.stringify(Object.fromEntries(Object.entries(next).map(([k, v]) => [FILE_KEYS[k as keyof AgentTokenValues], v]))));
        persisted[name] = secret;
      }
      values[name] = secret;
    },
    reloadConfigured(configured) {
      for (const name of Object.keys(FILE_KEYS) as (keyof AgentTokenValues)[]) {
        if (persisted[name] === undefined) values[name] = configured[name];
      }
    },
  };
}

/** The agent's tokens from its config, persisted in `dataDir` when `acl.enable_token_persistence` is on (not in -dev, which keeps nothing). */
export function agentTokensOf(config: Pick<RuntimeConfig, "acl" | "dev">, dataDir: string, logger: Logger): AgentTokens {
  const path = join(dataDir, "acl-tokens.json");
  const file: AgentTokenFile | undefined = config.acl.enableTokenPersistence && !config.dev
    ? { read: () => readFileIfExists(path), write: (text) => writeFileDurably(path, text, 0o600) }
    : undefined;
  return createAgentTokens(config.acl.tokens, file, (message) => logger.warn(message, { file: path }));
}
