/**
 * Envoy's filter-chain selection on `server_names` (source/server/filter_chain_manager_impl.cc
 * findFilterChainForServerName), for listeners whose chains match on nothing else:
 *   1. a chain naming the SNI exactly;
 *   2. else the chain with the longest wildcard `*.suffix` the SNI ends in (`.suffix`, with at least one
 *      character before that dot: `*.example.com` matches `a.example.com` and `a.b.example.com`, not
 *      `example.com`);
 *   3. else the chain without server_names (the catch-all), if any.
 * A connection without SNI can only take the catch-all. Names compare case-insensitively (Envoy
 * lower-cases the requested server name). A server name in two chains, or two catch-all chains, is an
 * error, as in Envoy ("multiple filter chains with overlapping matching rules are defined").
 * Matching costs one map lookup per label of the SNI.
 */
import type { FilterChainConfig, ListenerConfig } from "./config_types.ts";

/** What the matcher needs of a chain. */
export interface ServerNamed {
  readonly serverNames: readonly string[];
}

export interface ChainMatcher<C extends ServerNamed = FilterChainConfig> {
  /** The chain for a connection with this SNI (`undefined` or "" = none); undefined when no chain matches. */
  match(serverName: string | undefined): C | undefined;
}

export type CompiledChains<C extends ServerNamed> = { readonly ok: true; readonly matcher: ChainMatcher<C> } | { readonly ok: false; readonly error: string };

/** Lower-cases ASCII letters only, as absl::AsciiStrToLower does. */
function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
}

/**
 * Builds the lookup structure for `chains` (in the listener's order), or says why they conflict:
 * an empty server name, a name listed twice (in one chain or two), or more than one catch-all chain.
 */
export function compileChains<C extends ServerNamed>(chains: readonly C[]): CompiledChains<C> {
  const exact = new Map<string, C>();
  /** Wildcards keyed by the suffix after `*.` (`*.example.com` -> `example.com`). */
  const wildcard = new Map<string, C>();
  const owner = new Map<string, number>();
  let catchAll: C | undefined;
  let catchAllIndex = -1;
  for (const [i, chain] of chains.entries()) {
    if (chain.serverNames.length === 0) {
      if (catchAll) return { ok: false, error: `filter chains ${catchAllIndex} and ${i} both have no server_names: multiple filter chains with the same matching rules` };
      catchAll = chain;
      catchAllIndex = i;
      continue;
    }
    for (const raw of chain.serverNames) {
      if (raw === "") return { ok: false, error: `filter chain ${i} has an empty server name` };
      const name = asciiLower(raw);
      const prior = owner.get(name);
      if (prior !== undefined) {
        const where = prior === i ? `twice in filter chain ${i}` : `in filter chains ${prior} and ${i}`;
        return { ok: false, error: `server name "${name}" appears ${where}: multiple filter chains with overlapping matching rules` };
      }
      owner.set(name, i);
      if (name.startsWith("*.")) wildcard.set(name.slice(2), chain);
      else exact.set(name, chain);
    }
  }
  const match = (serverName: string | undefined): C | undefined => {
    if (!serverName) return catchAll;
    const name = asciiLower(serverName);
    const hit = exact.get(name);
    if (hit) return hit;
    if (wildcard.size > 0) {
      // Longest suffix first: each dot after the first character, left to right, with a label after it.
      for (let dot = name.indexOf(".", 1); dot !== -1 && dot < name.length - 1; dot = name.indexOf(".", dot + 1)) {
        const w = wildcard.get(name.slice(dot + 1));
        if (w) return w;
      }
    }
    return catchAll;
  };
  return { ok: true, matcher: { match } };
}

const compiled = new WeakMap<ListenerConfig, ChainMatcher>();

/**
 * The matcher of a listener, compiled once per ListenerConfig object (configs are immutable; a new
 * configuration brings new objects). Throws when the chains conflict, which a listener accepted by the
 * configuration store (./xds_config.ts) never does.
 */
export function listenerMatcher(listener: ListenerConfig): ChainMatcher {
  let m = compiled.get(listener);
  if (!m) {
    const c = compileChains(listener.chains);
    if (!c.ok) throw new Error(`listener ${listener.name}: ${c.error}`);
    m = c.matcher;
    compiled.set(listener, m);
  }
  return m;
}
