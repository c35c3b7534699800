/**
 * The HTTP API's Connect CA dependency for this agent: CA configuration and leaf signing through the
 * State service (src/agent/connect_signing.ts), leaves served from the agent cache.
 */
import type { IssuedCert, UnitRandom } from "../connect/index.ts";
import type { HttpApiDeps, StateAccess } from "../http/index.ts";
import type { Clock, Logger } from "../platform/index.ts";
import type { StateCaller } from "../rpc/index.ts";
import {
  caRootsType, configEntryType, createAgentCache, createConnectAccess, getLeaf, leafCertType, type AgentCache, type CacheType, type CaRoots, type CaRootsRequest,
  type ConfigEntryRequest, type LeafRequest, type LeafState,
} from "../agent/index.ts";
import type { ConfigEntry } from "../model/index.ts";

/** The HTTP API's Connect CA dependency (declared by src/http). */
type ConnectCaApi = NonNullable<HttpApiDeps["connectCa"]>;

/** The agent's one cache with its CA roots and leaf types, shared by the HTTP API and the xDS server. */
export interface SharedConnectCache {
  readonly cache: AgentCache;
  readonly roots: CacheType<CaRootsRequest, CaRoots>;
  readonly leaf: CacheType<LeafRequest, IssuedCert, LeafState>;
  /** Config entries by kind and name: the service manager's central config and proxycfg's watches share them. */
  readonly configEntry: CacheType<ConfigEntryRequest, ConfigEntry | null>;
}

/**
 * The HTTP API's Connect CA dependency for this agent: configuration through the State service, and
 * leaves from the agent cache: the leaf type signs through it and follows the CA roots type, a blocking
 * read of the roots through the State service. `shared` hands the same cache and types to the xDS
 * server, so a service's leaf is signed once per agent (as Consul's one agent cache does). `close`
 * stops the cache's renewals and refreshes; it owns the cache.
 */
export function connectCaApiOver(
  caller: StateCaller,
  state: StateAccess,
  o: {
    readonly clock: Clock; readonly rng: UnitRandom; readonly logger: Logger; readonly datacenter: string;
    /** The agent's default token now: what signing and CA configuration use when no token is given. */
    readonly defaultToken?: () => string;
  },
): ConnectCaApi & { readonly shared: SharedConnectCache; close(): void } {
  const access = createConnectAccess(caller, {
    datacenter: o.datacenter,
    trustDomain: async () => (await state.read({ type: "ca-roots" }, { datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0 })).value.trustDomain,
  });
  const cache = createAgentCache({ clock: o.clock, rng: o.rng, logger: o.logger });
  const roots = caRootsType(async (req, { minIndex, maxWaitMs }) => {
    const r = await state.read({ type: "ca-roots" }, { datacenter: req.datacenter, consistency: "default", minIndex, maxWaitMs });
    return { value: r.value, index: r.meta.index };
  });
  const tokenOr = (token: string | undefined) => token || o.defaultToken?.() || "";
  const leaf = leafCertType({ cache, roots, clock: o.clock, rng: o.rng, sign: (req, token) => access.signLeaf(req.service, undefined, tokenOr(token)) });
  return {
    setConfiguration: (config, datacenter, token) => access.setConfiguration(config, datacenter, tokenOr(token)),
    leaf: (service, options) => getLeaf(cache, leaf, service, options),
    shared: { cache, roots, leaf, configEntry: configEntryType(state) },
    close: () => cache.close(),
  };
}
