/**
 * The Connect CA calls of the State service as the agent makes them: over the server's own StateCaller
 * (served there or forwarded) or a client agent's (asks a server of its datacenter). Values travel in
 * the wire encoding of src/rpc/state_wire.ts; failures reject with the server's own words.
 */
import { spiffeServiceId, type CAConfiguration, type IssuedCert } from "../connect/index.ts";
import { createCertificationRequest, generateEcPrivateKey } from "../lib/index.ts";
import { decodeWire, encodeWire, plainRpcError as plain, type StateCaller } from "../rpc/index.ts";

/** Signing and CA configuration, from wherever this agent is. */
export interface ConnectCaAccess {
  /**
   * A new leaf (with its private key) for `service`, signed by a server of `datacenter` (default: this one)
   * for the holder of `token` (undefined: the caller's default), who needs service:write on it.
   */
  signLeaf(service: string, datacenter?: string, token?: string): Promise<IssuedCert>;
  /** Applies a CA configuration on the leader of `datacenter` (rotating the root when the key changes); needs operator:write. */
  setConfiguration(config: CAConfiguration, datacenter?: string, token?: string): Promise<void>;
}

/**
 * `trustDomain` says which trust domain the servers sign for now (from the CA roots): the CSR names
 * the service's SPIFFE ID in it. The key pair is made here and never leaves the agent (Consul's
 * agent/cache-types/connect_ca_leaf.go does the same).
 */
export function createConnectAccess(caller: StateCaller, o: { datacenter: string; trustDomain: () => Promise<string> }): ConnectCaAccess {
  return {
    async signLeaf(service, datacenter, token) {
      try {
        const td = await o.trustDomain();
        if (!td) throw new Error("the CA is not initialised yet");
        const keyPem = await generateEcPrivateKey();
        const csr = await createCertificationRequest({
          keyPem,
          uris: [spiffeServiceId({ trustDomain: td, namespace: "default", datacenter: datacenter ?? o.datacenter, service })],
        });
        const cert = decodeWire<IssuedCert>(await caller.signLeaf(service, csr, datacenter, token));
        return { ...cert, PrivateKeyPEM: keyPem };
      } catch (err) {
        throw plain(err);
      }
    },
    async setConfiguration(config, datacenter, token) {
      try {
        await caller.setCAConfiguration(encodeWire(config), datacenter, token);
      } catch (err) {
        throw plain(err);
      }
    },
  };
}
