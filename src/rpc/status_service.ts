/**
 * The Status and Operator services: server health, Raft state and Raft membership. Status calls are
 * served by the receiving server (forwarded only to reach another datacenter); Operator calls are
 * served by the leader.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import {
  AutopilotServerHealthResponseSchema, AutopilotServerHealthSchema, DatacentersResponseSchema, LeaderResponseSchema, Operator, PeersResponseSchema, PingResponseSchema, RaftGetConfigurationResponseSchema,
  RaftRemovePeerResponseSchema, RaftServerSchema, RaftStatsResponseSchema, RaftTransferLeaderResponseSchema, Status,
} from "../gen/causeway/status/v1/status_pb.ts";
import { datacenterMapsMessage } from "./datacenter_maps.ts";
import { route, type RpcContext } from "./forward.ts";
import { transferLeadership, type LeadershipTransferDeps } from "./leadership_transfer.ts";
import { TOKEN_HEADER } from "./state_service.ts";

/**
 * Registers the Status and Operator services. `leadership` lets Operator.RaftTransferLeader move
 * leadership off this server when it leads; without it that call answers Unimplemented here (a
 * forwarded call is served, or refused, by the leader).
 */
export function registerStatusServices(router: ConnectRouter, ctx: RpcContext, leadership?: LeadershipTransferDeps): void {
  const addressOf = (id: string) => ctx.servers.lookup(id)?.address ?? "";
  /**
   * Operator calls carry the caller's token (TOKEN_HEADER; none is the anonymous token, as for any
   * network call) and pass it on when forwarded; with ACLs the serving server checks it as Consul's
   * Operator endpoints do (operator:read for the configuration and server health, write for changes).
   */
  const tokenOf = (call: HandlerContext) => call.requestHeader.get(TOKEN_HEADER) ?? "";
  const withToken = (headers: Headers, call: HandlerContext) => {
    headers.set(TOKEN_HEADER, tokenOf(call));
    return headers;
  };
  const operator = async <T>(call: HandlerContext, access: "read" | "write", serve: () => T | Promise<T>): Promise<T> => {
    await ctx.requireOperator?.(tokenOf(call), access);
    return serve();
  };
  router.service(Status, {
    ping: (req, call) =>
      route(ctx, req.routing?.datacenter, "local", call, () => create(PingResponseSchema, { node: ctx.node, datacenter: ctx.datacenter }),
        (t, headers) => createClient(Status, t).ping(req, { headers })),
    leader: (req, call) =>
      route(ctx, req.routing?.datacenter, "local", call, () => {
        const leader = ctx.raft.status().leader;
        return create(LeaderResponseSchema, { address: leader ? addressOf(leader) : "" });
      }, (t, headers) => createClient(Status, t).leader(req, { headers })),
    peers: (req, call) =>
      route(ctx, req.routing?.datacenter, "local", call, () =>
        create(PeersResponseSchema, { addresses: ctx.raft.status().config.voters.map(addressOf).filter((a) => a !== "") }),
        (t, headers) => createClient(Status, t).peers(req, { headers })),
    raftStats: (req, call) =>
      route(ctx, req.routing?.datacenter, "local", call, () => {
        const s = ctx.raft.status();
        return create(RaftStatsResponseSchema, {
          node: ctx.node,
          state: s.role,
          term: BigInt(s.term),
          commitIndex: BigInt(s.commit),
          appliedIndex: BigInt(s.applied),
          lastLogIndex: BigInt(s.lastIndex),
          leader: s.leader ? addressOf(s.leader) : "",
          numPeers: s.config.voters.length,
        });
      }, (t, headers) => createClient(Status, t).raftStats(req, { headers })),
    datacenters: () => {
      if (!ctx.datacenters) throw new ConnectError("this server does not know the WAN pool", Code.Unavailable);
      return create(DatacentersResponseSchema, { datacenters: [...ctx.datacenters()] });
    },
    datacenterMaps: () => {
      if (!ctx.datacenterMaps) throw new ConnectError("this server does not know the WAN pool", Code.Unavailable);
      return datacenterMapsMessage(ctx.datacenterMaps());
    },
  });
  router.service(Operator, {
    raftGetConfiguration: (req, call) =>
      route(ctx, req.routing?.datacenter, "leader", call, () => operator(call, "read", () => {
        const s = ctx.raft.status();
        const ids = [...s.config.voters, ...s.config.learners].sort();
        return create(RaftGetConfigurationResponseSchema, {
          index: BigInt(s.commit),
          servers: ids.map((id) =>
            create(RaftServerSchema, {
              id,
              node: ctx.servers.lookup(id)?.node ?? "",
              address: addressOf(id),
              leader: id === s.leader,
              voter: s.config.voters.includes(id),
            }),
          ),
        });
      }), (t, headers) => createClient(Operator, t).raftGetConfiguration(req, { headers: withToken(headers, call) })),
    raftRemovePeer: (req, call) =>
      route(ctx, req.routing?.datacenter, "leader", call, () => operator(call, "write", async () => {
        const config = ctx.raft.status().config;
        if (!req.id) throw new ConnectError("Must specify the ID of the server to remove", Code.InvalidArgument);
        if (![...config.voters, ...config.learners].includes(req.id)) {
          throw new ConnectError(`id "${req.id}" was not found in the Raft configuration`, Code.NotFound);
        }
        await ctx.raft.changeMembership({ transition: "Auto", changes: [{ type: "RemoveNode", nodeId: req.id }] });
        return create(RaftRemovePeerResponseSchema, {});
      }), (t, headers) => createClient(Operator, t).raftRemovePeer(req, { headers: withToken(headers, call) })),
    raftTransferLeader: (req, call) =>
      route(ctx, req.routing?.datacenter, "leader", call, () => operator(call, "write", async () => {
        if (!leadership) throw new ConnectError("leadership transfer is not available on this server", Code.Unimplemented);
        return create(RaftTransferLeaderResponseSchema, { leader: await transferLeadership(ctx.raft, leadership, req.id, call.signal) });
      }), (t, headers) => createClient(Operator, t).raftTransferLeader(req, { headers: withToken(headers, call), signal: call.signal }), call.signal),
    autopilotServerHealth: (req, call) =>
      route(ctx, req.routing?.datacenter, "leader", call, () => operator(call, "read", () => {
        if (!ctx.autopilot) throw new ConnectError("autopilot is not running on this server", Code.Unavailable);
        const h = ctx.autopilot.health();
        return create(AutopilotServerHealthResponseSchema, {
          healthy: h?.healthy ?? false,
          failureTolerance: h?.failureTolerance ?? 0,
          servers: (h?.servers ?? []).map((s) =>
            create(AutopilotServerHealthSchema, {
              id: s.id, name: s.name, address: s.address, serfStatus: s.serfStatus, version: s.version, leader: s.leader, voter: s.voter,
              healthy: s.healthy, lastTerm: BigInt(s.lastTerm), lastIndex: BigInt(s.lastIndex),
              lastContactUs: s.lastContactMs === undefined ? undefined : BigInt(Math.round(s.lastContactMs * 1000)),
              stableSinceMs: s.stableSinceMs === undefined ? undefined : BigInt(Math.round(s.stableSinceMs)),
            }),
          ),
        });
      }), (t, headers) => createClient(Operator, t).autopilotServerHealth(req, { headers: withToken(headers, call) })),
  });
}
