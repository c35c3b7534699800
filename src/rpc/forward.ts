/**
 * Request routing of the internal RPC (Consul's `agent/consul/rpc.go` forward): a request for another
 * datacenter goes to a server of that datacenter; a write (or a read that must be consistent) goes to
 * the leader of this one; anything else is served here.
 *
 * A request forwarded to the leader carries a header; a server that receives such a request and is not
 * the leader (leadership moved meanwhile) answers Unavailable instead of forwarding again, so requests
 * never loop.
 */
import { Code, ConnectError, type HandlerContext, type Transport } from "@connectrpc/connect";
import type { ConsensusStatus } from "../consensus/index.ts";
import type { DatacenterMap } from "../model/index.ts";
import type { ConfChange, ConfState } from "../raft/index.ts";
import { abortable } from "./abort.ts";
import type { AutopilotHealthSource } from "./autopilot.ts";
import type { RpcPool } from "./pool.ts";
import type { RpcMetrics } from "./rpc_metrics.ts";

export const FORWARDED_HEADER = "causeway-forwarded-to-leader";

/** Consul's structs.ErrNoDCPath: the answer for a datacenter no server is known in. */
export const NO_PATH_TO_DATACENTER = "No path to datacenter";

/** The local server's view of Raft, as RPC services need it. */
export interface RaftView {
  status(): ConsensusStatus;
  changeMembership(cc: ConfChange): Promise<ConfState>;
}

/** Where the servers of this datacenter are: Raft ID to node name and server-port address. */
export interface ServerDirectory {
  lookup(raftId: string): { readonly node: string; readonly address: string } | undefined;
}

export interface RpcContext {
  readonly datacenter: string;
  readonly node: string;
  readonly raft: RaftView;
  readonly servers: ServerDirectory;
  readonly pool: RpcPool;
  /**
   * Datacenters known from the WAN pool, nearest first; throws with a message when unknown. When given,
   * a request for any other datacenter fails with NO_PATH_TO_DATACENTER before the pool is touched.
   */
  readonly datacenters?: () => readonly string[];
  /** Servers' WAN coordinates by datacenter, from the WAN pool; absent: Status.DatacenterMaps answers Unavailable. */
  readonly datacenterMaps?: () => readonly DatacenterMap[];
  /** Autopilot's server health, read on the leader; absent: the Operator service answers Unavailable. */
  readonly autopilot?: AutopilotHealthSource;
  /**
   * Consul's RPCHoldTimeout: while no leader is known, waits (up to about 7 s, re-checking with jitter)
   * for one before a request that needs it fails with "No cluster leader"; resolves either way. Absent:
   * such requests fail at once.
   */
  readonly holdForLeader?: () => Promise<void>;
  /** Where cross-datacenter forwards and queries are counted (rpc_metrics.ts); absent: not counted. */
  readonly metrics?: RpcMetrics;
  /**
   * With ACLs: throws ConnectError (PermissionDenied "Permission denied" or "ACL not found") unless
   * `token` has `access` on the operator resource. The Operator service asks it before serving a call.
   */
  readonly requireOperator?: (token: string, access: "read" | "write") => Promise<void>;
}

/** Consul's default rpc_hold_timeout. */
export const RPC_HOLD_TIMEOUT_MS = 7_000;

/** Whether `dc` is a datacenter this server can route to (names compared exactly, as Consul's router does). */
function knownDatacenter(ctx: RpcContext, dc: string): boolean {
  if (!ctx.datacenters) return true;
  try {
    return ctx.datacenters().includes(dc);
  } catch {
    return false;
  }
}

export type RoutingPolicy = "local" | "leader";

/**
 * Serves a request here or forwards it. `remote` makes the same call on another server through the
 * given transport, passing `headers` on. `call` is the incoming RPC, or undefined for a request that
 * starts in this process (the local HTTP API), which has never been forwarded. A datacenter that is not
 * known fails with NotFound "No path to datacenter" (Consul's forwardDC), leaving the pool untouched.
 * `signal` cuts the wait for a leader short (an AbortError); `local` and `remote` honour it themselves.
 */
export async function route<T>(
  ctx: RpcContext,
  datacenter: string | undefined,
  policy: RoutingPolicy,
  call: HandlerContext | undefined,
  local: () => T | Promise<T>,
  remote: (transport: Transport, headers: Headers) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const dc = datacenter || ctx.datacenter;
  if (dc !== ctx.datacenter) {
    if (!knownDatacenter(ctx, dc)) throw new ConnectError(NO_PATH_TO_DATACENTER, Code.NotFound);
    ctx.metrics?.crossDc(dc).add();
    return remote(ctx.pool.transport({ datacenter: dc }), new Headers());
  }
  if (policy === "local") return local();
  let status = ctx.raft.status();
  if (status.role === "Leader") return local();
  if (call?.requestHeader.get(FORWARDED_HEADER)) {
    throw new ConnectError(`${ctx.node} is not the leader (leadership moved while forwarding)`, Code.Unavailable);
  }
  let leader = status.leader ? ctx.servers.lookup(status.leader) : undefined;
  if (!leader && ctx.holdForLeader) {
    // An election in progress (a server just started): hold the request as Consul does, then look again.
    await abortable(ctx.holdForLeader(), signal);
    status = ctx.raft.status();
    if (status.role === "Leader") return local();
    leader = status.leader ? ctx.servers.lookup(status.leader) : undefined;
  }
  if (!leader) throw new ConnectError("No cluster leader", Code.Unavailable);
  return remote(ctx.pool.transport({ datacenter: dc, node: leader.node }), new Headers({ [FORWARDED_HEADER]: "1" }));
}
