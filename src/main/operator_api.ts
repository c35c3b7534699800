/**
 * `/v1/operator/raft/*` (transfer-leader too), `/v1/operator/autopilot/health` and, on client agents, `/v1/status/*` over the internal RPC: a server calls its
 * own services in process (which forward to the leader or another datacenter as needed), a client agent
 * calls a server of its datacenter.
 */
import { createClient, type Transport } from "@connectrpc/connect";
import { TOKEN_HEADER } from "../rpc/index.ts";
import { Operator, Status } from "../gen/causeway/status/v1/status_pb.ts";
import type { HttpApiDeps, RaftStatus } from "../http/index.ts";
import { CONSUL_RAFT_PROTOCOL_DEFAULT } from "../membership/index.ts";

const TIMEOUT_MS = 10_000;

/** Call options carrying `token` (else the agent's default token) for the serving server's ACL check. */
const withToken = (token: string | undefined, defaultToken: () => string) => ({ timeoutMs: TIMEOUT_MS, headers: { [TOKEN_HEADER]: token ?? defaultToken() } });

export function operatorApiOver(transport: () => Transport, defaultToken: () => string = () => ""): NonNullable<HttpApiDeps["operator"]> {
  const op = () => createClient(Operator, transport());
  const configuration = async (datacenter: string | undefined, token: string | undefined) => {
    const r = await op().raftGetConfiguration({ routing: { datacenter: datacenter ?? "" } }, withToken(token, defaultToken));
    return {
      Servers: r.servers.map((s) => ({
        ID: s.id, Node: s.node, Address: s.address, Leader: s.leader, ProtocolVersion: String(CONSUL_RAFT_PROTOCOL_DEFAULT), Voter: s.voter,
      })),
      Index: Number(r.index),
    };
  };
  return {
    // Consul lets ?stale read any server's configuration; ours is always the leader's, which is never staler.
    raftConfiguration: ({ datacenter, token }) => configuration(datacenter, token),
    async removePeer({ datacenter, id, address, token }) {
      let target = id;
      if (!target) {
        target = (await configuration(datacenter, token)).Servers.find((s) => s.Address === address)?.ID;
        if (!target) throw new Error(`address "${address}" was not found in the Raft configuration`);
      }
      await op().raftRemovePeer({ routing: { datacenter: datacenter ?? "" }, id: target }, withToken(token, defaultToken));
    },
    // The leader bounds its own wait for the new leader (DEFAULT_TRANSFER_TIMEOUT_MS) well inside this call's.
    async transferLeader({ datacenter, id, token }) {
      await op().raftTransferLeader({ routing: { datacenter: datacenter ?? "" }, id: id ?? "" }, withToken(token, defaultToken));
    },
  };
}

/**
 * `/v1/operator/autopilot/health` over the internal RPC: the leader's latest judgement of every server
 * (Consul's Operator.ServerHealth), in the HTTP layer's AutopilotHealthApi shape.
 */
export function autopilotHealthOver(transport: () => Transport, defaultToken: () => string = () => "") {
  return {
    async serverHealth(datacenter: string | undefined, token?: string) {
      const r = await createClient(Operator, transport()).autopilotServerHealth({ routing: { datacenter: datacenter ?? "" } }, withToken(token, defaultToken));
      return {
        healthy: r.healthy,
        failureTolerance: r.failureTolerance,
        servers: r.servers.map((s) => ({
          id: s.id, name: s.name, address: s.address, serfStatus: s.serfStatus, version: s.version, leader: s.leader, voter: s.voter, healthy: s.healthy,
          lastContactMs: s.lastContactUs === undefined ? undefined : Number(s.lastContactUs) / 1000,
          lastTerm: Number(s.lastTerm),
          lastIndex: Number(s.lastIndex),
          stableSinceMs: s.stableSinceMs === undefined ? undefined : Number(s.stableSinceMs),
        })),
      };
    },
  };
}

/** A client agent's /v1/status/leader and /peers: what a server of its datacenter knows. */
export function raftStatusOver(transport: () => Transport): RaftStatus {
  const status = () => createClient(Status, transport());
  return {
    leader: async (datacenter?: string) => (await status().leader(datacenter ? { routing: { datacenter } } : {}, { timeoutMs: TIMEOUT_MS })).address,
    peers: async (datacenter?: string) => (await status().peers(datacenter ? { routing: { datacenter } } : {}, { timeoutMs: TIMEOUT_MS })).addresses,
  };
}
