/**
 * A client agent's way to the servers (Consul's agent/router for clients): the servers of its own
 * datacenter come from the LAN pool; every call goes to one of them, which serves it or forwards it
 * (to its leader, or to another datacenter). A connection that fails is dropped by the pool, and the
 * next dial picks another server at random.
 */
import { createClient } from "@connectrpc/connect";
import { Status } from "../gen/causeway/status/v1/status_pb.ts";
import { parseServer, type PoolMember } from "../membership/index.ts";
import type { Clock, Logger, Rng } from "../platform/index.ts";
import type { DatacenterMap } from "../model/index.ts";
import { createRemoteStateCaller, createRpcPool, datacenterMapsOf, dialServer, type RpcPool, type ServerDialSettings, type StateCaller } from "../rpc/index.ts";

export interface ClientRpc {
  readonly pool: RpcPool;
  readonly state: StateCaller;
  /** Datacenters as a server of this datacenter knows them, nearest first. */
  datacenters(): Promise<readonly string[]>;
  /** Servers' WAN coordinates by datacenter, as a server of this datacenter knows them (Coordinate.ListDatacenters). */
  datacenterMaps(): Promise<DatacenterMap[]>;
  close(): void;
}

export function startClientRpc(o: {
  datacenter: string;
  dial: ServerDialSettings;
  clock: Clock;
  rng: Rng;
  logger: Logger;
  /** The LAN pool's members now. */
  members: () => readonly PoolMember[];
}): ClientRpc {
  const servers = () =>
    o.members().flatMap((m) => {
      if (m.status !== "alive") return [];
      const s = parseServer({ name: m.name, addr: `${m.addr}:${m.port}`, tags: m.tags, status: m.status });
      return s && s.datacenter === o.datacenter ? [s] : [];
    });
  const pool = createRpcPool({
    clock: o.clock,
    rng: o.rng,
    logger: o.logger,
    dial: (target) => {
      const known = servers().filter((s) => !target.node || s.shortName === target.node);
      if (!known.length) return Promise.reject(new Error(`No known Consul servers in ${o.datacenter}`));
      const pick = known[o.rng.int(known.length)]!;
      // Clients verify servers as server.<dc>.<domain>, the name every server certificate carries.
      return dialServer(o.dial, pick.rpcAddr, { datacenter: o.datacenter }, "rpc");
    },
  });
  const anyServer = () => pool.transport({ datacenter: o.datacenter });
  return {
    pool,
    state: createRemoteStateCaller(anyServer),
    datacenters: async () => (await createClient(Status, anyServer()).datacenters({}, { timeoutMs: 10_000 })).datacenters,
    datacenterMaps: async () => datacenterMapsOf(await createClient(Status, anyServer()).datacenterMaps({}, { timeoutMs: 10_000 })),
    close: () => pool.close(),
  };
}
