/**
 * A secondary datacenter's way to tokens it does not hold (Consul 1.8's ACLResolver on a server outside
 * the ACL datacenter): an `acl-token-resolve` read in the primary, made with the token itself (a token
 * may always resolve itself), through this server's StateCaller (forwarded over the WAN or the mesh
 * gateways like any cross-datacenter read). The primary's "ACL not found" is a definite answer; any
 * other failure is an outage, which the resolver's `down_policy` handles. Cached for `acl.token_ttl`.
 */
import { ConnectError } from "@connectrpc/connect";
import { createTokenResolver, type ResolvedToken, type TokenResolver } from "../acl/index.ts";
import type { ReadQuery } from "../model/index.ts";
import type { Clock } from "../platform/index.ts";
import { decodeWire, encodeWire, type StateCaller } from "../rpc/index.ts";

export interface PrimaryTokenResolverOptions {
  /** The server's StateCaller, once it exists (undefined: not running yet, an outage). */
  readonly caller: () => StateCaller | undefined;
  readonly primaryDatacenter: string;
  readonly datacenter: string;
  readonly nodeName: string;
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly defaultPolicy: "allow" | "deny";
  readonly downPolicy: "allow" | "deny" | "extend-cache" | "async-cache";
}

export function primaryTokenResolver(o: PrimaryTokenResolverOptions): TokenResolver {
  return createTokenResolver({
    async fetch(secret) {
      const caller = o.caller();
      if (!caller) throw new Error("this server's RPC is not running yet");
      try {
        const out = await caller.query(encodeWire({ type: "acl-token-resolve", secret } satisfies ReadQuery), { datacenter: o.primaryDatacenter, token: secret });
        return decodeWire<ResolvedToken | null>(out.result);
      } catch (err) {
        if (err instanceof ConnectError && err.rawMessage === "ACL not found") return null;
        throw err;
      }
    },
    now: () => o.clock.monotonic(),
    ttlMs: o.ttlMs,
    datacenter: o.datacenter,
    nodeName: o.nodeName,
    defaultPolicy: o.defaultPolicy,
    downPolicy: o.downPolicy,
    // The secret is already chosen by the caller (acl_enforcement.ts): no defaults, no agent_master here.
    defaultToken: () => "",
    agentMasterToken: () => "",
  });
}
