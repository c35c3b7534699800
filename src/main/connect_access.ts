/**
 * The Connect CA calls of the State service as the agent makes them: over the server's own StateCaller
 * (served here or forwarded) or a client agent's (asks a server of its datacenter). Values travel in the
 * wire encoding of src/rpc/state_wire.ts; failures reject with the server's own words.
 */
import { ConnectError } from "@connectrpc/connect";
import { spiffeServiceId, type CAConfiguration, type IssuedCert, type UnitRandom } from "../connect/index.ts";
import { createCertificationRequest, generateEcPrivateKey } from "../lib/index.ts";
import type { HttpApiDeps, StateAccess } from "../http/index.ts";
import type { Clock, Logger } from "../platform/index.ts";
import { decodeWire, encodeWire, type StateCaller } from "../rpc/index.ts";
import { caRootsType, createAgentCache, getLeaf, leafCertType } from "../agent/index.ts";

/** Signing and CA configuration, from wherever this agent is. */
export interface ConnectCaAccess {
  /** A new leaf (with its private key) for `service`, signed by a server of `datacenter` (default: this one). */
  signLeaf(service: string, datacenter?: string): Promise<IssuedCert>;
  /** Applies a CA configuration on the leader of `datacenter` (rotating the root when the key changes). */
  setConfiguration(config: CAConfiguration, datacenter?: string): Promise<void>;
}

/** The HTTP API's Connect CA dependency (declared by src/http). */
type ConnectCaApi = NonNullable<HttpApiDeps["connectCa"]>;

function plain(err: unknown): Error {
  if (err instanceof ConnectError) return new Error(err.rawMessage);
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * `trustDomain` says which trust domain the servers sign for now (from the CA roots): the CSR names
 * the service's SPIFFE ID in it. The key pair is made here and never leaves the agent (Consul's
 * agent/cache-types/connect_ca_leaf.go does the same).
 */
export function createConnectAccess(caller: StateCaller, o: { datacenter: string; trustDomain: () => Promise<string> }): ConnectCaAccess {
  return {
    async signLeaf(service, datacenter) {
      try {
        const td = await o.trustDomain();
        if (!td) throw new Error("the CA is not initialised yet");
        const keyPem = await generateEcPrivateKey();
        const csr = await createCertificationRequest({
          keyPem,
          uris: [spiffeServiceId({ trustDomain: td, namespace: "default", datacenter: datacenter ?? o.datacenter, service })],
        });
        const cert = decodeWire<IssuedCert>(await caller.signLeaf(service, csr, datacenter));
        return { ...cert, PrivateKeyPEM: keyPem };
      } catch (err) {
        throw plain(err);
      }
    },
    async setConfiguration(config, datacenter) {
      try {
        await caller.setCAConfiguration(encodeWire(config), datacenter);
      } catch (err) {
        throw plain(err);
      }
    },
  };
}

/**
 * The HTTP API's Connect CA dependency for this agent: configuration through the State service, and
 * leaves from the agent cache: the leaf type signs through it and follows the CA roots type, a blocking
 * read of the roots through the State service. `close` stops the cache's renewals and refreshes.
 */
export function connectCaApiOver(
  caller: StateCaller,
  state: StateAccess,
  o: { readonly clock: Clock; readonly rng: UnitRandom; readonly logger: Logger; readonly datacenter: string },
): ConnectCaApi & { close(): void } {
  const access = createConnectAccess(caller, {
    datacenter: o.datacenter,
    trustDomain: async () => (await state.read({ type: "ca-roots" }, { datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0 })).value.trustDomain,
  });
  const cache = createAgentCache({ clock: o.clock, rng: o.rng, logger: o.logger });
  const roots = caRootsType(async (req, { minIndex, maxWaitMs }) => {
    const r = await state.read({ type: "ca-roots" }, { datacenter: req.datacenter, consistency: "default", minIndex, maxWaitMs });
    return { value: r.value, index: r.meta.index };
  });
  const leaf = leafCertType({ cache, roots, clock: o.clock, rng: o.rng, sign: (req) => access.signLeaf(req.service) });
  return {
    setConfiguration: (config, datacenter) => access.setConfiguration(config, datacenter),
    leaf: (service, options) => getLeaf(cache, leaf, service, options),
    close: () => cache.close(),
  };
}
