/**
 * The servers of this datacenter as this server knows them: Raft ID -> node name and server-port
 * address (for the Raft transport, the RPC pool and /v1/status), what the LAN pool shows of them, and
 * since when each has counted as failed (for the leader's Raft membership decisions).
 */
import type { SeenServer } from "./raft_membership.ts";

export interface ServerInfo {
  readonly node: string;
  readonly address: string;
}

export interface ServerDirectory {
  /** The server with Raft ID `id` (this server included), if its address is known. */
  lookup(id: string): ServerInfo | undefined;
  /** Every known server, this one included. */
  all(): ServerInfo[];
  /** The servers the LAN pool showed last (entries without an ID left out). */
  seen(): readonly SeenServer[];
  /**
   * Raft ID -> monotonic ms since which the server has counted as failed. Filled from gossip here and
   * by the leader for configured servers gossip no longer shows.
   */
  readonly failedSince: Map<string, number>;
  /** Takes in what the LAN pool shows now. An address is learnt from an alive server, or a first sighting. */
  update(seen: readonly SeenServer[], now: number): void;
}

export function createServerDirectory(self: { readonly id: string } & ServerInfo): ServerDirectory {
  const servers = new Map<string, ServerInfo>([[self.id, { node: self.node, address: self.address }]]);
  const failedSince = new Map<string, number>();
  let seen: readonly SeenServer[] = [];
  return {
    lookup: (id) => servers.get(id),
    all: () => [...servers.values()],
    seen: () => seen,
    failedSince,
    update(next, now) {
      seen = next.filter((x) => x.id !== "");
      for (const x of seen) {
        if (x.status === "failed") {
          if (!failedSince.has(x.id)) failedSince.set(x.id, now);
        } else failedSince.delete(x.id);
        if (x.id !== self.id && (x.status === "alive" || !servers.has(x.id))) servers.set(x.id, { node: x.name, address: x.rpcAddr });
      }
    },
  };
}
