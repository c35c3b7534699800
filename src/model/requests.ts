/**
 * Catalog write requests in Consul's shape (agent/structs RegisterRequest and DeregisterRequest). The
 * HTTP API decodes them from `/v1/catalog/register|deregister`, the local agent's anti-entropy builds
 * them, and the state store applies them through Raft.
 */
import type { HealthCheck, NodeService, RaftIndex } from "./catalog.ts";

/** A stored type before the state store stamps it with Raft indexes. */
export type Unindexed<T extends RaftIndex> = Omit<T, "CreateIndex" | "ModifyIndex">;

export interface RegisterRequest {
  readonly Datacenter?: string;
  /** The node's UUID, "" when unknown. */
  readonly ID?: string;
  readonly Node: string;
  readonly Address: string;
  readonly TaggedAddresses?: Readonly<Record<string, string>>;
  readonly NodeMeta?: Readonly<Record<string, string>>;
  readonly Service?: Unindexed<NodeService>;
  readonly Check?: Unindexed<HealthCheck>;
  readonly Checks?: readonly Unindexed<HealthCheck>[];
  /** Leave the node's own fields (address, meta) as they are; anti-entropy sets it when only a service changed. */
  readonly SkipNodeUpdate?: boolean;
}

/** Removes a whole node (no ServiceID and no CheckID), one service with its checks, or one check. */
export interface DeregisterRequest {
  readonly Datacenter?: string;
  readonly Node: string;
  readonly ServiceID?: string;
  readonly CheckID?: string;
}
